#include "calibration/deferral.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/normal.hpp"
#include "stats/conformal_quantile.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

std::string_view to_string(DeferralLoss l) noexcept {
  return l == DeferralLoss::relative_error ? "relative_error" : "wrong_bin";
}

std::string_view to_string(ConfidenceScore c) noexcept {
  switch (c) {
    case ConfidenceScore::interval_width: return "interval_width";
    case ConfidenceScore::top_bin_probability: return "top_bin_probability";
    case ConfidenceScore::ensemble_spread: return "ensemble_spread";
  }
  return "?";
}

DeferralLoss parse_deferral_loss(std::string_view s) {
  if (s == "relative_error") return DeferralLoss::relative_error;
  if (s == "wrong_bin") return DeferralLoss::wrong_bin;
  throw invalid_argument_error(fmt::format("unknown deferral loss \"{}\" (expected relative_error or wrong_bin)", s));
}

ConfidenceScore parse_confidence_score(std::string_view s) {
  if (s == "interval_width") return ConfidenceScore::interval_width;
  if (s == "top_bin_probability") return ConfidenceScore::top_bin_probability;
  if (s == "ensemble_spread") return ConfidenceScore::ensemble_spread;
  throw invalid_argument_error(fmt::format(
      "unknown confidence score \"{}\" (expected interval_width, top_bin_probability or ensemble_spread)", s));
}

std::array<double, speedup_bin_count> bin_probabilities(const Forecast& f, const Interval& iv, double alpha,
                                                        double reference_ms) {
  check_alpha(alpha);
  if (!(reference_ms > 0) || !std::isfinite(reference_ms))
    throw invalid_argument_error(fmt::format("reference runtime must be positive and finite, got {} ms", reference_ms));
  if (!(f.median_ms > 0)) throw invalid_argument_error(fmt::format("forecast median must be positive, got {}", f.median_ms));
  const double z = detail::normal_quantile(1 - alpha / 2);
  const double m = std::log(f.median_ms);
  constexpr double wide = 1e3;  // an unbounded side: (almost) no information
  const double s_lo = iv.low_ms > 0 ? std::max(0.0, (m - std::log(iv.low_ms)) / z) : wide;
  const double s_hi = std::isfinite(iv.high_ms) ? std::max(0.0, (std::log(iv.high_ms) - m) / z) : wide;
  auto cdf = [&](double x) {  // P(log t <= x)
    const double s = x < m ? s_lo : s_hi;
    if (s == 0) return x < m ? 0.0 : 1.0;
    return detail::normal_cdf((x - m) / s);
  };
  const double lr = std::log(reference_ms);
  const double c = std::log(2.0) / 2;
  std::array<double, speedup_bin_count> p{};
  // Bin b (2..7) holds log t in (lr - (b-3)c, lr - (b-4)c]; bin 1 everything above, bin 8 below.
  p[0] = 1 - cdf(lr + 2 * c);
  for (int b = 2; b <= 7; ++b) p[static_cast<std::size_t>(b - 1)] = cdf(lr - (b - 4) * c) - cdf(lr - (b - 3) * c);
  p[7] = cdf(lr - 4 * c);
  double sum = 0;
  for (auto& v : p) sum += (v = std::max(v, 0.0));
  for (auto& v : p) v /= sum;
  return p;
}

double relative_error_loss(const Forecast& f, double observed_ms, double tolerance) {
  if (!(observed_ms > 0) || !std::isfinite(observed_ms))
    throw invalid_argument_error(fmt::format("observed runtime must be positive and finite, got {} ms", observed_ms));
  return std::abs(f.median_ms - observed_ms) / observed_ms > tolerance ? 1.0 : 0.0;
}

double wrong_bin_loss(const Forecast& f, double observed_ms, double reference_ms) {
  if (!f.bin_probabilities) throw invalid_argument_error("wrong_bin loss needs bin probabilities (give a reference)");
  const auto& p = *f.bin_probabilities;
  const auto top = std::max_element(p.begin(), p.end()) - p.begin() + 1;
  return top == speedup_bin(reference_ms, observed_ms) ? 0.0 : 1.0;
}

double confidence_score(ConfidenceScore c, const Forecast& f, const Interval& iv) {
  switch (c) {
    case ConfidenceScore::interval_width:
      if (!(iv.low_ms > 0) || !std::isfinite(iv.high_ms)) return -std::numeric_limits<double>::infinity();
      return -std::log(iv.high_ms / iv.low_ms);
    case ConfidenceScore::top_bin_probability:
      if (!f.bin_probabilities)
        throw invalid_argument_error("top_bin_probability confidence needs bin probabilities (give a reference)");
      return *std::max_element(f.bin_probabilities->begin(), f.bin_probabilities->end());
    case ConfidenceScore::ensemble_spread: return -effective_spread(f);
  }
  return 0;
}

}  // namespace gpuforecast
