#include "llm/llm_endpoint.hpp"

#include <curl/curl.h>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {
std::mutex process_counts_mutex;
LlmCounts process_counts;
}  // namespace

LlmCounts llm_process_counts() {
  std::lock_guard lock(process_counts_mutex);
  return process_counts;
}

LlmEndpointOptions llm_options_from_environment(LlmEndpointOptions o) {
  auto env = [](const char* name, std::string& into) {
    if (const char* v = std::getenv(name); v && *v) into = v;
  };
  env("GPUFORECAST_LLM_BASE_URL", o.base_url);
  env("GPUFORECAST_LLM_MODEL", o.model);
  env("GPUFORECAST_LLM_API_KEY", o.api_key);
  if (const char* v = std::getenv("GPUFORECAST_LLM_CACHE"); v && *v) o.cache_dir = v;
  return o;
}

namespace {

using json = nlohmann::json;

int letter_bin(std::string token) {
  std::erase_if(token, [](unsigned char c) { return std::isspace(c); });
  if (token.size() != 1) return 0;
  const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(token[0])));
  return c >= 'A' && c <= 'H' ? c - 'A' + 1 : 0;
}

LlmAnswer failed(std::string why) {
  LlmAnswer a;
  a.error = std::move(why);
  return a;
}

std::string excerpt(const std::string& s) {
  std::string e = s.substr(0, 120);
  for (char& c : e)
    if (c == '\n' || c == '\r') c = ' ';
  return s.size() > 120 ? e + "..." : e;
}

// Two FNV-1a 64-bit hashes with different offsets: a 128-bit name for the cache file (the file
// also holds the full key, checked on reading, so a collision is a miss, never a wrong answer).
std::string content_address(const std::string& key) {
  std::uint64_t a = 14695981039346656037ULL, b = 0x84222325cbf29ce4ULL;
  for (unsigned char c : key) {
    a = (a ^ c) * 1099511628211ULL;
    b = (b ^ static_cast<unsigned char>(c + 0x5b)) * 1099511628211ULL;
  }
  return fmt::format("{:016x}{:016x}", a, b);
}

std::string completions_url(std::string base) {
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0) return base + "/chat/completions";
  return base + "/v1/chat/completions";
}

std::size_t append_body(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

}  // namespace

LlmAnswer parse_llm_answer(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const std::exception&) {
    return failed(fmt::format("the answer is not JSON: \"{}\"", excerpt(body)));
  }
  if (!j.is_object()) return failed(fmt::format("the answer is not a JSON object: \"{}\"", excerpt(body)));
  if (j.contains("error")) return failed(fmt::format("the endpoint answered an error: {}", excerpt(j["error"].dump())));
  const json* choice = nullptr;
  if (auto it = j.find("choices"); it != j.end() && it->is_array() && !it->empty() && (*it)[0].is_object())
    choice = &(*it)[0];
  if (!choice) return failed(fmt::format("the answer has no choices: \"{}\"", excerpt(body)));
  LlmAnswer a;
  // Log-probabilities of the first generated token.
  try {
    const json& first = choice->at("logprobs").at("content").at(0);
    std::array<double, speedup_bin_count> p{};
    double total = 0;
    auto add = [&](const json& entry) {
      const int bin = letter_bin(entry.at("token").get<std::string>());
      const double lp = entry.at("logprob").get<double>();
      if (bin && std::isfinite(lp) && p[static_cast<std::size_t>(bin - 1)] == 0) {
        p[static_cast<std::size_t>(bin - 1)] = std::exp(lp);  // a letter counted once (" A" and "A")
        total += std::exp(lp);
      }
    };
    if (auto tl = first.find("top_logprobs"); tl != first.end() && tl->is_array())
      for (const auto& e : *tl) add(e);
    if (total == 0) add(first);
    if (total > 0) {
      for (auto& v : p) v /= total;
      a.status = LlmAnswerStatus::ok;
      a.probabilities = p;
      a.letter = static_cast<char>('A' + (std::max_element(p.begin(), p.end()) - p.begin()));
      return a;
    }
  } catch (const std::exception&) {
    // no (usable) log-probabilities: the written letter below
  }
  std::string text;
  if (auto m = choice->find("message"); m != choice->end() && m->is_object() && m->contains("content") &&
                                        (*m)["content"].is_string())
    text = (*m)["content"].get<std::string>();
  else if (auto t = choice->find("text"); t != choice->end() && t->is_string())
    text = t->get<std::string>();
  // The first word must be the letter alone: "(G) because" is G, "Faster" is no answer.
  const auto begin = std::find_if(text.begin(), text.end(), [](unsigned char c) { return std::isalnum(c); });
  const auto end = std::find_if(begin, text.end(), [](unsigned char c) { return !std::isalnum(c); });
  if (const int bin = letter_bin(std::string(begin, end)); bin) {
    a.status = LlmAnswerStatus::text_only;
    a.probabilities[static_cast<std::size_t>(bin - 1)] = 1;
    a.letter = static_cast<char>('A' + bin - 1);
    return a;
  }
  return failed(fmt::format("the answer has no letter A-H: \"{}\"", excerpt(text)));
}

struct LlmEndpoint::Impl {
  LlmEndpointOptions options;
  std::string url;
  LlmCounts counts;
  std::mutex mutex;

  std::string request_body(const std::string& prompt) const {
    json body = {{"model", options.model},
                 {"messages", json::array({{{"role", "user"}, {"content", prompt}}})},
                 {"max_tokens", options.max_tokens},
                 {"temperature", options.temperature},
                 {"logprobs", true},
                 {"top_logprobs", options.top_logprobs}};
    return body.dump();
  }

  // What identifies an answer: everything sent except the key.
  std::string cache_key(const std::string& prompt) const {
    return fmt::format("model={}\nmax_tokens={}\ntemperature={}\ntop_logprobs={}\n\n{}", options.model,
                       options.max_tokens, options.temperature, options.top_logprobs, prompt);
  }

  std::filesystem::path cache_file(const std::string& key) const {
    return options.cache_dir / (content_address(key) + ".json");
  }

  bool read_cache(const std::string& key, LlmAnswer& out) const {
    if (options.cache_dir.empty()) return false;
    std::ifstream in(cache_file(key));
    if (!in) return false;
    try {
      const json j = json::parse(in);
      if (j.at("key").get<std::string>() != key) return false;
      out = parse_llm_answer(j.at("response").get<std::string>());
      return out.status != LlmAnswerStatus::failed;
    } catch (const std::exception&) {
      return false;  // a damaged cache entry is asked again (and rewritten)
    }
  }

  void write_cache(const std::string& key, const std::string& response) const {
    if (options.cache_dir.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(options.cache_dir, ec);
    const auto file = cache_file(key);
    const auto tmp = file.string() + fmt::format(".{}.tmp", std::hash<std::thread::id>{}(std::this_thread::get_id()));
    {
      std::ofstream out(tmp, std::ios::binary);
      out << json{{"key", key}, {"response", response}}.dump();
      if (!out) return;  // the cache is an optimisation: a full disk costs only reruns
    }
    std::filesystem::rename(tmp, file, ec);
  }

  // One request. Returns the body on HTTP 200; otherwise sets `why` and whether to retry.
  bool post(CURL* curl, const std::string& body, std::string& response, std::string& why, bool& retry) const {
    response.clear();
    curl_easy_reset(curl);
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    if (!options.api_key.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + options.api_key).c_str());
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout_seconds * 1000));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    const CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK) {
      why = fmt::format("request to {} failed: {}", url, curl_easy_strerror(rc));
      retry = true;
      return false;
    }
    if (status != 200) {
      why = fmt::format("{} answered HTTP {}: \"{}\"", url, status, excerpt(response));
      retry = status == 429 || status >= 500;
      return false;
    }
    return true;
  }

  LlmAnswer ask_one(CURL* curl, const std::string& prompt) {
    const std::string key = cache_key(prompt);
    LlmAnswer a;
    if (read_cache(key, a)) {
      a.from_cache = true;
      return a;
    }
    const std::string body = request_body(prompt);
    double backoff = options.backoff_seconds;
    std::string response, why;
    for (std::size_t attempt = 0; attempt <= options.retries; ++attempt) {
      if (attempt > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
        backoff *= 2;
      }
      bool retry = false;
      const bool got = post(curl, body, response, why, retry);
      if (got) {
        a = parse_llm_answer(response);
        if (a.status != LlmAnswerStatus::failed) {
          a.attempts = attempt + 1;
          write_cache(key, response);
          return a;
        }
        why = fmt::format("{}: {}", url, a.error);
        retry = true;  // a garbled answer may be a transient fault of the server or a proxy
      }
      a = failed(why);
      a.attempts = attempt + 1;
      if (!retry) break;
    }
    return a;
  }
};

LlmEndpoint::LlmEndpoint(LlmEndpointOptions o) : m_impl(std::make_unique<Impl>()) {
  if (o.base_url.empty())
    throw invalid_argument_error("LLM endpoint: no base URL (set GPUFORECAST_LLM_BASE_URL or give one)");
  if (o.model.empty()) throw invalid_argument_error("LLM endpoint: no model name (set GPUFORECAST_LLM_MODEL or give one)");
  if (o.in_flight == 0) throw invalid_argument_error("LLM endpoint: in_flight must be at least 1");
  if (!(o.timeout_seconds > 0)) throw invalid_argument_error(fmt::format("LLM endpoint: timeout must be positive, got {}", o.timeout_seconds));
  static const CURLcode init = curl_global_init(CURL_GLOBAL_DEFAULT);  // once, before any thread
  if (init != CURLE_OK) throw error(fmt::format("libcurl failed to start: {}", curl_easy_strerror(init)));
  m_impl->url = completions_url(o.base_url);
  m_impl->options = std::move(o);
}

LlmEndpoint::~LlmEndpoint() = default;
LlmEndpoint::LlmEndpoint(LlmEndpoint&&) noexcept = default;
LlmEndpoint& LlmEndpoint::operator=(LlmEndpoint&&) noexcept = default;

const LlmEndpointOptions& LlmEndpoint::options() const noexcept { return m_impl->options; }

LlmCounts LlmEndpoint::counts() const {
  std::lock_guard lock(m_impl->mutex);
  return m_impl->counts;
}

std::vector<LlmAnswer> LlmEndpoint::ask(std::span<const std::string> prompts) {
  std::vector<LlmAnswer> answers(prompts.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    CURL* curl = curl_easy_init();
    for (std::size_t i; (i = next++) < prompts.size();) {
      if (!curl) {
        answers[i] = failed("libcurl could not make a handle");
        continue;
      }
      try {
        answers[i] = m_impl->ask_one(curl, prompts[i]);
      } catch (const std::exception& e) {
        answers[i] = failed(e.what());  // e.g. out of memory: this prompt is measured instead
      }
    }
    if (curl) curl_easy_cleanup(curl);
  };
  const std::size_t threads = std::min(m_impl->options.in_flight, std::max<std::size_t>(1, prompts.size()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  auto tally = [&](LlmCounts& c) {
    c.prompts += prompts.size();
    for (const auto& a : answers) {
      c.requests += a.attempts;
      c.retries += a.attempts > 1 ? a.attempts - 1 : 0;
      c.cache_hits += a.from_cache ? 1 : 0;
      c.answered += a.status != LlmAnswerStatus::failed ? 1 : 0;
      c.text_only += a.status == LlmAnswerStatus::text_only ? 1 : 0;
      c.failed += a.status == LlmAnswerStatus::failed ? 1 : 0;
    }
  };
  {
    std::lock_guard lock(m_impl->mutex);
    tally(m_impl->counts);
  }
  std::lock_guard lock(process_counts_mutex);
  tally(process_counts);
  return answers;
}

}  // namespace gpuforecast
