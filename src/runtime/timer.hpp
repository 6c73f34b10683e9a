#pragma once
// What the measurement loop times. A SampleTimer runs the kernel once and says how long the
// kernel alone took; a Clock gives wall time for time caps. The CUDA implementation
// (src/runtime/) uses CUPTI activity records cross-checked with CUDA events; tests use
// deterministic fakes.
#include <chrono>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct TimedSample {
  double kernel_ms = 0;  // the sample the statistics use (CUPTI when available, else events)
  double event_ms = -1;  // CUDA event time, -1 when not measured
  double cupti_ms = -1;  // CUPTI activity time, -1 when not measured
};

class SampleTimer {
 public:
  virtual ~SampleTimer() = default;
  // Work before a sample that must not be timed (L2 flush, output reset).
  virtual void prepare() {}
  // Runs the kernel once. Throws sample_error for failures of the candidate.
  virtual TimedSample run_once() = 0;
};

class Clock {
 public:
  virtual ~Clock() = default;
  [[nodiscard]] virtual double now_s() = 0;
};

class SteadyClock final : public Clock {
 public:
  [[nodiscard]] double now_s() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
};

}  // namespace gpuforecast
