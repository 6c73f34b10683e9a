#include "gpuforecast/stats/anomaly_tests.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "gpuforecast/core/error.hpp"
#include "stats/normal.hpp"

namespace gpuforecast {

namespace {

double median_of(std::vector<double> v) {
  const std::size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
  const double hi = v[n / 2];
  if (n % 2) return hi;
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2)) + hi) / 2;
}

// 1.4826 MAD: the standard deviation of a normal sample, robust to the outliers being looked for.
double robust_sd(const std::vector<double>& v, double centre) {
  std::vector<double> d;
  d.reserve(v.size());
  for (double x : v) d.push_back(std::abs(x - centre));
  return 1.4826 * median_of(std::move(d));
}

}  // namespace

SlowOutlierTest::SlowOutlierTest(double level) : m_level(level) {
  if (!(level > 0 && level < 1)) throw invalid_argument_error(fmt::format("outlier level must lie in (0, 1), got {}", level));
}

double SlowOutlierTest::p_value_then_learn(double r) {
  if (!std::isfinite(r)) throw invalid_argument_error(fmt::format("log ratio of measured to forecast is {}", r));
  // #{r_j >= r}: everything from the first element not below r.
  const auto at = std::lower_bound(m_sorted.begin(), m_sorted.end(), r);
  const auto as_large = static_cast<double>(m_sorted.end() - at);
  const double p = (1 + as_large) / (static_cast<double>(m_sorted.size()) + 1);
  m_sorted.insert(std::upper_bound(m_sorted.begin(), m_sorted.end(), r), r);
  return p;
}

SlowDeviceTest::SlowDeviceTest(double level) : m_level(level) {
  if (!(level > 0 && level < 1)) throw invalid_argument_error(fmt::format("slow-device level must lie in (0, 1), got {}", level));
}

namespace {
void check_sentinel(std::span<const double> sentinel_ms) {
  if (sentinel_ms.empty()) throw invalid_argument_error("a sentinel measurement without repeats");
  for (std::size_t i = 0; i < sentinel_ms.size(); ++i)
    if (!(sentinel_ms[i] > 0) || !std::isfinite(sentinel_ms[i]))
      throw invalid_argument_error(fmt::format("sentinel repeat {} is {} ms: it must be a positive number", i, sentinel_ms[i]));
}
}  // namespace

double SlowDeviceTest::p_value(std::span<const double> sentinel_ms) const {
  check_sentinel(sentinel_ms);
  const double smallest = *std::min_element(sentinel_ms.begin(), sentinel_ms.end());
  const auto at = std::lower_bound(m_sorted.begin(), m_sorted.end(), smallest);
  const auto as_large = static_cast<double>(m_sorted.end() - at);
  return (1 + as_large) / (static_cast<double>(m_sorted.size()) + 1);
}

void SlowDeviceTest::learn(std::span<const double> sentinel_ms) {
  check_sentinel(sentinel_ms);
  for (const double x : sentinel_ms) m_sorted.insert(std::upper_bound(m_sorted.begin(), m_sorted.end(), x), x);
}

StepDrift::StepDrift(StepDriftOptions o) : m_options(o) {
  if (o.reference < 5) throw invalid_argument_error(fmt::format("drift reference window must hold >= 5 ratios, got {}", o.reference));
  if (!(o.k >= 0) || !(o.h > 0)) throw invalid_argument_error(fmt::format("CUSUM needs k >= 0 and h > 0, got {} and {}", o.k, o.h));
  if (!(o.max_increment > o.k)) throw invalid_argument_error(fmt::format("CUSUM max_increment must exceed k, got {} and {}", o.max_increment, o.k));
}

bool StepDrift::observe(double r) {
  if (!std::isfinite(r)) throw invalid_argument_error(fmt::format("log ratio of measured to forecast is {}", r));
  const std::size_t span = m_options.reference + m_options.lag;
  bool alarm = false;
  if (m_history.size() >= span) {
    const std::vector<double> ref(m_history.begin(), m_history.begin() + static_cast<std::ptrdiff_t>(m_options.reference));
    const double centre = median_of(ref);
    const double sd = std::max(robust_sd(ref, centre), 1e-3);  // a floor: replayed runtimes can repeat exactly
    m_s = std::max(0.0, m_s + std::min((r - centre) / sd, m_options.max_increment) - m_options.k);
    if (m_s > m_options.h) {
      alarm = true;
      m_s = 0;
    }
  }
  m_history.push_back(r);
  if (m_history.size() > span) m_history.pop_front();
  return alarm;
}

std::optional<RepeatAnomaly> repeat_anomaly(std::span<const double> repeats, const RepeatAnomalyOptions& o) {
  for (std::size_t i = 0; i < repeats.size(); ++i)
    if (!(repeats[i] > 0) || !std::isfinite(repeats[i]))
      throw invalid_argument_error(fmt::format("repeat {} of {} is {} ms: need a positive finite time", i,
                                               repeats.size(), repeats[i]));
  const std::size_t n = repeats.size();
  if (n < std::max<std::size_t>(o.min_repeats, 4)) return std::nullopt;

  // Mann-Kendall: S = sum over pairs of sign(x_j - x_i), variance n(n-1)(2n+5)/18 without ties.
  double s = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) s += (repeats[j] > repeats[i]) - (repeats[j] < repeats[i]);
  const double nn = static_cast<double>(n);
  const double var = nn * (nn - 1) * (2 * nn + 5) / 18;
  const double z = (s - (s > 0 ? 1 : s < 0 ? -1 : 0)) / std::sqrt(var);  // continuity correction
  const double p = 2 * (1 - detail::normal_cdf(std::abs(z)));

  std::vector<double> x(repeats.begin(), repeats.end());
  for (auto& v : x) v = std::log(v);
  std::sort(x.begin(), x.end());
  const std::size_t quarter = (n + 3) / 4;
  double best_gap = 0;
  std::size_t split = 0;
  for (std::size_t k = quarter; k + quarter <= n; ++k) {
    const double gap = x[k] - x[k - 1];
    if (gap > best_gap) best_gap = gap, split = k;
  }
  if (split > 0 && best_gap > o.min_gap) {
    const std::vector<double> lo(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(split));
    const std::vector<double> hi(x.begin() + static_cast<std::ptrdiff_t>(split), x.end());
    const double spread = std::max({robust_sd(lo, median_of(lo)), robust_sd(hi, median_of(hi)), 1e-4});
    if (best_gap > o.gap_factor * spread)
      return RepeatAnomaly{"bimodal", best_gap, 1.0,
                           fmt::format("{} of {} repeats {:.1f}% slower than the other {} (gap {:.1f} x the spread "
                                       "within each group)",
                                       n - split, n, 100 * (std::exp(best_gap) - 1), split, best_gap / spread)};
  }
  const std::size_t third = n / 3;
  const double first = median_of(std::vector<double>(repeats.begin(), repeats.begin() + static_cast<std::ptrdiff_t>(third)));
  const double last = median_of(std::vector<double>(repeats.end() - static_cast<std::ptrdiff_t>(third), repeats.end()));
  const double change = std::log(last / first);
  if (p <= o.trend_level && std::abs(change) >= o.min_change)
    return RepeatAnomaly{"trend", z, p,
                         fmt::format("repeats {} as they ran: the last third {:+.1f}% from the first (Mann-Kendall "
                                     "z = {:.2f}, p = {:.2g})",
                                     z > 0 ? "slow down" : "speed up", 100 * (std::exp(change) - 1), z, p)};
  return std::nullopt;
}

}  // namespace gpuforecast
