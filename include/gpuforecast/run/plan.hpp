#pragma once
// What a search is to run: the back end that measures, the strategy with its settings (the
// model specification among them), the budget and seeds, and where its records go. run()
// (run/run.hpp) carries it out; the command line, Python and the benchmarks all build a Plan
// (docs/search.md).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "gpuforecast/core/async_benchmarker.hpp"
#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "gpuforecast/search/events.hpp"
#include "gpuforecast/run/strategy_registry.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class SearchContext;

// Recorded measurements replayed as a benchmarker (simulation mode): the data gives the space
// and the prototype candidate (kernel, device, problem size) of every run.
struct ReplayBackend {
  std::shared_ptr<const SpaceData> data;
  // What each replayed measurement reads from the stored runs: one of them drawn with the seed
  // (measurement noise as recorded), or the stored mean as Kernel Tuner's simulation mode serves
  // it (ReplaySampling).
  ReplaySampling sampling = ReplaySampling::one_run;
  // Each replayed measurement holds for its stored compile + benchmark time times this factor
  // (ReplayOptions::time_scale; 0: no wait).
  double time_scale = 0;
  // > 0: each replayed measurement carries this many repeats of a sentinel
  // (ReplayOptions::sentinel_repeats), which the anomaly monitor tests the device by.
  std::size_t sentinel_repeats = 0;
  // Virtual workers measuring at once (SimulatedFarm: each replayed measurement holds a worker
  // for its stored compile + benchmark time on a virtual clock). 1: the plain sequential search.
  std::size_t workers = 1;
};

// A benchmarker of the caller's (a GPU the caller holds, a farm's rank 0, a Python callable):
// the space and the prototype candidate come with it. Its runs go one after another, never
// side by side. caller_backend() fills it from any Benchmarker or AsyncBenchmarker.
struct CallerBackend {
  TuningSpace space;
  Candidate prototype;  // kernel, device, problem size and spec of every candidate
  std::function<std::vector<Measurement>(std::span<const Candidate>)> measure;
  // Set for a benchmarker that measures several candidates at once (an AsyncBenchmarker: a
  // farm's rank 0): the search then submits a candidate whenever a worker is free.
  struct Async {
    std::function<std::size_t()> workers;
    std::function<std::uint64_t(const Candidate&)> submit;
    std::function<std::vector<Landed>()> wait_any;
  };
  std::optional<Async> async;
  // Set when results reach the caller before the search takes them (a farm's MPI thread): a
  // run's cache registers here and writes each result as it arrives, so that a job killed
  // mid-run loses none that came back; it is called with an empty function when the run ends.
  std::function<void(std::function<void(const Candidate&, const Measurement&)>)> on_result;
  // Set when the back end can lose a worker (a farm's rank): a run registers here, and each loss
  // reaches its observers as a SearchWorkerLost (the event log's rank_lost line); it is called
  // with an empty function when the run ends.
  std::function<void(std::function<void(const SearchWorkerLost&)>)> on_worker_lost;
  // Adds what is known of a configuration before it runs (static features) to each candidate.
  std::function<void(Candidate&)> describe;
  // When set and true for an exception thrown while measuring, that exception ends the search
  // as a normal end would (the observers see the end; a budget enforced by the caller, Kernel
  // Tuner's StopCriterionReached); it is thrown on from run() either way.
  std::function<bool(const std::exception_ptr&)> ends_search;
  // NVML's index of the GPU these measurements run on (NVML counts in PCI order): its clocks,
  // throttle reasons, temperature, ECC and Xid errors, read after each measurement, become
  // anomaly events for every observer (docs/monitoring.md). Where NVML or the GPU is not there,
  // one warning (core/warning.hpp) says so and the search goes on unwatched.
  std::optional<unsigned> watch_gpu;
};

// A caller's back end measuring with `benchmarker` (kept alive by the back end).
template <class B>
  requires Benchmarker<B> || AsyncBenchmarker<B>
[[nodiscard]] CallerBackend caller_backend(TuningSpace space, Candidate prototype, std::shared_ptr<B> benchmarker) {
  CallerBackend c;
  c.space = std::move(space);
  c.prototype = std::move(prototype);
  if constexpr (Benchmarker<B>)
    c.measure = [benchmarker](std::span<const Candidate> candidates) { return benchmarker->measure(candidates); };
  if constexpr (AsyncBenchmarker<B>)
    c.async = CallerBackend::Async{[benchmarker] { return static_cast<std::size_t>(benchmarker->workers()); },
                                   [benchmarker](const Candidate& candidate) { return benchmarker->submit(candidate); },
                                   [benchmarker] { return benchmarker->wait_any(); }};
  return c;
}

using Backend = std::variant<ReplayBackend, CallerBackend>;

// Where each run's records go, by run index (0 .. seeds-1); an empty function writes nothing.
struct RunOutputs {
  // Run i's trace in T4 format, written when it ends.
  std::function<std::string(std::size_t run)> trace_path;
  // Run i's event log (event_log.hpp, JSON Lines), written as it goes.
  std::function<std::string(std::size_t run)> events_path;
  // Run i's Kernel Tuner cache, written as it goes (each measurement flushed as it lands; the
  // replay then measures one candidate at a time).
  std::function<std::string(std::size_t run)> cache_path;
  // With cache_path: a run whose cache exists continues it (resume.hpp): the configurations in
  // it are served from it, and the run ends as an uninterrupted one would have. A missing
  // cache starts the run afresh.
  bool resume = false;
  // Why a run stopped before its budget, for its event log's end line (the command line: the
  // signal that interrupted it); unset: "stopped by an observer".
  std::function<std::string()> stop_reason;
};

// Run i's file for a plan of `runs` runs writing one each: `base` itself for one run; else
// ".seedN" (N = i + 1) inserted before the first ".json" (trace.json.gz -> trace.seed3.json.gz),
// or appended when there is none. Empty for an empty base (nothing written).
[[nodiscard]] std::function<std::string(std::size_t run)> file_per_run(std::string base, std::size_t runs);

struct Plan {
  Backend backend;
  // The replay back end, made the plan's back end when it was another.
  ReplayBackend& replay() {
    if (!std::holds_alternative<ReplayBackend>(backend)) backend.emplace<ReplayBackend>();
    return std::get<ReplayBackend>(backend);
  }
  std::string strategy = "random";
  StrategySettings settings;  // its seed is replaced by each run's seed
  std::size_t budget = 200;   // measurements per run
  double budget_seconds = 0;  // simulated seconds per run (0: no limit)
  std::size_t seeds = 10;
  std::uint64_t first_seed = 1;
  // Runs side by side (0: one per hardware thread). Every run has its own strategy, model,
  // benchmarker and context, seeded by its seed, so the result is the same for any count.
  unsigned threads = 1;
  bool progress = false;  // progress on stderr (only on a terminal): a bar per run, or a
                          // count of finished runs when several run at once
  RunOutputs outputs;
  // Replay: record each run's screening rehearsal (SeedRun::rehearsal), every candidate its model
  // forecast with the stored time, for screening on another device (docs/calibration.md).
  bool rehearsal = false;
  // Each run flags odd GPU behaviour as its measurements land (a measurement far slower than its
  // forecast, a slower or drifting device, repeats that rose: search/anomaly_monitor.hpp, at the
  // levels stats/anomaly_tests.hpp states) and reports it to every observer as a SearchAnomaly,
  // after all of them have seen the measurement: one monitor per run, whoever watches.
  bool anomalies = true;
  // When set, called with each run's context before the run starts, and its index and label
  // ("random seed 3"): the caller adds observers of its own (a dashboard, metrics). Runs may be
  // searched side by side, so what it adds must be safe to call from several threads.
  std::function<void(SearchContext& ctx, std::size_t run, const std::string& label)> observe;
};

}  // namespace gpuforecast
