#pragma once
// The measurement loop: warm-up, then samples until the stopping criterion says stop. It fills
// a Measurement (samples, median, 95% CI of the median, benchmark time) and never prints.
#include <string>

#include "gpuforecast/core/measurement.hpp"
#include "runtime/stopping_criterion.hpp"
#include "runtime/timer.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {
namespace detail {

struct LoopOptions {
  int warmup = 2;  // untimed runs first (clocks up, instruction cache, TLB)
  // Largest relative disagreement between CUPTI and event times tolerated before the loop
  // notes it in the log (they are compared when both are present).
  double timer_tolerance = 0.05;
};

struct LoopReport {
  std::string stop_reason;         // which criterion fired
  double max_timer_disagreement = 0;     // max |event - cupti| / cupti over samples with both
  double median_timer_disagreement = 0;  // median of the same
  int timer_pairs = 0;             // samples where both timers reported
};

// Fills m.samples_ms, median_ms, ci_low_ms, ci_high_ms, benchmark_ms (warm-up included) and
// appends a line to m.log. Exceptions from the timer propagate (the caller maps them to a status).
LoopReport run_measurement_loop(SampleTimer& timer, const StoppingCriterion& criterion, Clock& clock,
                                const LoopOptions& options, Measurement& m);

}  // namespace detail
}  // namespace gpuforecast
