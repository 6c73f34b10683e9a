#pragma once
// Running a strategy on replayed data over many seeds: what `gpuforecast search --replay` and
// benchmarks/search_efficiency do.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/search/search_report.hpp"
#include "gpuforecast/search/strategy_registry.hpp"
#include "gpuforecast/search/trace.hpp"

namespace gpuforecast {

// Reads a cache or T4 file for replay. When its space has no constraints and a T1 file for the
// kernel lies where the benchmark_hub layout puts it (<root>/kernels/<kernel>.json beside
// <root>/cachefiles/<kernel>/), its Conditions are attached, so that strategies draw from the
// valid configurations only, as Kernel Tuner does. `t1_path` overrides the lookup.
[[nodiscard]] SpaceData load_replay_space(const std::string& path, const std::string& t1_path = {});

struct ReplayExperiment {
  std::shared_ptr<const SpaceData> data;
  std::string strategy = "random";
  StrategySettings settings;  // its seed is replaced by each run's seed
  std::size_t budget = 200;   // measurements per run
  double budget_seconds = 0;  // simulated seconds per run (0: no limit)
  std::size_t seeds = 10;
  std::uint64_t first_seed = 1;
  // Runs side by side (0: one per hardware thread). Every run has its own strategy, model,
  // benchmarker and context, seeded by its seed, so the result is the same for any count.
  unsigned threads = 1;
  bool progress = false;      // progress on stderr (only on a terminal): a bar per run, or a
                              // count of finished runs when several run at once
  // When set, run i's trace is written in T4 format to trace_path(i) when it ends.
  std::function<std::string(std::size_t run)> trace_path;
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
};

struct ReplayRun {
  std::uint64_t seed = 0;
  Trace trace;
  std::vector<double> curve;  // fraction of optimum after 1..budget measurements
  double strategy_seconds = 0;  // wall time of the run
};

struct ReplayResult {
  double optimum_ms = 0;
  std::vector<ReplayRun> runs;
  [[nodiscard]] std::vector<BudgetSummary> summary(std::span<const std::size_t> budgets) const;
};

[[nodiscard]] ReplayResult run_replay_experiment(const ReplayExperiment& experiment);

}  // namespace gpuforecast
