// The LLM endpoint client against a fake OpenAI-compatible server on 127.0.0.1
// (fake_llm_server.py, started and stopped here by its pid): bin distributions from
// log-probabilities, the text-only fallback, the response cache, and every fault ending in a
// failed (deferred) answer with a clear message, never an exception and never a lost answer.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/llm/llm_endpoint.hpp"

extern char** environ;

using namespace gpuforecast;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

class FakeServer {
 public:
  FakeServer() {
    m_dir = fs::temp_directory_path() / fmt_dir();
    fs::create_directories(m_dir);
    const auto port_file = m_dir / "port";
    const std::string script = std::string(GPUFORECAST_SOURCE_DIR) + "/tests/llm/fake_llm_server.py";
    std::string python = "python3", pf = port_file.string();
    char* argv[] = {python.data(), const_cast<char*>(script.c_str()), pf.data(), nullptr};
    REQUIRE(posix_spawnp(&m_pid, "python3", nullptr, nullptr, argv, environ) == 0);
    for (int i = 0; i < 200 && !fs::exists(port_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    INFO("the fake server did not write its port to " << port_file);
    REQUIRE(fs::exists(port_file));
    std::ifstream(port_file) >> m_port;
  }
  ~FakeServer() {
    stop();
    fs::remove_all(m_dir);
  }
  void stop() {
    if (m_pid > 0) {
      kill(m_pid, SIGKILL);
      waitpid(m_pid, nullptr, 0);
      m_pid = 0;
    }
  }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  [[nodiscard]] fs::path dir() const { return m_dir; }

 private:
  static std::string fmt_dir() { return "gpuforecast-llm-test-" + std::to_string(getpid()); }
  pid_t m_pid = 0;
  int m_port = 0;
  fs::path m_dir;
};

// A port nobody listens on: bound, read, closed.
int closed_port() {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

LlmEndpointOptions options(const std::string& url) {
  LlmEndpointOptions o;
  o.base_url = url;
  o.model = "fake";
  o.api_key = "sk-secret-test-key";
  o.timeout_seconds = 1;
  o.retries = 2;
  o.backoff_seconds = 0.05;
  o.in_flight = 3;
  return o;
}

}  // namespace

TEST_CASE("answers from log-probabilities are renormalised over the letters A-H") {
  const auto a = parse_llm_answer(
      R"({"choices":[{"logprobs":{"content":[{"token":"C","logprob":-0.5,"top_logprobs":[)"
      R"({"token":"C","logprob":-0.5},{"token":" B","logprob":-1.5},{"token":"The","logprob":-2},{"token":"c","logprob":-9}]}]}}]})");
  REQUIRE(a.status == LlmAnswerStatus::ok);
  CHECK(a.letter == 'C');
  const double c = std::exp(-0.5), b = std::exp(-1.5);
  CHECK(a.probabilities[2] == Approx(c / (b + c)));  // "c" repeats C: counted once
  CHECK(a.probabilities[1] == Approx(b / (b + c)));
  CHECK(a.probabilities[0] == 0);
  const auto t = parse_llm_answer(R"({"choices":[{"message":{"content":" (G) because"}}]})");
  CHECK(t.status == LlmAnswerStatus::text_only);
  CHECK(t.letter == 'G');
  CHECK(t.probabilities[6] == 1);
  CHECK_THAT(parse_llm_answer("{oops").error, Contains("not JSON"));
  CHECK_THAT(parse_llm_answer(R"({"error":{"message":"model not loaded"}})").error, Contains("model not loaded"));
  CHECK_THAT(parse_llm_answer(R"({"choices":[{"message":{"content":"Faster"}}]})").error, Contains("no letter A-H"));
  CHECK(parse_llm_answer(R"({"choices":[]})").status == LlmAnswerStatus::failed);
}

TEST_CASE("options come from the environment and bad ones are named") {
  setenv("GPUFORECAST_LLM_BASE_URL", "http://127.0.0.1:9/v1", 1);
  setenv("GPUFORECAST_LLM_MODEL", "m", 1);
  const auto o = llm_options_from_environment();
  CHECK(o.base_url == "http://127.0.0.1:9/v1");
  CHECK(o.model == "m");
  unsetenv("GPUFORECAST_LLM_BASE_URL");
  unsetenv("GPUFORECAST_LLM_MODEL");
  CHECK_THROWS_WITH(LlmEndpoint(LlmEndpointOptions{}), Contains("GPUFORECAST_LLM_BASE_URL"));
  LlmEndpointOptions no_model;
  no_model.base_url = "http://127.0.0.1:9";
  CHECK_THROWS_WITH(LlmEndpoint(no_model), Contains("GPUFORECAST_LLM_MODEL"));
}

TEST_CASE("the client answers, falls back to text, caches, and defers every fault with a reason") {
  FakeServer server;
  auto o = options(server.url());
  o.cache_dir = server.dir() / "cache";
  LlmEndpoint llm(o);
  const std::vector<std::string> prompts{"letter=C", "text=E",     "malformed", "status=500", "status=429",
                                         "flaky=2",  "noletter",   "letter=H",  "slow=3"};
  const auto a = llm.ask(prompts);
  REQUIRE(a.size() == prompts.size());
  CHECK(a[0].status == LlmAnswerStatus::ok);
  CHECK(a[0].letter == 'C');
  CHECK(a[0].probabilities[2] == Approx(0.7 / 0.95));
  CHECK(a[1].status == LlmAnswerStatus::text_only);
  CHECK(a[1].letter == 'E');
  CHECK(a[2].status == LlmAnswerStatus::failed);
  CHECK_THAT(a[2].error, Contains("not JSON"));
  CHECK(a[3].status == LlmAnswerStatus::failed);
  CHECK_THAT(a[3].error, Contains("HTTP 500"));
  CHECK(a[3].attempts == 3);  // retried
  CHECK_THAT(a[4].error, Contains("HTTP 429"));
  CHECK(a[5].status == LlmAnswerStatus::ok);  // two 429s, then an answer
  CHECK(a[5].attempts == 3);
  CHECK_THAT(a[6].error, Contains("no letter"));
  CHECK(a[7].letter == 'H');
  CHECK(a[8].status == LlmAnswerStatus::failed);  // slower than the 1 s timeout
  CHECK_THAT(a[8].error, Contains("imeout"));
  for (const auto& x : a) CHECK_THAT(x.error, !Contains("sk-secret"));
  const auto c = llm.counts();
  CHECK(c.prompts == 9);
  CHECK(c.answered == 4);
  CHECK(c.text_only == 1);
  CHECK(c.failed == 5);
  CHECK(c.cache_hits == 0);

  // Asked again: the answers come from the cache (no request), the failures are asked again.
  const std::vector<std::string> again{"letter=C", "flaky=2", "status=500"};
  const auto b = llm.ask(again);
  CHECK(b[0].from_cache);
  CHECK(b[0].letter == 'C');
  CHECK(b[1].from_cache);
  CHECK(b[2].status == LlmAnswerStatus::failed);
  CHECK_FALSE(b[2].from_cache);
  for (const auto& f : fs::directory_iterator(o.cache_dir)) {
    std::ifstream in(f.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK_THAT(text, !Contains("sk-secret"));
  }

  // The server dies: new prompts are deferred with the reason; what was answered stays answered.
  server.stop();
  const std::vector<std::string> after{"letter=C", "letter=B"};
  const auto d = llm.ask(after);
  CHECK(d[0].from_cache);
  CHECK(d[0].letter == 'C');
  CHECK(d[1].status == LlmAnswerStatus::failed);
  CHECK_THAT(d[1].error, Contains("127.0.0.1"));
}

TEST_CASE("a wrong port defers every prompt with the URL in the message") {
  auto o = options("http://127.0.0.1:" + std::to_string(closed_port()) + "/v1/");
  o.retries = 1;
  LlmEndpoint llm(o);
  const std::vector<std::string> prompts{"letter=A", "letter=B"};
  const auto a = llm.ask(prompts);
  for (const auto& x : a) {
    CHECK(x.status == LlmAnswerStatus::failed);
    CHECK_THAT(x.error, Contains("/v1/chat/completions") && Contains("onnect"));
    CHECK(x.attempts == 2);
  }
  CHECK(llm.counts().failed == 2);
}
