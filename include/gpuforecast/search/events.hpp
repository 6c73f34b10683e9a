#pragma once
// What a SearchContext tells its observers, in this order: one SearchBegin before the first
// measurement, a SearchMeasured for each measurement as it lands, a SearchRound each time a
// batch handed to evaluate() has been answered, and one SearchEnd when the caller calls
// SearchContext::finish(). A strategy that ranks its proposals by a model (surrogate-filtered
// search) reports the model's decisions on them as a SearchForecasted, and, with screening on,
// the screening as a SearchScreened, both before the round it chose is measured. Events refer to
// the context's own data: valid during the call only.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/stats/screening.hpp"
#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/decision.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/search/budget.hpp"
#include "gpuforecast/search/trace.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct SearchBegin {
  const TuningSpace& space;
  const Candidate& prototype;  // kernel, device, problem size of every candidate
  Budget budget;
};

struct SearchMeasured {
  std::size_t index;  // 1-based measurement count, as TraceEntry::index
  const Config& config;
  const Measurement& measurement;
  const Trace& trace;  // everything measured so far, this measurement last
};

struct SearchRound {
  std::size_t round;                          // 1-based count of evaluate() calls
  std::span<const Config> configs;            // as the strategy handed them over
  std::span<const Measurement> measurements;  // the answers, in the same order
  const Trace& trace;
};

struct SearchForecasted {
  std::span<const Config> proposed;     // every candidate the model decided on this round
  std::span<const Decision> decisions;  // one per proposed candidate, in the same order
  double seconds = 0;                   // wall time the model took to decide them
};

struct SearchScreened {
  double incumbent_ms;                // the best measured when the round was screened
  const ScreeningRule& rule;          // as certified for this round
  std::span<const Config> proposed;   // every candidate of the round
  std::span<const Decision> decisions;  // the model's, one per proposed candidate
  const std::vector<bool>& skipped;   // the rule's verdict, one per proposed candidate
};

struct SearchEnd {
  const Trace& trace;
  bool stopped = false;  // an observer asked the search to stop
};

// Odd GPU behaviour found while the search runs, reported beside the measurement it was raised
// at, never in place of it (SearchContext::report_anomaly): a measurement far slower than its
// forecast, a slower or drifting device (search/anomaly_monitor.hpp), or what the GPU itself
// says (NVML: throttling, temperature, ECC, Xid).
struct SearchAnomaly {
  std::size_t index = 0;  // the measurement (1-based, as the trace) it was raised at
  std::string kind;       // "slow_outlier", "slow_device", "step_drift", "repeat_rise"; "gpu_*" from NVML
  Config config;
  double statistic = 0;   // the log ratio, the sentinel's log, the CUSUM threshold or the repeats' rise
  double p_value = 1;     // where the test has one (1 otherwise)
  std::string detail;     // one sentence
};

// A worker that measured for the search was lost (a farm's rank that stopped answering): which,
// what it held and where that went. Raised on the benchmarker's thread and delivered on the
// search's (SearchContext::report_worker_lost), with the next result or at the end.
struct SearchWorkerLost {
  std::size_t index = 0;       // measurements recorded when it was delivered
  int worker = 0;              // the farm's rank
  std::string device;          // what the worker said it measures on
  std::string reason;          // "no heartbeat for 10 s while measuring"
  std::optional<Config> held;  // the candidate it was measuring, if any
  std::string went;            // held's fate: "requeued" (another worker measures it), "failed" (lost on
                               // every attempt), "" when it held none
};

}  // namespace gpuforecast
