#include "calibration/nonconformity.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

std::string_view to_string(ConformalScore s) noexcept {
  switch (s) {
    case ConformalScore::normalised_residual: return "split";
    case ConformalScore::cqr: return "cqr";
  }
  return "?";
}

ConformalScore parse_conformal_score(std::string_view s) {
  if (s == "split" || s == "normalised_residual") return ConformalScore::normalised_residual;
  if (s == "cqr") return ConformalScore::cqr;
  throw invalid_argument_error(fmt::format("unknown conformal method \"{}\" (expected split or cqr)", s));
}

double effective_spread(const Forecast& f) noexcept {
  constexpr double floor = 1e-6;
  if (std::isfinite(f.spread) && f.spread > 0) return std::max(f.spread, floor);
  if (f.lower_ms > 0 && f.upper_ms > f.lower_ms && std::isfinite(f.upper_ms))
    return std::max((std::log(f.upper_ms) - std::log(f.lower_ms)) / 3.289707253902945, floor);
  return 1.0;
}

namespace {
void check_positive(double v, const char* what) {
  if (!(v > 0) || !std::isfinite(v))
    throw invalid_argument_error(fmt::format("{} must be a positive finite runtime in ms, got {}", what, v));
}
}  // namespace

double nonconformity(ConformalScore s, const Forecast& f, double observed_ms) {
  check_positive(observed_ms, "observed runtime");
  const double lt = std::log(observed_ms);
  switch (s) {
    case ConformalScore::normalised_residual:
      check_positive(f.median_ms, "forecast median");
      return std::abs(lt - std::log(f.median_ms)) / effective_spread(f);
    case ConformalScore::cqr:
      check_positive(f.lower_ms, "forecast 5% quantile");
      check_positive(f.upper_ms, "forecast 95% quantile");
      return std::max(std::log(f.lower_ms) - lt, lt - std::log(f.upper_ms));
  }
  return 0;
}

Interval conformal_interval(ConformalScore s, const Forecast& f, double q) {
  if (std::isnan(q)) throw invalid_argument_error("conformal quantile is NaN");
  if (q == std::numeric_limits<double>::infinity()) return {0.0, std::numeric_limits<double>::infinity()};
  switch (s) {
    case ConformalScore::normalised_residual: {
      const double r = std::max(q, 0.0) * effective_spread(f);
      return {f.median_ms * std::exp(-r), f.median_ms * std::exp(r)};
    }
    case ConformalScore::cqr: {
      double lo = std::log(f.lower_ms) - q;
      double hi = std::log(f.upper_ms) + q;
      if (lo > hi) lo = hi = 0.5 * (lo + hi);  // an over-wide head shrunk past a point
      return {std::exp(lo), std::exp(hi)};
    }
  }
  return {};
}

}  // namespace gpuforecast
