#include "llm/llm_surrogate.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {

// log2 speedup of a bin's middle: bin b holds 2 log2(s) in [b - 4, b - 3). The open end bins are
// placed half a bin beyond their edge: a model sure of bin 8 says "at least 4x", and nothing
// better is known about how much.
double bin_middle_log2(int bin) { return (bin - 3.5) / 2.0; }

constexpr double z95 = 1.6448536269514722;
constexpr double bin_width_log2 = 0.5;

}  // namespace

Forecast forecast_from_bins(const std::array<double, speedup_bin_count>& p, double t_ref_ms) {
  if (!(t_ref_ms > 0)) throw invalid_argument_error(fmt::format("reference runtime must be positive, got {}", t_ref_ms));
  double total = 0, mean = 0;
  for (int b = 1; b <= speedup_bin_count; ++b) {
    total += p[b - 1];
    mean += p[b - 1] * bin_middle_log2(b);
  }
  if (!(total > 0)) throw invalid_argument_error("a bin distribution must have positive mass");
  mean /= total;
  double var = 0;
  for (int b = 1; b <= speedup_bin_count; ++b) var += p[b - 1] / total * std::pow(bin_middle_log2(b) - mean, 2);
  // Within a bin the speedup is unknown too: add the variance of a uniform over one bin.
  var += bin_width_log2 * bin_width_log2 / 12.0;
  const double sigma = std::sqrt(var) * std::log(2.0);  // natural-log units, as Forecast::spread
  Forecast f;
  f.median_ms = t_ref_ms / std::exp2(mean);
  f.lower_ms = f.median_ms * std::exp(-z95 * sigma);
  f.upper_ms = f.median_ms * std::exp(z95 * sigma);
  f.spread = sigma;
  f.bin_probabilities = p;
  return f;
}

LlmSurrogate::LlmSurrogate(LlmSurrogateOptions options) : m_options(options), m_endpoint(std::move(options.endpoint)) {}

void LlmSurrogate::set_reference(Candidate reference, double runtime_ms) {
  if (!(runtime_ms > 0))
    throw invalid_argument_error(
        fmt::format("LLM surrogate: reference {} needs a positive runtime, got {}", reference.describe(), runtime_ms));
  Observation o;
  o.candidate = std::move(reference);
  o.measurement.status = Status::ok;
  o.measurement.median_ms = runtime_ms;
  o.source = "reference";
  m_reference = std::move(o);
}

void LlmSurrogate::update(std::span<const Observation> observations) {
  for (const auto& o : observations) {
    ++m_seen;
    if (!o.measurement.ok() || !(o.measurement.median_ms > 0)) {
      ++m_failed;
      continue;
    }
    m_measured.push_back(o);
    if (!m_reference || o.measurement.median_ms < m_reference->measurement.median_ms) m_reference = o;
  }
}

std::vector<PairExample> LlmSurrogate::examples_against(const Candidate& reference, double t_ref) const {
  std::vector<const Observation*> rows;
  for (const auto& o : m_measured)
    if (o.candidate.config != reference.config && o.candidate.kernel == reference.kernel) rows.push_back(&o);
  const std::size_t k = std::min(m_options.examples, rows.size());
  if (k == 0) return {};
  std::stable_sort(rows.begin(), rows.end(), [](const Observation* a, const Observation* b) {
    return a->measurement.median_ms < b->measurement.median_ms;
  });
  std::vector<PairExample> out;
  for (std::size_t i = 0; i < k; ++i) {
    // Evenly spaced ranks, first and last included.
    const std::size_t at = k == 1 ? rows.size() / 2 : i * (rows.size() - 1) / (k - 1);
    const Observation& o = *rows[at];
    out.push_back({reference.config, o.candidate.config, speedup_bin(t_ref, o.measurement.median_ms)});
  }
  return out;
}

std::vector<LlmPairForecast> LlmSurrogate::predict_pairs(const Candidate& reference,
                                                         std::span<const Candidate> candidates) {
  double t_ref = 0;
  if (m_reference && m_reference->candidate.config == reference.config) t_ref = m_reference->measurement.median_ms;
  for (const auto& o : m_measured)
    if (t_ref == 0 && o.candidate.config == reference.config) t_ref = o.measurement.median_ms;
  // Worked examples need the reference's runtime; without it the prompt has none.
  const auto shots = t_ref > 0 ? examples_against(reference, t_ref) : std::vector<PairExample>{};
  std::vector<std::string> prompts;
  prompts.reserve(candidates.size());
  for (const auto& c : candidates) prompts.push_back(pair_prompt(reference, c, shots, m_options.prompt));
  auto answers = m_endpoint.ask(prompts);
  std::vector<LlmPairForecast> out;
  out.reserve(answers.size());
  for (auto& a : answers) out.push_back({std::move(a)});
  return out;
}

std::vector<Forecast> LlmSurrogate::predict(std::span<const Candidate> candidates) {
  if (!m_reference)
    throw invalid_argument_error(
        "LLM surrogate: no reference to forecast against yet (give one measurement through update() or set_reference())");
  const double t_ref = m_reference->measurement.median_ms;
  const double p_fail = failure_rate();
  const auto pairs = predict_pairs(m_reference->candidate, candidates);
  std::vector<Forecast> out;
  out.reserve(pairs.size());
  for (const auto& pf : pairs) {
    Forecast f;
    if (pf.answered()) {
      f = forecast_from_bins(pf.answer.probabilities, t_ref);
    } else {
      // Flagged: no bin distribution. Nothing is known beyond the reference's runtime.
      f.median_ms = t_ref;
      f.lower_ms = t_ref / 16;
      f.upper_ms = t_ref * 16;
      f.spread = std::log(16.0) / z95;
    }
    f.p_fail = p_fail;
    out.push_back(f);
  }
  return out;
}

std::string LlmSurrogate::describe() const {
  const auto& e = m_endpoint.options();
  return fmt::format("LLM surrogate: model {} at {}, API key {}, {} worked examples", e.model, e.base_url,
                     e.api_key.empty() ? "not set" : "set (not shown)", m_options.examples);
}

}  // namespace gpuforecast
