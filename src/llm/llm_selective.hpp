#pragma once
// The LLM as the filter of a search: a SelectivePredictor (with update and ready) that asks the
// LLM about every proposed candidate against the incumbent (the fastest measured so far) and
// turns the bin distribution into a forecast around the incumbent's runtime, so the search
// ranks children by expected bin and measures the top ones. A candidate is answered without
// measuring only when a pairwise Learn-then-Test rule certifies it (pairwise_selective.hpp,
// wrong-direction loss by default); the rule is fitted on the search's own prequential pairs:
// what the LLM said about a candidate before it was measured, against the bin measured then.
// Until it has min_calibration_pairs of them every candidate is deferred (no certificate yet),
// and a candidate whose query failed is always deferred, with the reason, and its forecast gets
// no spread so that no optimism ranks an unanswered query among the best.
#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibration/pairwise_selective.hpp"
#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "llm/llm_surrogate.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct LlmSelectiveOptions {
  LlmSurrogateOptions surrogate;
  PairwiseOptions pairwise;                // alpha, delta, loss and confidence of the deferral rule
  std::size_t min_calibration_pairs = 20;  // prequential pairs before the rule is fitted
};

class LlmSelective {
 public:
  explicit LlmSelective(LlmSelectiveOptions options);
  [[nodiscard]] std::vector<Decision> decide(std::span<const Candidate> candidates);
  void update(std::span<const Observation> observations);
  [[nodiscard]] bool ready() const noexcept { return m_surrogate.ready(); }

  [[nodiscard]] LlmCounts counts() const { return m_surrogate.counts(); }
  [[nodiscard]] std::size_t calibration_pairs() const noexcept { return m_true_bins.size(); }
  [[nodiscard]] bool certified() const noexcept { return m_selector.has_value(); }
  [[nodiscard]] const LlmSurrogate& surrogate() const noexcept { return m_surrogate; }

 private:
  struct Asked {
    BinProbabilities probabilities{};
    double reference_ms = 0;
  };
  LlmSelectiveOptions m_options;
  LlmSurrogate m_surrogate;
  std::map<std::string, Asked> m_asked;  // by config key: the latest answer about a candidate not measured yet
  std::vector<BinProbabilities> m_probabilities;
  std::vector<int> m_true_bins;
  std::optional<PairwiseSelector> m_selector;
};
static_assert(SelectivePredictor<LlmSelective>);

// Registers the search-model kind "llm" (core/any_selective_predictor.hpp): a LlmSelective
// whose endpoint comes from the environment (GPUFORECAST_LLM_BASE_URL, _MODEL, _API_KEY,
// _CACHE); making one without an endpoint throws invalid_argument_error naming the variables.
// Once per process: later calls do nothing.
void register_llm_search_model_kind();

}  // namespace gpuforecast
