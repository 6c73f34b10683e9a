#pragma once
// A language model behind any OpenAI-compatible endpoint (llama.cpp server, vLLM, a hosted
// model), asked prompts whose answer is one letter A-H: speedup bins 1-8 of a candidate against
// its reference. The bin distribution comes from the answer token's top_logprobs renormalised
// over the eight letters (probabilities a model writes as text are useless); an endpoint that
// gives no log-probabilities falls back to the letter it wrote, flagged text_only.
//
// Serving: a content-addressed response cache on disk (model + sampling settings + prompt), so
// reruns cost nothing; several requests in flight; a timeout per request; retries with
// exponential backoff on connection errors, timeouts, HTTP 429 and 5xx and malformed answers.
// A prompt that still fails is answered `failed` with the reason (the caller measures it
// instead): asking never throws for the endpoint's faults, and every answer already received
// is kept. The API key goes into the Authorization header only: never into messages, the
// cache or files.
#include <array>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct LlmEndpointOptions {
  std::string base_url;  // "http://127.0.0.1:8080" (with or without /v1); GPUFORECAST_LLM_BASE_URL
  std::string model;     // sent as "model"; GPUFORECAST_LLM_MODEL
  std::string api_key;   // sent as a bearer token when set; GPUFORECAST_LLM_API_KEY
  std::filesystem::path cache_dir;  // response cache; empty: none; GPUFORECAST_LLM_CACHE
  std::size_t in_flight = 4;        // requests at once
  double timeout_seconds = 60;      // per request, connecting included
  std::size_t retries = 3;          // after the first attempt
  double backoff_seconds = 0.5;     // before the first retry, doubled for each next one
  int top_logprobs = 20;
  double temperature = 0;
  int max_tokens = 1;
};

// `defaults` with base_url, model, api_key and cache_dir taken from the environment where set there.
[[nodiscard]] LlmEndpointOptions llm_options_from_environment(LlmEndpointOptions defaults = {});

enum class LlmAnswerStatus {
  ok,         // bin distribution from the letters' log-probabilities
  text_only,  // no log-probabilities: the written letter with probability 1 (flagged)
  failed,     // no usable answer after the retries: defer (measure)
};

struct LlmAnswer {
  LlmAnswerStatus status = LlmAnswerStatus::failed;
  std::array<double, speedup_bin_count> probabilities{};  // index 0 is bin 1 (letter A)
  char letter = 0;                                        // most probable letter, 0 when failed
  bool from_cache = false;
  std::size_t attempts = 0;  // requests sent for this prompt (0 from the cache)
  std::string error;         // why it failed: the endpoint, the HTTP status or the bad answer
};

struct LlmCounts {
  std::size_t prompts = 0, requests = 0, cache_hits = 0, answered = 0, text_only = 0, failed = 0, retries = 0;
};

// Totals over every endpoint of this process: what a caller that never sees the endpoint (a
// search whose model the composition layer built) reports as the LLM's calls.
[[nodiscard]] LlmCounts llm_process_counts();

class LlmEndpoint {
 public:
  // Throws invalid_argument_error for an empty base URL or model, or in_flight == 0.
  explicit LlmEndpoint(LlmEndpointOptions options);
  ~LlmEndpoint();
  LlmEndpoint(LlmEndpoint&&) noexcept;
  LlmEndpoint& operator=(LlmEndpoint&&) noexcept;

  // One answer per prompt, in order.
  [[nodiscard]] std::vector<LlmAnswer> ask(std::span<const std::string> prompts);
  // Totals over every ask() so far.
  [[nodiscard]] LlmCounts counts() const;
  [[nodiscard]] const LlmEndpointOptions& options() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// The bin distribution of an answer from a chat completion response body (JSON): top_logprobs
// of the first generated token renormalised over A-H, or the written letter (text_only). Status
// failed with the reason for malformed JSON, an error object or no letter. Exposed for tests.
[[nodiscard]] LlmAnswer parse_llm_answer(const std::string& response_body);

}  // namespace gpuforecast
