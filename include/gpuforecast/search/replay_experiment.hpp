#pragma once
// Running a strategy on replayed data over many seeds: what `gpuforecast search --replay` and
// benchmarks/search_efficiency do.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuforecast/calibration/screening.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "gpuforecast/search/search_report.hpp"
#include "gpuforecast/search/strategy_registry.hpp"
#include "gpuforecast/search/trace.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class SearchContext;

// Which configurations a replayed search may propose (`gpuforecast search --space`).
enum class ReplaySpace {
  automatic,  // t1 when the data has constraints or a T1 file is given or found, else cached
  t1,         // the data's parameters constrained by the T1 file's Conditions (one must exist)
  cached,     // the configurations the file holds with a valid time: Kernel Tuner's tune_cache space
  cartesian,  // every combination of the data's parameter values, unconstrained; those the file
              // lacks are measured as failed, so a strategy is charged for them
};
// "auto", "t1", "cached", "cartesian"; throws invalid_argument_error listing them.
[[nodiscard]] ReplaySpace parse_replay_space(std::string_view name);
[[nodiscard]] std::string_view replay_space_name(ReplaySpace space) noexcept;

// Reads a cache or T4 file for replay and sets its space as `space` says. A T1 file for the
// kernel is looked for where the benchmark_hub layout puts it (<root>/kernels/<kernel>.json
// beside <root>/cachefiles/<kernel>/); `t1_path` overrides the lookup. With a T1 file its
// Conditions are attached, so that strategies draw from the valid configurations only, as
// Kernel Tuner does; without one (a cache from the wild) the default is the cached space, so
// that strategies are not charged for configurations the data never had.
[[nodiscard]] SpaceData load_replay_space(const std::string& path, const std::string& t1_path = {},
                                          ReplaySpace space = ReplaySpace::automatic);
// Which of the above a loaded space is: "cached (N configurations)", "t1 (N constraints)" or
// "cartesian (N configurations)", for reports.
[[nodiscard]] std::string describe_replay_space(const SpaceData& data);

struct ReplayExperiment {
  std::shared_ptr<const SpaceData> data;
  std::string strategy = "random";
  StrategySettings settings;  // its seed is replaced by each run's seed
  std::size_t budget = 200;   // measurements per run
  double budget_seconds = 0;  // simulated seconds per run (0: no limit)
  std::size_t seeds = 10;
  std::uint64_t first_seed = 1;
  // What each replayed measurement reads from the stored runs: one of them drawn with the seed
  // (measurement noise as recorded), or the stored mean as Kernel Tuner's simulation mode serves
  // it (ReplaySampling).
  ReplaySampling sampling = ReplaySampling::one_run;
  // Runs side by side (0: one per hardware thread). Every run has its own strategy, model,
  // benchmarker and context, seeded by its seed, so the result is the same for any count.
  unsigned threads = 1;
  bool progress = false;      // progress on stderr (only on a terminal): a bar per run, or a
                              // count of finished runs when several run at once
  // When set, run i's trace is written in T4 format to trace_path(i) when it ends.
  std::function<std::string(std::size_t run)> trace_path;
  // When set, run i writes its event log (event_log.hpp, JSON Lines) to events_path(i) as it goes.
  std::function<std::string(std::size_t run)> events_path;
  // When set, called with each run's context before the run starts, and its index and label
  // ("random seed 3"): the caller adds observers of its own (a dashboard, metrics). Runs may be
  // searched side by side, so what it adds must be safe to call from several threads.
  std::function<void(SearchContext& ctx, std::size_t run, const std::string& label)> observe;
  // When set, run i writes a Kernel Tuner cache to cache_path(i) as it goes (each measurement
  // flushed as it lands; the replay then measures one candidate at a time).
  std::function<std::string(std::size_t run)> cache_path;
  // With cache_path: a run whose cache exists continues it (resume.hpp): the configurations in
  // it are served from it, and the run ends as an uninterrupted one would have. A missing
  // cache starts the run afresh.
  bool resume = false;
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

struct ReplayRun {
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
  std::size_t screened_rounds = 0;   // rounds screened
  std::size_t certified_rounds = 0;  // of those, rounds whose rule certified a margin
};

// Screening over the runs of an experiment (all zero when no run screened).
struct ScreeningSummary {
  std::size_t runs = 0;              // runs that screened
  double considered = 0;             // proposals screened per run (mean)
  double skipped = 0;                // of those, screened out per run
  double measured = 0;               // measurements per run
  double considered_per_measurement = 0;
  double certified_rounds = 0;       // share of screened rounds whose rule certified a margin
  double miss_rate = 0;              // realised, mean over runs
  // Realised over the certified rounds only, mean over runs; and the runs where that exceeded alpha.
  double miss_rate_certified = 0;
  std::size_t runs_over_alpha = 0;
};

struct ReplayResult {
  double optimum_ms = 0;
  std::vector<ReplayRun> runs;
  [[nodiscard]] std::vector<BudgetSummary> summary(std::span<const std::size_t> budgets) const;
  [[nodiscard]] ScreeningSummary screening_summary(double alpha) const;
};

[[nodiscard]] ReplayResult run_replay_experiment(const ReplayExperiment& experiment);

}  // namespace gpuforecast
