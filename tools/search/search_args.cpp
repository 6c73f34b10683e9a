#include "search/search_args.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "common/split_list.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/strategy_registry.hpp"
#include "interrupt.hpp"
#include "static_features_option.hpp"

namespace gpuforecast::cli {

namespace {

// The options one strategy gets: NAME=VALUE for every strategy searched, STRATEGY.NAME=VALUE
// for that strategy only (so that strategies run side by side can each be given their own).
std::map<std::string, std::string> parse_options(const std::vector<std::string>& options, const std::string& strategy,
                                                 const std::vector<std::string>& strategies) {
  std::map<std::string, std::string> out;
  for (const auto& o : options) {
    auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw invalid_argument_error(fmt::format("--option {}: expected NAME=VALUE or STRATEGY.NAME=VALUE", o));
    std::string name = o.substr(0, eq);
    if (auto dot = name.find('.'); dot != std::string::npos) {
      const std::string scope = name.substr(0, dot);
      if (std::find(strategies.begin(), strategies.end(), scope) == strategies.end())
        throw invalid_argument_error(
            fmt::format("--option {}: strategy \"{}\" is not among those searched (--strategy)", o, scope));
      if (scope != strategy) continue;
      name = name.substr(dot + 1);
    }
    out[name] = o.substr(eq + 1);
  }
  return out;
}

// --screen alpha=A,delta=D[,tolerance=T][,reference=R][,calibration=FILE | ,rehearsal=FILE]: the screening options of the
// strategies that screen (surrogate, and genetic with children_per_measurement > 1).
void add_screening_options(SearchArgs& a) {
  if (a.screen.empty()) return;
  std::vector<std::string> screening;
  for (const char* s : {"surrogate", "genetic"})
    if (std::find(a.strategies.begin(), a.strategies.end(), s) != a.strategies.end()) screening.emplace_back(s);
  if (screening.empty())
    throw invalid_argument_error(
        "--screen screens the proposals of the surrogate strategy or the children of the genetic one: add --strategy "
        "surrogate or genetic");
  std::vector<std::pair<std::string, std::string>> items{{"screen", "true"}};
  if (a.screen != "on")
    for (const auto& item : detail::split_list(a.screen)) {
      const auto eq = item.find('=');
      const std::string name = eq == std::string::npos ? item : item.substr(0, eq);
      if (eq == std::string::npos || (name != "alpha" && name != "delta" && name != "tolerance" &&
                                      name != "reference" && name != "calibration" && name != "rehearsal"))
        throw invalid_argument_error(
            fmt::format("--screen {}: expected alpha=A,delta=D[,tolerance=T][,reference=incumbent_time|incumbent_forecast]"
                        "[,calibration=FILE | ,rehearsal=FILE] (or \"on\" for the defaults), not \"{}\"",
                        a.screen, item));
      items.emplace_back("screen_" + name, item.substr(eq + 1));
    }
  for (const auto& strategy : screening)
    for (const auto& [name, value] : items) a.options.push_back(strategy + "." + name + "=" + value);
}

}  // namespace

void add_search_options(CLI::App& search, SearchArgs& args) {
  auto* replay = search.add_option("--replay", args.replay, "Kernel Tuner cache or T4 file to replay (simulation mode)");
  auto* kernel = search.add_option("--kernel", args.kernel, "T1 kernel spec to tune live on the GPU");
  replay->excludes(kernel);
  add_static_features_option(search, args.features);
  search.add_option("--t1", args.t1, "T1 file whose Conditions constrain the replayed space (found next to the data by default)");
  search.add_option("--space", args.space,
                    "replay: configurations a strategy may propose: t1 (the T1 file's Conditions), cached (those stored with "
                    "a valid time, Kernel Tuner's tune_cache), cartesian (every combination; missing ones charged as "
                    "failed), auto (t1 when a T1 file is found, else cached)")
      ->capture_default_str()
      ->needs(replay);
  search.add_option("--sampling", args.sampling,
                    "replay: what a measurement reads from the stored runs: one_run (one drawn with the seed: noise as "
                    "recorded), bootstrap, median, or mean (Kernel Tuner's `time`, as its simulation mode serves it)")
      ->capture_default_str()
      ->needs(replay);
  std::string names;
  for (const auto& n : strategy_names()) names += (names.empty() ? "" : "|") + n;
  search.add_option("--strategy", args.strategy_text, names + " (several, comma-separated, run side by side)")
      ->capture_default_str();
  search.add_option("--model", args.model,
                    "pre-trained selective model file for the surrogate and genetic strategies; one with per-GPU views "
                    "(calibrate --rehearse) forecasts through them, stacked by the run's own measurements");
  search.add_option("--surrogate", args.surrogate, "surrogate trained online when no --model is given")->capture_default_str();
  search.add_option("--budget", args.budget, "measurements per run (0: no count limit)")->capture_default_str();
  search.add_option("--budget-seconds", args.budget_seconds, "simulated (replay) or real seconds per run (0: no limit)");
  search.add_option("--seeds", args.seeds, "runs, with seeds first-seed, first-seed + 1, ...")->capture_default_str();
  search.add_option("--first-seed", args.first_seed)->capture_default_str();
  search.add_option("--threads", args.threads,
                    "replay: seeds searched side by side (0: one per hardware thread; any count gives the same result)")
      ->capture_default_str();
  search.add_option("--trace", args.trace, "write each run's trace in T4 format (.seedN inserted for several seeds)");
  search.add_option("--events", args.events,
                    "write each run's event log as it goes: JSON Lines, one line per forecast round, screening, "
                    "measurement (with the forecast made before it) and round (docs/events.md; .seedN inserted "
                    "for several seeds, STRATEGY. prefixed for several strategies)");
  search.add_option("--cache", args.cache,
                    "write each run's measurements to this Kernel Tuner cache file as they land (plain JSON; "
                    ".seedN inserted for several seeds, STRATEGY. prefixed for several strategies)");
  search.add_flag("--resume", args.resume,
                  "continue the runs whose --cache file exists: what it holds is served from it, not measured again");
  search.add_option("--time-scale", args.time_scale,
                    "replay: hold each measurement for its stored compile + benchmark time times this factor "
                    "(0: no wait)")
      ->capture_default_str();
  search.add_option("--timeout", args.kernel_timeout_s,
                    "live: seconds without a finished kernel before its worker is killed and the configuration is "
                    "recorded as a timeout")
      ->capture_default_str()
      ->needs(kernel);
  search.add_option("--nvml-index", args.nvml_index,
                    "live: NVML's index of the GPU whose clocks, throttle reasons, temperature, ECC and Xid errors "
                    "are watched (NVML counts in PCI order)")
      ->capture_default_str();
  search.add_option("--sentinel-repeats", args.sentinel_repeats,
                    "each measurement carries this many repeats of a sentinel, by which the anomaly monitor tells a "
                    "slow device (docs/monitoring.md): live, the kernel's reference configuration timed on the same GPU "
                    "right after it; replayed, the data's steadiest configuration; 0: none")
      ->capture_default_str();
  search.add_option("--workers", args.workers,
                    "replay: measure on this many simulated workers at once (a virtual clock holds each measurement "
                    "for its stored compile + benchmark time), as a farm would")
      ->capture_default_str()
      ->needs(replay);
  search.add_option("--plot", args.plot, "write the mean convergence curves to this SVG file");
  search.add_option("--option", args.options, "strategy option NAME=VALUE for every strategy, or STRATEGY.NAME=VALUE for one (repeatable)");
  search.add_option("--screen", args.screen,
                    "surrogate strategy, genetic with children_per_measurement > 1: drop proposals certified as no "
                    "improvement over the incumbent, missing at most "
                    "a share alpha of true improvements with probability 1 - delta: alpha=A,delta=D[,tolerance=T]"
                    "[,reference=incumbent_time|incumbent_forecast: what forecasts are set against]"
                    "[,calibration=FILE of the device's measurements, not trained on | ,rehearsal=FILE or FOLDER of "
                    "pairs written by --rehearsal-out on other devices], or on");
  search.add_option("--rehearsal-out", args.rehearsal_out,
                    "replay, one strategy: write every candidate its model forecast (measured or not) with its "
                    "stored time and the incumbent of the moment, the screening calibration of the same search on "
                    "another device (--screen rehearsal=FILE; docs/calibration.md)")
      ->needs(replay);
  add_monitor_options(search, args.monitor);
  search.add_flag("--json", args.json, "print JSON");
  search.add_flag("--no-progress", args.no_progress, "no progress bar");
  search.add_flag("--list-options", args.list_options, "print every strategy's options (Markdown) and exit");
#if defined(GPUFORECAST_HAVE_MPI)
  search.add_flag("--mpi", args.mpi,
                  "run as a measurement farm under mpirun: rank 0 searches, the other ranks measure (with --replay: "
                  "replay, answering the stored median; with --kernel: on their GPUs, compiling what they measure)");
  search.add_option("--heartbeat-timeout", args.heartbeat_timeout,
                    "--mpi: seconds a worker holding a candidate may stay silent before it is taken as lost")
      ->capture_default_str();
  search.add_option("--farm-fault", args.farm_fault, "--mpi, for tests: RANK:die:N or RANK:hang:N after N results")
      ->group("");
#endif
}

void check_search_args(SearchArgs& a) {
  a.strategies = detail::split_list(a.strategy_text);
  add_screening_options(a);
  if (a.cache.ends_with(".gz"))
    throw invalid_argument_error(
        fmt::format("--cache {}: a cache written as the search goes is plain JSON; give a name without .gz", a.cache));
  if (a.resume && a.cache.empty()) throw invalid_argument_error("--resume continues a --cache FILE: give --cache too");
  if (!std::isfinite(a.time_scale) || a.time_scale < 0)
    throw invalid_argument_error(fmt::format("--time-scale must be a finite number >= 0, not {}", a.time_scale));
  if (a.workers == 0) throw invalid_argument_error("--workers must be at least 1");
  (void)parse_replay_sampling(a.sampling);  // a misspelt name fails before any file is read
  if (!a.rehearsal_out.empty() && a.strategies.size() != 1)
    throw invalid_argument_error("--rehearsal-out records one strategy's rehearsal: give one --strategy");
  if (a.time_scale > 0 && a.replay.empty())
    throw invalid_argument_error("--time-scale slows a replay down: it needs --replay");
}

void list_strategy_options() {
  for (const auto& name : strategy_names()) {
    const std::string doc = strategy_options_doc(name);
    fmt::print("### {}\n\n{}\n", name, doc.empty() ? "(no options)\n" : doc);
  }
}

StrategySettings strategy_settings(const SearchArgs& a, const std::string& name) {
  StrategySettings settings;
  settings.seed = a.first_seed;
  settings.model_path = a.model;
  settings.surrogate = a.surrogate;
  settings.options = parse_options(a.options, name, a.strategies);
  return settings;
}

Plan single_run_plan(const SearchArgs& a) {
  if (a.strategies.size() != 1)
    throw invalid_argument_error(fmt::format("{} runs one --strategy at a time", a.mpi ? "search --mpi" : "live search"));
  Plan plan;
  plan.strategy = a.strategies.front();
  plan.settings = strategy_settings(a, plan.strategy);
  plan.budget = a.budget;
  plan.budget_seconds = a.budget_seconds;
  plan.seeds = 1;
  plan.first_seed = a.first_seed;
  plan.progress = !a.no_progress && !a.json;
  if (!a.trace.empty()) plan.outputs.trace_path = [trace = a.trace](std::size_t) { return trace; };
  if (!a.events.empty()) plan.outputs.events_path = [events = a.events](std::size_t) { return events; };
  if (!a.cache.empty()) plan.outputs.cache_path = [cache = a.cache](std::size_t) { return cache; };
  plan.outputs.resume = a.resume;
  plan.outputs.stop_reason = interruption_reason;
  return plan;
}

std::shared_ptr<const SpaceData> load_replay_data(const SearchArgs& a) {
  std::vector<SpaceData> spaces{load_replay_space(a.replay, a.t1, parse_replay_space(a.space))};
  if (!a.features.empty()) fmt::print(stderr, "{}", describe(join_static_features(spaces, a.features)));
  return std::make_shared<const SpaceData>(std::move(spaces.front()));
}

}  // namespace gpuforecast::cli
