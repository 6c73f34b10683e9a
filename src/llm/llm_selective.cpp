#include "llm/llm_selective.hpp"

#include <fmt/core.h>

#include <cmath>
#include <mutex>

#include "gpuforecast/core/any_selective_predictor.hpp"
#include "gpuforecast/core/error.hpp"
#include "llm/llm_endpoint.hpp"

namespace gpuforecast {

LlmSelective::LlmSelective(LlmSelectiveOptions options)
    : m_options(options), m_surrogate(std::move(options.surrogate)) {
  if (m_options.min_calibration_pairs < 2)
    throw invalid_argument_error(
        fmt::format("LLM selective model: min_calibration_pairs must be at least 2, got {}", m_options.min_calibration_pairs));
}

std::vector<Decision> LlmSelective::decide(std::span<const Candidate> candidates) {
  if (!m_surrogate.ready())
    throw invalid_argument_error("LLM selective model: nothing measured yet to compare candidates against");
  const Observation& incumbent = *m_surrogate.reference();
  const double t_ref = incumbent.measurement.median_ms;
  const double p_fail = m_surrogate.failure_rate();
  const auto answers = m_surrogate.predict_pairs(incumbent.candidate, candidates);
  std::vector<Decision> out(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    Decision& d = out[i];
    const LlmAnswer& a = answers[i].answer;
    if (!answers[i].answered()) {
      d.forecast.median_ms = t_ref;
      d.forecast.lower_ms = t_ref / 16;
      d.forecast.upper_ms = t_ref * 16;
      d.forecast.p_fail = p_fail;
      d.interval_low_ms = d.forecast.lower_ms;
      d.interval_high_ms = d.forecast.upper_ms;
      d.reason = "LLM query failed: " + a.error;
      continue;
    }
    d.forecast = forecast_from_bins(a.probabilities, t_ref);
    d.forecast.p_fail = p_fail;
    d.interval_low_ms = d.forecast.lower_ms;
    d.interval_high_ms = d.forecast.upper_ms;
    d.confidence = pair_confidence(m_options.pairwise.confidence, a.probabilities);
    if (m_selector) {
      const PairDecision pd = m_selector->decide(a.probabilities);
      d.defer = pd.defer;
      d.reason = fmt::format("{} {:.3f} {} the certified threshold ({} calibration pairs)",
                             to_string(m_options.pairwise.confidence), d.confidence, pd.defer ? "below" : "clears",
                             m_true_bins.size());
    } else {
      d.reason = fmt::format("no certificate yet: {} of {} calibration pairs", m_true_bins.size(),
                             m_options.min_calibration_pairs);
    }
    m_asked[candidates[i].config.key()] = {a.probabilities, t_ref};
  }
  return out;
}

void LlmSelective::update(std::span<const Observation> observations) {
  bool grew = false;
  for (const auto& o : observations) {
    const auto it = m_asked.find(o.candidate.config.key());
    if (it == m_asked.end()) continue;
    if (o.measurement.ok() && o.measurement.median_ms > 0) {
      m_probabilities.push_back(it->second.probabilities);
      m_true_bins.push_back(speedup_bin(it->second.reference_ms, o.measurement.median_ms));
      grew = true;
    }
    m_asked.erase(it);
  }
  m_surrogate.update(observations);
  if (grew && m_true_bins.size() >= m_options.min_calibration_pairs)
    m_selector = PairwiseSelector::fit(m_probabilities, m_true_bins, m_options.pairwise);
}

void register_llm_search_model_kind() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_search_model_kind("llm", [](std::uint64_t) -> AnySelectivePredictor {
      LlmSelectiveOptions o;
      o.surrogate.endpoint = llm_options_from_environment();
      if (o.surrogate.endpoint.base_url.empty() || o.surrogate.endpoint.model.empty())
        throw invalid_argument_error(
            "surrogate llm: no endpoint: set GPUFORECAST_LLM_BASE_URL and GPUFORECAST_LLM_MODEL (docs/llm.md)");
      return LlmSelective(std::move(o));
    });
  });
}

}  // namespace gpuforecast
