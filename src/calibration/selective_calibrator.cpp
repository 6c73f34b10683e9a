#include "calibration/selective_calibrator.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "stats/conformal_quantile.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

double deferral_loss(const CalibrationOptions& o, const Forecast& f, double observed_ms,
                     std::optional<double> reference_ms) {
  switch (o.loss) {
    case DeferralLoss::relative_error: return relative_error_loss(f, observed_ms, o.tolerance);
    case DeferralLoss::wrong_bin:
      if (!reference_ms) throw invalid_argument_error("the wrong_bin loss needs a reference runtime");
      return wrong_bin_loss(f, observed_ms, *reference_ms);
  }
  return 1.0;
}

namespace {
void check_options(const CalibrationOptions& o) {
  check_alpha(o.alpha, "interval alpha");
  check_alpha(o.risk_alpha, "deferral risk alpha");
  check_alpha(o.delta, "deferral delta");
  if (!(o.deferral_fraction >= 0 && o.deferral_fraction < 1))
    throw invalid_argument_error(fmt::format("deferral_fraction must lie in [0, 1), got {}", o.deferral_fraction));
  if (!(o.tolerance > 0)) throw invalid_argument_error(fmt::format("relative-error tolerance must be positive, got {}", o.tolerance));
  if (!(o.aci_gamma >= 0)) throw invalid_argument_error(fmt::format("adaptive conformal gamma must be >= 0, got {}", o.aci_gamma));
  if (!(o.reference_ms >= 0) || !std::isfinite(o.reference_ms))
    throw invalid_argument_error(fmt::format("reference runtime must be 0 (random peers) or positive, got {} ms", o.reference_ms));
}
}  // namespace

SelectiveCalibrator SelectiveCalibrator::fit(std::span<const Candidate> candidates, std::span<const Forecast> forecasts,
                                             std::span<const double> observed_ms, const CalibrationOptions& o) {
  check_options(o);
  if (candidates.size() != forecasts.size() || candidates.size() != observed_ms.size())
    throw invalid_argument_error(fmt::format("calibration needs as many candidates, forecasts and runtimes; got {}, {} and {}",
                                             candidates.size(), forecasts.size(), observed_ms.size()));
  if (candidates.empty()) throw invalid_argument_error("calibration needs at least one measured point; the set is empty");
  for (std::size_t i = 0; i < observed_ms.size(); ++i)
    if (!(observed_ms[i] > 0) || !std::isfinite(observed_ms[i]))
      throw invalid_argument_error(fmt::format("calibration runtime {} ({}) is {}: need a positive finite time in ms", i,
                                               candidates[i].describe(), observed_ms[i]));

  std::vector<std::size_t> idx(candidates.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::vector<std::size_t> conf_idx = idx, ltt_idx = idx;
  std::mt19937_64 rng(o.seed);
  if (o.deferral_fraction > 0) {
    std::shuffle(idx.begin(), idx.end(), rng);
    const auto n_ltt = static_cast<std::size_t>(std::round(o.deferral_fraction * static_cast<double>(idx.size())));
    if (n_ltt == 0 || n_ltt == idx.size())
      throw invalid_argument_error(fmt::format("deferral_fraction {} of {} points leaves one step without data",
                                               o.deferral_fraction, idx.size()));
    ltt_idx.assign(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n_ltt));
    conf_idx.assign(idx.begin() + static_cast<std::ptrdiff_t>(n_ltt), idx.end());
  }
  auto gather = [&](const std::vector<std::size_t>& ix, auto get) {
    std::vector<std::decay_t<decltype(get(0))>> v;
    v.reserve(ix.size());
    for (auto i : ix) v.push_back(get(i));
    return v;
  };

  SelectiveCalibrator c;
  c.m_options = o;
  c.m_conformal = MondrianConformal(o.alpha, o.score, o.group_by, o.min_group_size);
  c.m_conformal.fit(gather(conf_idx, [&](std::size_t i) { return candidates[i]; }),
                    gather(conf_idx, [&](std::size_t i) { return forecasts[i]; }),
                    gather(conf_idx, [&](std::size_t i) { return observed_ms[i]; }));

  // References for the bin loss/score: another calibration point of the same kernel and device.
  std::map<std::string, std::vector<std::size_t>> by_space;
  if (o.needs_reference())
    for (auto i : ltt_idx) by_space[group_key(GroupBy::kernel_and_device, candidates[i])].push_back(i);
  std::vector<double> conf, loss;
  conf.reserve(ltt_idx.size());
  loss.reserve(ltt_idx.size());
  for (auto i : ltt_idx) {
    Forecast f = forecasts[i];
    const Interval iv = c.m_conformal.interval(candidates[i], f);
    std::optional<double> ref;
    if (o.needs_reference()) {
      if (o.reference_ms > 0) {
        ref = o.reference_ms;
      } else {
        const auto& peers = by_space[group_key(GroupBy::kernel_and_device, candidates[i])];
        std::size_t j = peers[std::uniform_int_distribution<std::size_t>(0, peers.size() - 1)(rng)];
        ref = observed_ms[j];
      }
      f.bin_probabilities = bin_probabilities(f, iv, o.alpha, *ref);
    }
    conf.push_back(c.confidence_of(f, iv));
    loss.push_back(deferral_loss(o, f, observed_ms[i], ref));
  }
  LttOptions lo;
  lo.alpha = o.risk_alpha;
  lo.delta = o.delta;
  lo.max_thresholds = o.max_thresholds;
  c.m_deferral = learn_then_test(conf, loss, lo);
  if (o.aci_gamma > 0)
    c.m_adaptive.emplace(o.alpha, o.aci_gamma, o.score, c.m_conformal.pooled().scores(), o.aci_window);
  return c;
}

SelectiveCalibrator SelectiveCalibrator::from_parts(const CalibrationOptions& options, MondrianConformal conformal,
                                                    LttResult deferral) {
  check_options(options);
  if (!conformal.fitted()) throw invalid_argument_error("a calibrator's conformal part must be fitted");
  SelectiveCalibrator c;
  c.m_options = options;
  c.m_conformal = std::move(conformal);
  c.m_deferral = std::move(deferral);
  return c;
}

double SelectiveCalibrator::confidence_of(const Forecast& f, const Interval& iv) const {
  return confidence_score(m_options.confidence, f, iv);
}

Interval SelectiveCalibrator::interval(const Candidate& c, const Forecast& f) const {
  if (!fitted()) throw invalid_argument_error("selective calibrator used before it was fitted");
  return uncorrected_interval(c, m_scope ? m_scope->correction.apply(f) : f);
}

Interval SelectiveCalibrator::uncorrected_interval(const Candidate& c, const Forecast& f) const {
  if (m_adaptive && m_adaptive->steps() > 0) return m_adaptive->interval(f);
  return m_conformal.interval(c, f);
}

void SelectiveCalibrator::update(const Candidate& c, const Forecast& f, double observed_ms) {
  (void)c;
  if (m_adaptive) m_adaptive->update(m_scope ? m_scope->correction.apply(f) : f, observed_ms);
}

Decision SelectiveCalibrator::decide(const Candidate& c, const Forecast& raw, std::optional<double> reference_ms) const {
  if (!fitted()) throw invalid_argument_error("selective calibrator used before it was fitted");
  Decision d;
  if (m_scope && !(c.device && c.device->name == m_scope->device)) {
    d.forecast = raw;
    d.defer = true;
    d.reason = fmt::format("calibrated for device {} only, not {}: measure", m_scope->device,
                           c.device ? c.device->name : std::string("(no device)"));
    return d;
  }
  const Forecast f = m_scope ? m_scope->correction.apply(raw) : raw;
  if (!reference_ms && m_options.reference_ms > 0) reference_ms = m_options.reference_ms;
  d.forecast = f;
  const Interval iv = uncorrected_interval(c, f);
  d.interval_low_ms = iv.low_ms;
  d.interval_high_ms = iv.high_ms;
  if (reference_ms) d.forecast.bin_probabilities = bin_probabilities(f, iv, m_options.alpha, *reference_ms);
  if (m_options.confidence == ConfidenceScore::top_bin_probability && !d.forecast.bin_probabilities) {
    d.confidence = 0;
    d.defer = true;
    d.reason = "confidence is the top speedup-bin probability, which needs a reference runtime: measure";
    return d;
  }
  d.confidence = confidence_of(d.forecast, iv);
  if (f.p_fail > m_options.max_p_fail) {
    d.defer = true;
    d.reason = fmt::format("p_fail {:.2f} > {:.2f}: measure", f.p_fail, m_options.max_p_fail);
  } else if (!m_deferral.any_valid) {
    d.defer = true;
    d.reason = fmt::format("no threshold certified risk <= {} with probability {} on the calibration set: measure",
                           m_deferral.alpha, 1 - m_deferral.delta);
  } else {
    d.defer = !(d.confidence >= m_deferral.threshold);
    // Interval-width confidence reads better as the ratio high/low it stands for.
    const bool ratio = m_options.confidence == ConfidenceScore::interval_width;
    const std::string have = ratio ? fmt::format("interval high/low x{:.3g}", std::exp(-d.confidence))
                                   : fmt::format("{} {:.4g}", to_string(m_options.confidence), d.confidence);
    const std::string need = ratio ? fmt::format("x{:.3g}", std::exp(-m_deferral.threshold))
                                   : fmt::format("{:.4g}", m_deferral.threshold);
    if (!d.defer)
      d.reason = fmt::format("{} within the certified {}: accepted, risk <= {} with probability {}", have, need,
                             m_deferral.alpha, 1 - m_deferral.delta);
    else
      d.reason = fmt::format("{} beyond the certified {}: measure", have, need);
  }
  return d;
}

std::string SelectiveCalibrator::describe() const {
  if (!fitted()) return "not calibrated";
  const auto& p = m_conformal.pooled();
  std::string s = fmt::format("{:.0f}% {} intervals (q = {:.4g} on {} points, groups: {} with {} own calibrations)",
                              100 * (1 - m_options.alpha), to_string(m_options.score), p.quantile(), p.size(),
                              to_string(m_options.group_by), m_conformal.groups().size());
  if (m_deferral.any_valid)
    s += fmt::format("; accept if {} >= {:.4g}: {:.1f}% of calibration accepted, risk {:.3f} (bound {:.3f}), "
                     "P(risk <= {}) >= {}",
                     to_string(m_options.confidence), m_deferral.threshold, 100 * m_deferral.coverage,
                     m_deferral.empirical_risk, m_deferral.risk_upper_bound, m_deferral.alpha, 1 - m_deferral.delta);
  else
    s += fmt::format("; no threshold certified at risk {} / delta {}: every forecast is deferred", m_deferral.alpha,
                     m_deferral.delta);
  if (m_options.reference_ms > 0) s += fmt::format("; bins against a reference of {:.4g} ms", m_options.reference_ms);
  if (m_scope && !m_scope->view_devices.empty()) {
    s += fmt::format("; device {} only, forecast as log t = {}", m_scope->device,
                     m_scope->stacking.describe(m_scope->view_devices));
  }
  if (m_scope)
    s += fmt::format("; device {} only, forecasts corrected by log t = {:.3f} + {:.3f} log t_hat (fitted on {} points)",
                     m_scope->device, m_scope->correction.offset, m_scope->correction.slope, m_scope->adapt_points);
  return s;
}

std::vector<Decision> decide_all(const SelectiveCalibrator* calibrator, std::span<const Candidate> candidates,
                                 std::span<const Forecast> forecasts, std::optional<double> reference_ms,
                                 std::string_view uncalibrated_reason) {
  if (forecasts.size() != candidates.size())
    throw invalid_argument_error(fmt::format("decide_all: {} forecasts for {} candidates", forecasts.size(), candidates.size()));
  std::vector<Decision> out;
  out.reserve(forecasts.size());
  for (std::size_t i = 0; i < forecasts.size(); ++i) {
    if (calibrator) {
      out.push_back(calibrator->decide(candidates[i], forecasts[i], reference_ms));
      continue;
    }
    Decision& d = out.emplace_back();
    d.forecast = forecasts[i];
    d.interval_low_ms = forecasts[i].lower_ms;
    d.interval_high_ms = forecasts[i].upper_ms;
    d.confidence = 0;
    d.defer = true;
    d.reason = std::string(uncalibrated_reason);
  }
  return out;
}

}  // namespace gpuforecast
