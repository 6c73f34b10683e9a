#pragma once
// A Plan in, a Result out. A Plan is what a search is to run: the back end that measures, the
// strategy with its settings (the model specification among them), the budget and seeds, and
// where its records go; the command line, Python and the benchmarks all build one
// (docs/search.md). run() carries it out: one search per seed (side by side when the plan
// allows), each with its own strategy, model, benchmarker and context, so the result is the same
// for any thread count.
// Running is apart from reporting: the Result holds every run's trace and counts, and the
// reporters (search/trace.hpp, the command line's text, JSON and SVG) read it.
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

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/run/strategy_registry.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "gpuforecast/search/observer.hpp"
#include "gpuforecast/search/trace.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/stats/screening.hpp"
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

struct SeedRun {
  std::uint64_t seed = 0;
  Trace trace;
  std::vector<double> curve;  // fraction of optimum after 1..budget measurements
  double strategy_seconds = 0;  // wall time of the run
  // With several workers: virtual seconds until the last measurement landed, and the workers'
  // share of that time spent measuring.
  double virtual_seconds = 0;
  double utilisation = 0;
  // A strategy that screens its proposals (surrogate with screening on): every screened
  // proposal against the stored times, so the realised miss rate is known.
  ScreeningTally screening;
  // The same over the rounds whose rule certified a margin: the miss rate where screening acted,
  // not diluted by rounds that skipped nothing.
  ScreeningTally screening_certified;
  // Measured candidates that had a forecast (made before the measurement), and of those the ones
  // whose stored time fell outside the forecast's interval: how the intervals of the candidates
  // a search chose to measure held.
  std::size_t interval_checked = 0;
  std::size_t interval_misses = 0;
  // With Plan::rehearsal: every candidate the model forecast, measured or not, with its stored
  // time and the incumbent of that moment (data/screening_pairs.hpp): the calibration of a
  // search that screens on another device.
  std::vector<ScreeningPair> rehearsal;
  double screening_alpha = 0;        // the alpha its screening rule was given
  std::size_t screened_rounds = 0;   // rounds screened
  std::size_t certified_rounds = 0;  // of those, rounds whose rule certified a margin
  // Anomalies reported to the run's observers (an anomaly monitor's flags, the GPU's health
  // signals on a live search): measurements the run should not trust blindly.
  std::size_t anomalies = 0;
};

// Screening over the runs of a plan (all zero when no run screened).
struct ScreeningSummary {
  double alpha = 0;                  // the runs' screening alpha
  std::size_t runs = 0;              // runs that screened
  double considered = 0;             // proposals screened per run (mean)
  double skipped = 0;                // of those, screened out per run
  double measured = 0;               // measurements per run
  double considered_per_measurement = 0;
  double skipped_share = 0;          // screened out over considered, pooled over the runs
  double certified_rounds = 0;       // share of screened rounds whose rule certified a margin
  double miss_rate = 0;              // realised, mean over runs
  // Realised over the certified rounds only, mean over runs; and the runs where that exceeded alpha.
  double miss_rate_certified = 0;
  std::size_t runs_over_alpha = 0;
  // Measured candidates whose stored time fell outside their forecast's interval, pooled.
  double interval_miss_rate = 0;
};

struct Result {
  double optimum_ms = 0;
  std::vector<SeedRun> runs;
  [[nodiscard]] std::vector<BudgetSummary> summary(std::span<const std::size_t> budgets) const;
  // Over the runs that screened, each judged against the alpha its rule was given.
  [[nodiscard]] ScreeningSummary screening_summary() const;
};

// Throws invalid_argument_error for a plan without data or workers.
[[nodiscard]] Result run(const Plan& plan);

}  // namespace gpuforecast
