#pragma once
// Tests that flag GPU behaviour a search should not trust blindly, each with a stated error rate:
//
//   - SlowOutlierTest: a measurement much slower than its forecast. The one-sided conformal
//     p-value of its log ratio r = log(measured / forecast) against every earlier ratio,
//     p = (1 + #{r_j >= r}) / (n + 1); flagged when p <= level. On exchangeable ratios
//     P(p <= level) <= level, so the false-flag rate is held at the level.
//   - StepDrift: a lasting shift of the ratios (a device that became slower, a throttled clock):
//     one-sided CUSUM, S_t = max(0, S_{t-1} + min(z_t, c) - k), on ratios standardised by the median and
//     MAD of a reference window that ends `lag` measurements back; an alarm when S_t > h, then a
//     restart. With k = 0.5 and a known centre and spread, a stationary Gaussian series alarms
//     about once in 900 measurements at h = 5 and once in 19,000 at h = 8 (Siegmund's
//     approximation of the in-control run length); estimated from 30 ratios they are noisy and
//     the rate is higher (4 alarms in 5,000 at h = 8 in tests/stats/anomaly_tests_test.cpp).
//     A search's ratios are not stationary either (the model learns), so benchmarks/anomalies
//     measures the false alarms it really raises.
//   - SlowDeviceTest: a device that ran its sentinel (a fixed reference kernel timed with every
//     measurement) slower than before. The conformal p-value of the smallest sentinel repeat of
//     this measurement against every earlier sentinel repeat, p = (1 + #{s_j >= min}) / (n + 1);
//     under no change the repeats are exchangeable and the minimum of several is stochastically
//     smaller than any one of them, so P(p <= level) <= level still holds: conservative. A
//     device-wide slowdown lifts every repeat, the minimum too. The reference holds the repeats
//     of measurements not flagged (a flagged one would hide the next slow one behind it).
//   - RepeatRiseTest: repeats that rose while one measurement ran (a clock dropping, a throttle,
//     another job arriving: the later repeats slower than the earlier). The rise is the largest
//     difference of medians, after minus before, over every split of the repeats in the order
//     they ran that leaves a quarter on each side, in log runtime; warm-up (first repeats slow)
//     counts against it. Its one-sided conformal p-value against the rises of this search's
//     earlier measurements, p = (1 + #{rise_j >= rise}) / (n + 1), is flagged at p <= level when
//     the rise is also at least min_rise. A flagged rise joins the reference only `quarantine`
//     measurements later: a clock that stays low for a few measurements is flagged at each of
//     them, not only the first (learning it at once masked 3 of 5 in benchmarks/anomalies), and
//     leaving flagged rises out for good would trim the reference's tail and lift the false-flag
//     rate (to 3% at a level of 1%). Judged against what this kernel on this
//     device does, not against a fixed size: real repeats drift, and by very different amounts
//     (a few tenths of a percent on convolution, a fifth of the runtime on pnpoly's 20 us
//     kernels). On exchangeable measurements the false-flag rate is at most the level; it
//     needs 1 / level - 1 earlier measurements before it can flag at all.
//   - RunTest: a run of measurements each unusual, none enough alone (a clock that stays low for
//     several measurements on a device whose single measurements often step by as much: the
//     device's habit is judged one at a time, a fault lasts). Flagged when each of the last
//     `length` p-values is at most (level / length)^(1 / length): for independent p-values a run
//     ends at a given measurement with probability at most level / length, and flags at most
//     `length` measurements, so the false flags per measurement stay at the level. Conformal
//     p-values against one growing reference are not quite independent: benchmarks/anomalies
//     measures the false flags it really raises.
#include <cstddef>
#include <deque>
#include <utility>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class SlowOutlierTest {
 public:
  explicit SlowOutlierTest(double level = 0.01);
  // The p-value of this ratio against the earlier ones (1 with none); the ratio is then kept.
  double p_value_then_learn(double log_ratio);
  [[nodiscard]] double level() const noexcept { return m_level; }
  [[nodiscard]] bool flags(double p_value) const noexcept { return p_value <= m_level; }
  [[nodiscard]] std::size_t history() const noexcept { return m_sorted.size(); }

 private:
  double m_level;
  std::vector<double> m_sorted;
};

class SlowDeviceTest {
 public:
  explicit SlowDeviceTest(double level = 0.005);
  // The p-value of this measurement's sentinel repeats (ms) against the repeats learned (1 with
  // none). Throws invalid_argument_error for an empty set, NaN or a non-positive repeat.
  [[nodiscard]] double p_value(std::span<const double> sentinel_ms) const;
  // Adds repeats to the reference. The monitor learns only what it did not flag, so that one
  // slow moment does not hide the next, and restarts from the new level after a step.
  void learn(std::span<const double> sentinel_ms);
  void reset() noexcept { m_sorted.clear(); }
  [[nodiscard]] double level() const noexcept { return m_level; }
  [[nodiscard]] bool flags(double p_value) const noexcept { return p_value <= m_level; }
  [[nodiscard]] std::size_t history() const noexcept { return m_sorted.size(); }

 private:
  double m_level;
  std::vector<double> m_sorted;
};

struct StepDriftOptions {
  std::size_t reference = 30;  // ratios in the reference window
  std::size_t lag = 20;        // the window ends this many ratios back, so a step is not absorbed at once
  double k = 0.5;              // allowance, in reference MADs
  double h = 8.0;              // alarm threshold, in reference MADs
  // The most one value adds to the CUSUM, in reference MADs: a single outlier (a slow moment)
  // never alarms alone; a step needs h / (max_increment - k) values in a row (3 by default).
  double max_increment = 4.0;
};

class StepDrift {
 public:
  explicit StepDrift(StepDriftOptions options = {});
  // Adds the next ratio; true when the CUSUM crosses h (the statistic then restarts at 0).
  bool observe(double log_ratio);
  [[nodiscard]] double statistic() const noexcept { return m_s; }
  [[nodiscard]] const StepDriftOptions& options() const noexcept { return m_options; }
  // Forgets the history: after a step that was acted on, the new level becomes the reference
  // (no alarm until reference + lag values have come again).
  void reset() noexcept {
    m_history.clear();
    m_s = 0;
  }

 private:
  StepDriftOptions m_options;
  std::deque<double> m_history;  // the last reference + lag ratios
  double m_s = 0;
};

// The largest rise of one measurement's repeats (ms, in the order they ran), in log runtime:
// NaN with fewer than 8. Throws invalid_argument_error for a NaN or non-positive repeat, naming
// its position.
[[nodiscard]] double repeat_rise(std::span<const double> repeats_ms);

class RepeatRiseTest {
 public:
  explicit RepeatRiseTest(double level = 0.01, double min_rise = 0.05, std::size_t quarantine = 10);
  // The p-value of this rise against the reference (1 with none).
  [[nodiscard]] double p_value(double rise) const;
  [[nodiscard]] bool flags(double rise, double p_value) const noexcept { return p_value <= m_level && rise >= m_min_rise; }
  // Adds this measurement's rise: to the reference at once, or `quarantine` measurements later
  // when it was flagged.
  void learn(double rise, bool flagged);
  [[nodiscard]] std::size_t history() const noexcept { return m_sorted.size(); }

 private:
  double m_level;
  double m_min_rise;
  std::size_t m_quarantine;
  std::vector<double> m_sorted;
  std::deque<std::pair<std::size_t, double>> m_held;  // flagged rises, by the count at which they join
  std::size_t m_count = 0;                            // measurements learned
};

class RunTest {
 public:
  explicit RunTest(double level = 0.01, std::size_t length = 3);
  // Adds one measurement: `unusual` when its p-value is at most threshold() (and whatever else
  // the caller asks of it, such as a least size). True when the last length() all were.
  bool observe(bool unusual);
  [[nodiscard]] double threshold() const noexcept { return m_threshold; }
  [[nodiscard]] std::size_t length() const noexcept { return m_length; }

 private:
  std::size_t m_length;
  double m_threshold;
  std::size_t m_in_a_row = 0;
};

}  // namespace gpuforecast
