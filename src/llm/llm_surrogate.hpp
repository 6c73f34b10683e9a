#pragma once
// A language model as a surrogate. It forecasts pairs, not runtimes: asked about a candidate, it
// asks the endpoint how much faster that candidate is than a reference (pair_prompt.hpp) and gets
// a distribution over the eight speedup bins. As a Surrogate (predict/update) the reference is
// the fastest measured candidate seen in update(), or one given with set_reference(), and the
// bin distribution becomes a runtime distribution around t_ref: the median from the expected
// log2 speedup (each bin at its middle; bins 1 and 8 half a bin beyond their edge), the 5-95%
// interval from the distribution's spread plus the width of one bin, p_fail the fraction of
// failed measurements seen (0 before any).
//
// A candidate whose query failed (endpoint down, slow, garbage) comes back flagged: a Forecast
// without bin_probabilities, the reference's runtime as median and an interval 16x wide either
// side. Callers deciding on forecasts must defer (measure) those; llm_selective.hpp does.
//
// The API key lives only in the endpoint's options and its Authorization header: describe(),
// the answers' error texts and the response cache never hold it, and the surrogate has no model
// file (there is nothing trained to keep).
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/core/observation.hpp"
#include "llm/llm_endpoint.hpp"
#include "llm/pair_prompt.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct LlmSurrogateOptions {
  LlmEndpointOptions endpoint;  // llm_options_from_environment() fills it from the environment
  // Worked examples in each prompt: measured candidates seen in update() against the reference,
  // spread evenly over their runtimes (fastest to slowest), so the examples show every bin seen.
  std::size_t examples = 4;
  PairPromptOptions prompt;
};

// One pairwise forecast: the endpoint's answer about (reference, candidate).
struct LlmPairForecast {
  LlmAnswer answer;                    // status failed: defer
  [[nodiscard]] bool answered() const noexcept { return answer.status != LlmAnswerStatus::failed; }
};

class LlmSurrogate {
 public:
  // Throws invalid_argument_error for endpoint options LlmEndpoint rejects.
  explicit LlmSurrogate(LlmSurrogateOptions options);

  // Surrogate: forecasts against the reference. Throws invalid_argument_error when there is none
  // yet (see ready()).
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> candidates);
  // Learns the reference (fastest ok measurement), the worked examples and the failure rate.
  void update(std::span<const Observation> observations);
  // A reference known from elsewhere; the next faster measurement from update() replaces it.
  // Throws invalid_argument_error for a runtime that is not positive.
  void set_reference(Candidate reference, double runtime_ms);
  [[nodiscard]] bool ready() const noexcept { return m_reference.has_value(); }
  [[nodiscard]] const std::optional<Observation>& reference() const noexcept { return m_reference; }
  // Failed measurements among those seen in update() (0 before any): the forecasts' p_fail.
  [[nodiscard]] double failure_rate() const noexcept {
    return m_seen ? static_cast<double>(m_failed) / static_cast<double>(m_seen) : 0.0;
  }

  // Pairwise forecaster: each candidate against `reference`, one answer each, in order. Never
  // throws for the endpoint's faults (failed answers carry the reason).
  [[nodiscard]] std::vector<LlmPairForecast> predict_pairs(const Candidate& reference,
                                                           std::span<const Candidate> candidates);

  // Endpoint, model and whether a key is set (never the key): for logs and traces.
  [[nodiscard]] std::string describe() const;
  // Prompts asked, requests sent, cache hits, failures: every call so far.
  [[nodiscard]] LlmCounts counts() const { return m_endpoint.counts(); }

 private:
  LlmSurrogateOptions m_options;
  LlmEndpoint m_endpoint;
  std::optional<Observation> m_reference;
  std::vector<Observation> m_measured;  // ok measurements, for the worked examples
  std::size_t m_seen = 0, m_failed = 0;
  [[nodiscard]] std::vector<PairExample> examples_against(const Candidate& reference, double t_ref) const;
};
static_assert(Surrogate<LlmSurrogate>);

// The runtime distribution of a candidate from its bin distribution against a reference of
// runtime t_ref_ms (as LlmSurrogate::predict forms it). Exposed for tests.
[[nodiscard]] Forecast forecast_from_bins(const std::array<double, speedup_bin_count>& p, double t_ref_ms);

}  // namespace gpuforecast
