#pragma once
// The outcome of measuring one candidate. Failure is a status, never an exception.
#include <string>
#include <string_view>
#include <vector>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

enum class Status { ok, compile_failed, launch_failed, runtime_failed, invalid, timeout };

[[nodiscard]] std::string_view to_string(Status s) noexcept;
// Parses our names and Kernel Tuner's ("CompilationFailedConfig", "RuntimeFailedConfig",
// "InvalidConfig"); throws invalid_argument_error for anything else.
[[nodiscard]] Status parse_status(std::string_view s);

struct Measurement {
  Status status = Status::invalid;
  std::vector<double> samples_ms;  // individual kernel runtimes
  double median_ms = 0;            // of samples (for imported data with only a mean: that mean)
  double ci_low_ms = 0;            // 95% confidence interval of the median
  double ci_high_ms = 0;
  double compile_ms = 0;
  double benchmark_ms = 0;         // time spent measuring (wall), excluding compile
  double cost_s = 0;               // what this measurement cost the budget, in seconds
  std::string reason;              // failure reason as recorded (e.g. "RuntimeFailedConfig")
  std::string log;                 // compiler log, error text
  // Repeats of the benchmarker's sentinel, a fixed reference kernel timed right after this
  // measurement (ms; empty when the benchmarker has none). What changes the device for every
  // kernel (a clock drop, throttling, another job) moves it too, whatever the configuration,
  // so AnomalyMonitor tells a slow device from a slow configuration by it.
  std::vector<double> sentinel_ms;

  [[nodiscard]] bool ok() const noexcept { return status == Status::ok; }
};

// A failure the GPU or its compiler caused (compile_failed, launch_failed, runtime_failed,
// timeout), not a configuration the space rules out (invalid).
[[nodiscard]] bool is_fault(Status s) noexcept;
// What kind of fault, in the event log's words: "compile_error", "launch_failure", "crash",
// "hang"; "" for a status that is no fault.
[[nodiscard]] std::string_view fault_kind(Status s) noexcept;
// The line of a failed measurement's log that says what went wrong: the first naming an error
// (a compiler's "error:" line), else its first non-empty line, else the recorded reason.
[[nodiscard]] std::string fault_detail(const Measurement& m);

// Median and a distribution-free 95% CI of the median (order statistics) from samples.
// Fills median_ms, ci_low_ms, ci_high_ms. Throws invalid_argument_error on NaN/negative.
void summarise_samples(Measurement& m);

}  // namespace gpuforecast
