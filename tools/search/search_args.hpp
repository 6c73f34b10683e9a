#pragma once
// `gpuforecast search`: its options, checked and typed once, and the Plan pieces every way of
// searching (replay, live on a GPU, an MPI farm) builds from them.
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/run/run.hpp"
#if defined(GPUFORECAST_HAVE_CUDA_RUNTIME)
#include "gpuforecast/runtime/cuda_benchmarker.hpp"
#endif
#include "run_monitor.hpp"

namespace gpuforecast::cli {

struct SearchArgs {
  std::string replay;
  std::string t1;
  std::string features;
  std::string space = "auto";
  std::string sampling = "one_run";
  std::string kernel;
  std::vector<std::string> strategies{"surrogate"};
  std::string model;
  std::string surrogate = "default";
  std::size_t budget = 200;
  double budget_seconds = 0;
  std::size_t seeds = 10;
  std::uint64_t first_seed = 1;
  unsigned threads = 0;  // replay runs side by side; 0: one per hardware thread
  std::string trace;
  std::string events;  // JSON Lines event log (event_log.hpp)
  std::string cache;
  bool resume = false;
  double time_scale = 0;
  std::size_t sentinel_repeats = 0;
  unsigned nvml_index = 0;  // live: the GPU whose health NVML reads
  double kernel_timeout_s = 10;  // live: a hung kernel's worker is killed after this
  std::size_t workers = 1;
  std::string plot;
  std::vector<std::string> options;
  std::string rehearsal_out;  // replay: every forecast candidate's screening pair, for other devices
  std::string screen;  // "alpha=0.1,delta=0.1[,tolerance=0]": certified screening (surrogate strategy)
  bool json = false;
  bool no_progress = false;
  bool list_options = false;
  bool mpi = false;
  double heartbeat_timeout = 10;
  std::string farm_fault;  // tests: "RANK:die:N" or "RANK:hang:N"
  MonitorArgs monitor;     // --metrics-port, --report (run_monitor.hpp)
  std::string strategy_text = "surrogate";  // --strategy as given, comma-separated
};

// Registers the options on `search`.
void add_search_options(CLI::App& search, SearchArgs& args);
// Checks the options together (before any file is read) and splits --strategy and --screen.
void check_search_args(SearchArgs& args);
// Prints every strategy's options (Markdown), as docs/search.md shows them.
void list_strategy_options();

// What strategy `name` is made with: --model, --surrogate and its --option values.
[[nodiscard]] StrategySettings strategy_settings(const SearchArgs& args, const std::string& name);
// A live or farm search: the one strategy, one seed, its records at the paths given (no .seedN).
[[nodiscard]] Plan single_run_plan(const SearchArgs& args);
// The replayed space, with --features joined to it.
[[nodiscard]] std::shared_ptr<const SpaceData> load_replay_data(const SearchArgs& args);

#if defined(GPUFORECAST_HAVE_CUDA_RUNTIME)
// How a live search and a farm's GPU rank measure: the seed, --timeout, --sentinel-repeats.
[[nodiscard]] CudaBenchmarkerOptions gpu_options(const SearchArgs& args);
#endif

// The three ways of searching (search_replay.cpp, search_live.cpp, search_farm.cpp).
void run_replay(const SearchArgs& args);
void run_live(const SearchArgs& args);
void run_farm(const SearchArgs& args);

}  // namespace gpuforecast::cli
