#include "stats/anomaly_tests.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpuforecast/core/error.hpp"

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

// The one-sided conformal p-value of x against the sorted reference, (1 + #{r_j >= x}) / (n + 1):
// every test below judges its statistic so.
double conformal_p_at_least(const std::vector<double>& sorted, double x) {
  const auto as_large = static_cast<double>(sorted.end() - std::lower_bound(sorted.begin(), sorted.end(), x));
  return (1 + as_large) / (static_cast<double>(sorted.size()) + 1);
}

void insert_sorted(std::vector<double>& sorted, double x) { sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), x), x); }

}  // namespace

SlowOutlierTest::SlowOutlierTest(double level) : m_level(level) {
  if (!(level > 0 && level < 1)) throw invalid_argument_error(fmt::format("outlier level must lie in (0, 1), got {}", level));
}

double SlowOutlierTest::p_value_then_learn(double r) {
  if (!std::isfinite(r)) throw invalid_argument_error(fmt::format("log ratio of measured to forecast is {}", r));
  const double p = conformal_p_at_least(m_sorted, r);
  insert_sorted(m_sorted, r);
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
  return conformal_p_at_least(m_sorted, *std::min_element(sentinel_ms.begin(), sentinel_ms.end()));
}

void SlowDeviceTest::learn(std::span<const double> sentinel_ms) {
  check_sentinel(sentinel_ms);
  for (const double x : sentinel_ms) insert_sorted(m_sorted, x);
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

double repeat_rise(std::span<const double> repeats) {
  for (std::size_t i = 0; i < repeats.size(); ++i)
    if (!(repeats[i] > 0) || !std::isfinite(repeats[i]))
      throw invalid_argument_error(fmt::format("repeat {} of {} is {} ms: need a positive finite time", i,
                                               repeats.size(), repeats[i]));
  const std::size_t n = repeats.size();
  if (n < 8) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x(repeats.begin(), repeats.end());
  for (auto& v : x) v = std::log(v);
  const std::size_t quarter = (n + 3) / 4;
  double rise = -std::numeric_limits<double>::infinity();
  for (std::size_t k = quarter; k + quarter <= n; ++k) {
    const auto split = x.begin() + static_cast<std::ptrdiff_t>(k);
    rise = std::max(rise, median_of(std::vector<double>(split, x.end())) - median_of(std::vector<double>(x.begin(), split)));
  }
  return rise;
}

RepeatRiseTest::RepeatRiseTest(double level, double min_rise, std::size_t quarantine)
    : m_level(level), m_min_rise(min_rise), m_quarantine(quarantine) {
  if (!(level > 0 && level < 1)) throw invalid_argument_error(fmt::format("repeat-rise level must lie in (0, 1), got {}", level));
  if (!(min_rise >= 0)) throw invalid_argument_error(fmt::format("repeat-rise min_rise must be >= 0, got {}", min_rise));
}

double RepeatRiseTest::p_value(double rise) const {
  if (!std::isfinite(rise)) throw invalid_argument_error(fmt::format("a repeat rise of {}", rise));
  return conformal_p_at_least(m_sorted, rise);
}

void RepeatRiseTest::learn(double rise, bool flagged) {
  if (!std::isfinite(rise)) throw invalid_argument_error(fmt::format("a repeat rise of {}", rise));
  ++m_count;
  while (!m_held.empty() && m_held.front().first <= m_count) {
    insert_sorted(m_sorted, m_held.front().second);
    m_held.pop_front();
  }
  if (flagged) m_held.emplace_back(m_count + m_quarantine, rise);
  else insert_sorted(m_sorted, rise);
}

RunTest::RunTest(double level, std::size_t length) : m_length(length) {
  if (!(level > 0 && level < 1)) throw invalid_argument_error(fmt::format("run-test level must lie in (0, 1), got {}", level));
  if (length < 2) throw invalid_argument_error(fmt::format("a run must be at least 2 measurements long, got {}", length));
  m_threshold = std::pow(level / static_cast<double>(length), 1.0 / static_cast<double>(length));
}

bool RunTest::observe(bool unusual) {
  m_in_a_row = unusual ? m_in_a_row + 1 : 0;
  return m_in_a_row >= m_length;
}

}  // namespace gpuforecast
