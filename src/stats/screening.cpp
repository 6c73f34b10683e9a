#include "gpuforecast/stats/screening.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "stats/conformal_quantile.hpp"
#include "stats/learn_then_test.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {
namespace {

void check_options(const ScreeningOptions& o) {
  check_alpha(o.alpha, "screening alpha");
  check_alpha(o.delta, "screening delta");
  if (!(o.tolerance >= 0 && o.tolerance < 1))
    throw invalid_argument_error(fmt::format("screening tolerance {} outside [0, 1)", o.tolerance));
}

bool positive_time(double ms) { return std::isfinite(ms) && ms > 0; }

void check_pair(const ScreeningPair& p, std::size_t i, std::size_t n, const ScreeningOptions& o) {
  const auto check = [&](double ms, const char* what) {
    if (!positive_time(ms))
      throw invalid_argument_error(
          fmt::format("screening calibration pair {} of {}: {} {} ms is not a positive finite time", i, n, what, ms));
  };
  check(p.forecast_ms, "forecast");
  check(p.measured_ms, "measured");
  check(p.incumbent_ms, "incumbent");
  if (o.reference == ScreeningReference::incumbent_forecast)
    check(p.incumbent_forecast_ms, "incumbent forecast (needed: the rule sets forecasts against the incumbent's)");
}

// Improvement pairs below which nothing can be certified: (1 - alpha)^n > delta.
std::size_t improvements_needed(const ScreeningOptions& o) {
  return static_cast<std::size_t>(std::ceil(std::log(o.delta) / std::log1p(-o.alpha)));
}

double reference_of(const ScreeningOptions& o, double incumbent_ms, double incumbent_forecast_ms) {
  return o.reference == ScreeningReference::incumbent_forecast ? incumbent_forecast_ms : incumbent_ms;
}

// log(f / (R * (1 - tolerance))): the candidate is skipped at every margin below this.
double skip_score(double forecast_ms, double reference_ms, double tolerance) {
  return std::log(forecast_ms) - std::log(reference_ms) - std::log1p(-tolerance);
}

}  // namespace

bool is_improvement(const ScreeningPair& p, double tolerance) noexcept {
  return positive_time(p.measured_ms) && p.measured_ms < p.incumbent_ms * (1 - tolerance);
}

bool ScreeningRule::skip(double forecast_ms, double incumbent_ms, double incumbent_forecast_ms) const {
  const double reference = reference_of(options, incumbent_ms, incumbent_forecast_ms);
  if (!positive_time(forecast_ms) || !positive_time(reference))
    throw invalid_argument_error(fmt::format(
        "screening: forecast {} ms against {} {} ms: both must be positive finite times", forecast_ms,
        options.reference == ScreeningReference::incumbent_forecast ? "the incumbent's forecast" : "incumbent", reference));
  return certified && skip_score(forecast_ms, reference, options.tolerance) > margin;
}

ScreeningRule certify_screening(std::span<const ScreeningPair> calibration, const ScreeningOptions& o) {
  check_options(o);
  ScreeningRule rule;
  rule.options = o;
  rule.margin = std::numeric_limits<double>::infinity();
  rule.calibration_size = calibration.size();
  std::vector<double> scores;  // s_j of the improvement pairs
  for (std::size_t i = 0; i < calibration.size(); ++i) {
    const auto& p = calibration[i];
    check_pair(p, i, calibration.size(), o);
    if (is_improvement(p, o.tolerance))
      scores.push_back(skip_score(p.forecast_ms, reference_of(o, p.incumbent_ms, p.incumbent_forecast_ms), o.tolerance));
  }
  const std::size_t n = scores.size();
  rule.improvements = n;
  // Widest margin first: at margin s_(k) (k-th largest score) the misses are the pairs scoring
  // strictly above it. Ties are tested together.
  std::sort(scores.begin(), scores.end(), std::greater<>());
  std::size_t misses_at_margin = 0;
  for (std::size_t start = 0; start < n;) {
    std::size_t end = start + 1;  // [start, end): one tie group; the misses are the pairs before it
    while (end < n && scores[end] == scores[start]) ++end;
    if (binomial_cdf(start, n, o.alpha) > o.delta) break;
    rule.certified = true;
    rule.margin = scores[start];
    misses_at_margin = start;
    start = end;
  }
  rule.misses = misses_at_margin;
  rule.risk_upper_bound = rule.certified ? binomial_upper_bound(misses_at_margin, n, o.delta) : 1.0;
  if (!rule.certified) {
    const std::size_t needed = improvements_needed(o);
    rule.reason = n < needed ? fmt::format("{} improvement pairs among {} calibration pairs; at least {} are needed to "
                                           "certify a miss rate <= {} with probability {}",
                                           n, calibration.size(), needed, o.alpha, 1 - o.delta)
                             : fmt::format("no margin certified: the widest already misses too many of {} improvements", n);
  }
  return rule;
}

ScreeningRule certify_screening_across(std::span<const std::vector<ScreeningPair>> groups, const ScreeningOptions& o) {
  check_options(o);
  const std::size_t needed = improvements_needed(o);
  const auto improvements_of = [&](const std::vector<ScreeningPair>& g) {
    return static_cast<std::size_t>(
        std::count_if(g.begin(), g.end(), [&](const ScreeningPair& p) { return is_improvement(p, o.tolerance); }));
  };
  std::vector<ScreeningPair> all, small;
  std::vector<const std::vector<ScreeningPair>*> testable;
  for (const auto& g : groups) {
    all.insert(all.end(), g.begin(), g.end());
    if (improvements_of(g) >= needed) testable.push_back(&g);
    else small.insert(small.end(), g.begin(), g.end());
  }
  if (improvements_of(small) >= needed || (testable.empty() && !small.empty())) testable.push_back(&small);
  ScreeningRule widest = certify_screening(all, o);  // checks every pair; its counts are kept
  widest.certified = false;
  widest.margin = std::numeric_limits<double>::infinity();
  widest.risk_upper_bound = 1;
  double bound = 0;
  for (const auto* g : testable) {
    const ScreeningRule r = certify_screening(*g, o);
    if (!r.certified) continue;
    if (!widest.certified || r.margin > widest.margin) widest.margin = r.margin;
    widest.certified = true;
    bound = std::max(bound, r.risk_upper_bound);
  }
  if (widest.certified) {
    widest.risk_upper_bound = bound;
    widest.reason.clear();
    widest.misses = static_cast<std::size_t>(std::count_if(all.begin(), all.end(), [&](const ScreeningPair& p) {
      return is_improvement(p, o.tolerance) && widest.skip(p.forecast_ms, p.incumbent_ms, p.incumbent_forecast_ms);
    }));
  } else if (widest.reason.empty()) {
    widest.reason = fmt::format("no group of the {} certified a margin", groups.size());
  }
  return widest;
}

ScreeningRule certify_screening(std::span<const double> forecast_ms, std::span<const double> measured_ms,
                                double incumbent_ms, const ScreeningOptions& options, double incumbent_forecast_ms) {
  if (forecast_ms.size() != measured_ms.size())
    throw invalid_argument_error(fmt::format("screening calibration needs one measurement per forecast, got {} and {}",
                                             forecast_ms.size(), measured_ms.size()));
  std::vector<ScreeningPair> pairs(forecast_ms.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = {forecast_ms[i], measured_ms[i], incumbent_ms, incumbent_forecast_ms};
  return certify_screening(pairs, options);
}

double ScreeningTally::miss_rate() const noexcept {
  return improvements == 0 ? 0.0 : static_cast<double>(improvements_skipped) / static_cast<double>(improvements);
}

ScreeningTally& ScreeningTally::operator+=(const ScreeningTally& b) noexcept {
  considered += b.considered;
  skipped += b.skipped;
  improvements += b.improvements;
  improvements_skipped += b.improvements_skipped;
  return *this;
}

void tally_screening(ScreeningTally& t, bool skipped, double measured_ms, double incumbent_ms,
                     double tolerance) noexcept {
  ++t.considered;
  if (skipped) ++t.skipped;
  if (is_improvement({0, measured_ms, incumbent_ms}, tolerance)) {
    ++t.improvements;
    if (skipped) ++t.improvements_skipped;
  }
}

}  // namespace gpuforecast
