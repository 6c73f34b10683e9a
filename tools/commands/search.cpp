// gpuforecast search: run a search strategy on replayed data (--replay) or live on a GPU
// (--kernel T1.json), and report the fraction of the optimum reached over seeds.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command_registry.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/search/replay_experiment.hpp"
#include "gpuforecast/search/strategy_registry.hpp"

namespace {

struct SearchArgs {
  std::string replay;
  std::string t1;
  std::string kernel;
  std::string strategy = "surrogate";
  std::string model;
  std::string surrogate = "default";
  std::size_t budget = 200;
  double budget_seconds = 0;
  std::size_t seeds = 10;
  std::uint64_t first_seed = 1;
  std::string trace;
  std::vector<std::string> options;
  bool json = false;
  bool no_progress = false;
};

std::map<std::string, std::string> parse_options(const std::vector<std::string>& options) {
  std::map<std::string, std::string> out;
  for (const auto& o : options) {
    auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw gpuforecast::invalid_argument_error(fmt::format("--option {}: expected NAME=VALUE", o));
    out[o.substr(0, eq)] = o.substr(eq + 1);
  }
  return out;
}

std::string trace_path_for(const std::string& base, std::size_t run, std::size_t runs) {
  if (runs == 1) return base;
  // trace.json.gz -> trace.seed3.json.gz
  auto dot = base.find(".json");
  if (dot == std::string::npos) return fmt::format("{}.seed{}", base, run + 1);
  return fmt::format("{}.seed{}{}", base.substr(0, dot), run + 1, base.substr(dot));
}

void run_replay(const SearchArgs& a) {
  using namespace gpuforecast;
  auto data = std::make_shared<const SpaceData>(load_replay_space(a.replay, a.t1));
  ReplayExperiment e;
  e.data = data;
  e.strategy = a.strategy;
  e.settings.model_path = a.model;
  e.settings.surrogate = a.surrogate;
  e.settings.options = parse_options(a.options);
  e.budget = a.budget;
  e.budget_seconds = a.budget_seconds;
  e.seeds = a.seeds;
  e.first_seed = a.first_seed;
  e.progress = !a.no_progress && !a.json;
  if (!a.trace.empty()) e.trace_path = [&](std::size_t i) { return trace_path_for(a.trace, i, a.seeds); };
  if (a.seeds == 0) throw invalid_argument_error("--seeds must be at least 1");
  auto result = run_replay_experiment(e);

  std::vector<std::size_t> budgets;
  std::size_t longest = 0;
  for (const auto& r : result.runs) longest = std::max(longest, r.trace.size());
  for (std::size_t b : {25, 50, 100, 200})
    if (a.budget == 0 || b <= a.budget) budgets.push_back(b);
  if (a.budget > 0 && std::find(budgets.begin(), budgets.end(), a.budget) == budgets.end()) budgets.push_back(a.budget);
  if (a.budget == 0 && longest > 0) budgets.push_back(longest);
  auto summary = result.summary(budgets);
  double cost = 0, wall = 0;
  for (const auto& r : result.runs) cost += r.trace.total_cost_s(), wall += r.strategy_seconds;
  cost /= static_cast<double>(result.runs.size());
  wall /= static_cast<double>(result.runs.size());

  if (a.json) {
    nlohmann::json j;
    j["replay"] = a.replay;
    j["kernel"] = data->kernel;
    j["device"] = data->device ? data->device->name : std::string{};
    j["strategy"] = a.strategy;
    j["model"] = a.model;
    j["seeds"] = a.seeds;
    j["optimum_ms"] = result.optimum_ms;
    j["mean_simulated_seconds"] = cost;
    j["mean_wall_seconds"] = wall;
    for (const auto& s : summary)
      j["fraction_of_optimum"].push_back({{"measurements", s.budget}, {"mean", s.mean}, {"p10", s.p10}});
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{} on {} ({}), optimum {:.4g} ms, {} seeds\n", a.strategy, data->kernel,
             data->device ? data->device->name : a.replay, result.optimum_ms, a.seeds);
  fmt::print("{:>13} {:>10} {:>10}\n", "measurements", "mean", "p10");
  for (const auto& s : summary) fmt::print("{:>13} {:>10.3f} {:>10.3f}\n", s.budget, s.mean, s.p10);
  fmt::print("fraction of optimum = best time in the data / stored time of the best found\n");
  fmt::print("per run: {:.0f} simulated seconds of compiling and benchmarking, {:.2f} s wall\n", cost, wall);
}

// Live mode: the same strategies, measuring on the GPU through the CUDA benchmarker.
void run_live(const SearchArgs& a) {
#if defined(GPUFORECAST_HAVE_CUDA_RUNTIME) && __has_include("gpuforecast/runtime/cuda_benchmarker.hpp")
  live_search(a);
#else
  (void)a;
  throw gpuforecast::cuda_error(
      "gpuforecast search --kernel: this build has no CUDA runtime (configure with the CUDA toolkit "
      "at /usr/local/cuda); replay recorded data with --replay instead");
#endif
}

gpuforecast::cli::RegisterCommand reg{"search", [](CLI::App& app) {
  auto args = std::make_shared<SearchArgs>();
  auto* cmd = app.add_subcommand("search", "search a tuning space: replayed data (--replay) or live on a GPU (--kernel)");
  auto* replay = cmd->add_option("--replay", args->replay, "Kernel Tuner cache or T4 file to replay (simulation mode)");
  auto* kernel = cmd->add_option("--kernel", args->kernel, "T1 kernel spec to tune live on the GPU");
  replay->excludes(kernel);
  cmd->add_option("--t1", args->t1, "T1 file whose Conditions constrain the replayed space (found next to the data by default)");
  std::string names;
  for (const auto& n : gpuforecast::strategy_names()) names += (names.empty() ? "" : "|") + n;
  cmd->add_option("--strategy", args->strategy, names)->capture_default_str();
  cmd->add_option("--model", args->model, "pre-trained selective model file for the surrogate strategy");
  cmd->add_option("--surrogate", args->surrogate, "surrogate trained online when no --model is given")->capture_default_str();
  cmd->add_option("--budget", args->budget, "measurements per run (0: no count limit)")->capture_default_str();
  cmd->add_option("--budget-seconds", args->budget_seconds, "simulated (replay) or real seconds per run (0: no limit)");
  cmd->add_option("--seeds", args->seeds, "runs, with seeds first-seed, first-seed + 1, ...")->capture_default_str();
  cmd->add_option("--first-seed", args->first_seed)->capture_default_str();
  cmd->add_option("--trace", args->trace, "write each run's trace in T4 format (.seedN inserted for several seeds)");
  cmd->add_option("--option", args->options, "strategy option NAME=VALUE (repeatable)");
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->add_flag("--no-progress", args->no_progress, "no progress bar");
  cmd->callback([args] {
    if (!args->replay.empty()) return run_replay(*args);
    if (!args->kernel.empty()) {
      return run_live(*args);
    }
    throw gpuforecast::invalid_argument_error("gpuforecast search: give --replay FILE or --kernel T1.json");
  });
}};

}  // namespace
