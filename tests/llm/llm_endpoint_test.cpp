// The LLM endpoint client against a fake OpenAI-compatible server on 127.0.0.1
// (fake_llm_server.py, started and stopped here by its pid): bin distributions from
// log-probabilities, the text-only fallback, the response cache, and every fault ending in a
// failed (deferred) answer with a clear message, never an exception and never a lost answer.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gpuforecast/core/error.hpp"
#include "llm/llm_endpoint.hpp"
#include "fake_server.hpp"

using namespace gpuforecast;
using gpuforecast::test::closed_port;
using gpuforecast::test::FakeServer;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

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
