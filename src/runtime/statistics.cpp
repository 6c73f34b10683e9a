#include "runtime/statistics.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {
// P(Bin(n, 1/2) <= k) in log space, so n in the thousands does not underflow.
double binom_half_cdf(std::size_t k, std::size_t n) {
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  double log_term = log_half_n, sum = std::exp(log_half_n);
  for (std::size_t i = 1; i <= k; ++i) {
    log_term += std::log(static_cast<double>(n - i + 1)) - std::log(static_cast<double>(i));
    sum += std::exp(log_term);
  }
  return std::min(sum, 1.0);
}

// Largest k >= 0 with P(Bin(n,1/2) <= k-1) <= tail; 0 means no order-statistic interval.
std::size_t order_index(std::size_t n, double tail) {
  std::size_t k = 0;
  while (k + 1 <= n / 2 + 1 && binom_half_cdf(k, n) <= tail) ++k;
  return k;
}

void check_confidence(double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw invalid_argument_error(fmt::format("confidence must be in (0, 1), got {}", confidence));
}
}  // namespace

MedianInterval median_interval(std::span<const double> samples, double confidence) {
  check_confidence(confidence);
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (!std::isfinite(samples[i]) || samples[i] < 0)
      throw invalid_argument_error(
          fmt::format("sample {} is {} ms: runtimes must be finite and non-negative", i, samples[i]));
  MedianInterval r;
  if (samples.empty()) return r;
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  r.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  const std::size_t k = order_index(n, (1 - confidence) / 2);
  if (k <= 1) {
    // Only [min, max] (k == 1) or nothing: no evidence of precision yet.
    r.low = v.front();
    r.high = v.back();
    r.relative_half_width = std::numeric_limits<double>::infinity();
    return r;
  }
  r.low = v[k - 1];
  r.high = v[n - k];
  r.relative_half_width = r.median > 0 ? (r.high - r.low) / 2 / r.median
                                       : (r.high > r.low ? std::numeric_limits<double>::infinity() : 0.0);
  return r;
}

std::size_t min_samples_for_interval(double confidence) {
  check_confidence(confidence);
  for (std::size_t n = 1; n < 100000; ++n)
    if (order_index(n, (1 - confidence) / 2) >= 2) return n;
  return 100000;
}

}  // namespace gpuforecast
