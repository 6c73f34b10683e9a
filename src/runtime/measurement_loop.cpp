#include "runtime/detail/measurement_loop.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "runtime/statistics.hpp"

namespace gpuforecast::detail {

LoopReport run_measurement_loop(SampleTimer& timer, const StoppingCriterion& criterion, Clock& clock,
                                const LoopOptions& options, Measurement& m) {
  LoopReport report;
  std::vector<double> disagreement, cupti_ms, event_ms;
  m.samples_ms.clear();
  const double start = clock.now_s();
  for (int i = 0; i < options.warmup; ++i) {
    timer.prepare();
    (void)timer.run_once();
  }
  for (;;) {
    timer.prepare();
    const TimedSample s = timer.run_once();
    m.samples_ms.push_back(s.kernel_ms);
    if (s.event_ms >= 0 && s.cupti_ms > 0) {
      disagreement.push_back(std::abs(s.event_ms - s.cupti_ms) / s.cupti_ms);
      cupti_ms.push_back(s.cupti_ms);
      event_ms.push_back(s.event_ms);
      report.max_timer_disagreement = std::max(report.max_timer_disagreement, disagreement.back());
      ++report.timer_pairs;
    }
    const double elapsed = clock.now_s() - start;
    if (criterion.is_finished(m.samples_ms, elapsed)) {
      report.stop_reason = criterion.reason(m.samples_ms, elapsed);
      m.benchmark_ms = elapsed * 1e3;
      break;
    }
  }
  const MedianInterval mi = median_interval(m.samples_ms, 0.95);
  m.median_ms = mi.median;
  m.ci_low_ms = mi.low;
  m.ci_high_ms = mi.high;
  std::string line = fmt::format("measured {} samples after {} warm-up runs, stopped by {}", m.samples_ms.size(),
                                 options.warmup, report.stop_reason);
  if (report.timer_pairs > 0) {
    report.median_timer_disagreement = median_interval(disagreement).median;
    line += fmt::format("; CUPTI vs events: median disagreement {:.2f}%, max {:.2f}% (medians {:.4f} ms and {:.4f} ms)",
                        100 * report.median_timer_disagreement, 100 * report.max_timer_disagreement,
                        median_interval(cupti_ms).median, median_interval(event_ms).median);
    if (report.max_timer_disagreement > options.timer_tolerance) line += " (above tolerance)";
  }
  if (!m.log.empty() && m.log.back() != '\n') m.log += '\n';
  m.log += line + '\n';
  return report;
}

}  // namespace gpuforecast::detail
