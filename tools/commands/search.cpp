// gpuforecast search: run a search strategy on replayed data (--replay) or live on a GPU
// (--kernel T1.json), and report the fraction of the optimum reached over seeds.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "command_registry.hpp"
#include "static_features_option.hpp"
#include "device_health_watch.hpp"
#include "interrupt.hpp"
#include "run_monitor.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/t1.hpp"
#include "gpuforecast/run/replay_space.hpp"
#include "gpuforecast/run/report.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/search/search_context.hpp"
#if defined(GPUFORECAST_HAVE_CUDA_RUNTIME) && __has_include("gpuforecast/runtime/cuda_benchmarker.hpp")
#include "gpuforecast/runtime/cuda_benchmarker.hpp"
#endif
#include "gpuforecast/search/strategy_registry.hpp"
#if defined(GPUFORECAST_HAVE_MPI)
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>

#include "gpuforecast/farm/farm_coordinator.hpp"
#include "gpuforecast/farm/farm_session.hpp"
#include "gpuforecast/farm/farm_worker.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "common/parse_number.hpp"
#include "farm/worker_faults.hpp"
#endif
#include "common/split_list.hpp"
#if GPUFORECAST_HAVE_LLM
#include "gpuforecast/llm/llm_endpoint.hpp"
#endif

namespace {

struct SearchArgs {
  std::string replay;
  std::string t1;
  std::string features;
  std::string space = "auto";
  std::string sampling = "one_run";
  std::string kernel;
  std::string strategy = "surrogate";
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
  std::size_t workers = 1;
  std::string plot;
  std::vector<std::string> options;
  std::string screen;  // "alpha=0.1,delta=0.1[,tolerance=0]": certified screening (surrogate strategy)
  bool json = false;
  bool no_progress = false;
  bool list_options = false;
  bool mpi = false;
  double heartbeat_timeout = 10;
  std::string farm_fault;  // tests: "RANK:die:N" or "RANK:hang:N"
  gpuforecast::cli::MonitorArgs monitor;  // --metrics-port, --report (run_monitor.hpp)
};

// The options of each strategy, as the tables in docs/search.md show them.
void list_options() {
  for (const auto& name : gpuforecast::strategy_names()) {
    const std::string doc = gpuforecast::strategy_options_doc(name);
    fmt::print("### {}\n\n{}\n", name, doc.empty() ? "(no options)\n" : doc);
  }
}

// The options one strategy gets: NAME=VALUE for every strategy searched, STRATEGY.NAME=VALUE
// for that strategy only (so that strategies run side by side can each be given their own).
std::map<std::string, std::string> parse_options(const std::vector<std::string>& options, const std::string& strategy,
                                                 const std::vector<std::string>& strategies) {
  std::map<std::string, std::string> out;
  for (const auto& o : options) {
    auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw gpuforecast::invalid_argument_error(fmt::format("--option {}: expected NAME=VALUE or STRATEGY.NAME=VALUE", o));
    std::string name = o.substr(0, eq);
    if (auto dot = name.find('.'); dot != std::string::npos) {
      const std::string scope = name.substr(0, dot);
      if (std::find(strategies.begin(), strategies.end(), scope) == strategies.end())
        throw gpuforecast::invalid_argument_error(
            fmt::format("--option {}: strategy \"{}\" is not among those searched (--strategy)", o, scope));
      if (scope != strategy) continue;
      name = name.substr(dot + 1);
    }
    out[name] = o.substr(eq + 1);
  }
  return out;
}

// --screen alpha=A,delta=D[,tolerance=T][,calibration=FILE]: the surrogate strategy's screening
// options.
void add_screening_options(SearchArgs& a) {
  if (a.screen.empty()) return;
  const auto strategies = gpuforecast::detail::split_list(a.strategy);
  if (std::find(strategies.begin(), strategies.end(), "surrogate") == strategies.end())
    throw gpuforecast::invalid_argument_error("--screen screens the proposals of the surrogate strategy: add --strategy surrogate");
  a.options.emplace_back("surrogate.screen=true");
  if (a.screen == "on") return;
  for (const auto& item : gpuforecast::detail::split_list(a.screen)) {
    const auto eq = item.find('=');
    const std::string name = eq == std::string::npos ? item : item.substr(0, eq);
    if (eq == std::string::npos || (name != "alpha" && name != "delta" && name != "tolerance" && name != "calibration"))
      throw gpuforecast::invalid_argument_error(
          fmt::format("--screen {}: expected alpha=A,delta=D[,tolerance=T][,calibration=FILE] (or \"on\" for the "
                      "defaults), not \"{}\"",
                      a.screen, item));
    a.options.push_back("surrogate.screen_" + name + "=" + item.substr(eq + 1));
  }
}

// What one strategy of a single live or farm search is made with (first seed, model, options).
gpuforecast::StrategySettings strategy_settings(const SearchArgs& a, const std::vector<std::string>& strategies) {
  gpuforecast::StrategySettings settings;
  settings.seed = a.first_seed;
  settings.model_path = a.model;
  settings.surrogate = a.surrogate;
  settings.options = parse_options(a.options, strategies.front(), strategies);
  return settings;
}

std::string trace_path_for(const std::string& base, std::size_t run, std::size_t runs) {
  if (runs == 1) return base;
  // trace.json.gz -> trace.seed3.json.gz
  auto dot = base.find(".json");
  if (dot == std::string::npos) return fmt::format("{}.seed{}", base, run + 1);
  return fmt::format("{}.seed{}{}", base.substr(0, dot), run + 1, base.substr(dot));
}

using gpuforecast::detail::split_list;

// The language model's calls so far in this process (--surrogate llm).
gpuforecast::LlmCalls llm_calls() {
#if GPUFORECAST_HAVE_LLM
  const auto c = gpuforecast::llm_process_counts();
  return {c.prompts, c.requests, c.cache_hits, c.failed, c.retries};
#else
  return {};
#endif
}

gpuforecast::LlmCalls operator-(const gpuforecast::LlmCalls& a, const gpuforecast::LlmCalls& b) {
  return {a.prompts - b.prompts, a.requests - b.requests, a.cache_hits - b.cache_hits, a.failed - b.failed,
          a.retries - b.retries};
}

// A live or farm search: one strategy, one seed, its records at the paths given (no .seedN).
[[maybe_unused]] gpuforecast::Plan single_run_plan(const SearchArgs& a, const std::vector<std::string>& strategies) {
  gpuforecast::Plan plan;
  plan.strategy = strategies.front();
  plan.settings = strategy_settings(a, strategies);
  plan.budget = a.budget;
  plan.budget_seconds = a.budget_seconds;
  plan.seeds = 1;
  plan.first_seed = a.first_seed;
  if (!a.trace.empty()) plan.outputs.trace_path = [&a](std::size_t) { return a.trace; };
  if (!a.events.empty()) plan.outputs.events_path = [&a](std::size_t) { return a.events; };
  if (!a.cache.empty()) plan.outputs.cache_path = [&a](std::size_t) { return a.cache; };
  plan.outputs.resume = a.resume;
  return plan;
}

// The replayed space, with --features joined to it.
std::shared_ptr<const gpuforecast::SpaceData> load_replay_data(const SearchArgs& a) {
  using namespace gpuforecast;
  std::vector<SpaceData> spaces{load_replay_space(a.replay, a.t1, parse_replay_space(a.space))};
  if (!a.features.empty()) fmt::print(stderr, "{}", describe(cli::join_static_features(spaces, a.features)));
  return std::make_shared<const SpaceData>(std::move(spaces.front()));
}

// Several strategies (comma-separated) run on the same data and seeds, side by side.
void run_replay(const SearchArgs& a) {
  using namespace gpuforecast;
  if (a.seeds == 0) throw invalid_argument_error("--seeds must be at least 1");
  auto data = load_replay_data(a);
  const auto strategies = split_list(a.strategy);
  if (strategies.empty()) throw invalid_argument_error("--strategy: give at least one strategy");

  SearchComparison comparison;
  cli::RunMonitor monitor(a.monitor,
                          fmt::format("{} on {}", data->kernel, data->device ? data->device->name : a.replay),
                          cli::calibration_of_model(a.model));
  for (const auto& name : strategies) {
    Plan e;
    e.observe = [&monitor](SearchContext& ctx, std::size_t, const std::string& label) {
      ctx.add_observer(cli::StopOnInterrupt{});
      monitor.watch(ctx, label);
    };
    e.replay().data = data;
    e.strategy = name;
    if (name == "surrogate") e.settings.model_path = a.model;
    e.settings.surrogate = a.surrogate;
    e.settings.options = parse_options(a.options, name, strategies);
    e.budget = a.budget;
    e.budget_seconds = a.budget_seconds;
    e.seeds = a.seeds;
    e.first_seed = a.first_seed;
    e.threads = a.threads;
    e.progress = !a.no_progress && !a.json;
    // Several strategies: trace.json -> random.trace.json, in the same folder; several seeds:
    // trace.json -> trace.seed3.json. The same for the cache.
    const auto run_file = [&a, &strategies, name](const std::string& given) {
      return [&a, &strategies, name, given](std::size_t i) {
        std::string base = given;
        if (strategies.size() > 1) {
          const std::filesystem::path p(given);
          base = (p.parent_path() / (name + "." + p.filename().string())).string();
        }
        return trace_path_for(base, i, a.seeds);
      };
    };
    if (!a.trace.empty()) e.outputs.trace_path = run_file(a.trace);
    if (!a.events.empty()) e.outputs.events_path = run_file(a.events);
    if (!a.cache.empty()) e.outputs.cache_path = run_file(a.cache);
    e.outputs.resume = a.resume;
    e.replay().sampling = parse_replay_sampling(a.sampling);
    e.replay().time_scale = a.time_scale;
    e.replay().sentinel_repeats = a.sentinel_repeats;
    e.replay().workers = a.workers;
    const bool asks_llm = name == "surrogate" && a.surrogate == "llm";
    const LlmCalls before = llm_calls();
    comparison.strategies.push_back({name, name == "surrogate" && !a.model.empty() ? "surrogate (pre-trained)" : name,
                                     gpuforecast::run(e)});
    if (asks_llm) comparison.strategies.back().llm = llm_calls() - before;
  }
  monitor.finish();
  std::size_t longest = 0;
  for (const auto& o : comparison.strategies)
    for (const auto& r : o.result.runs) longest = std::max(longest, r.trace.size());
  comparison.budgets = report_budgets(a.budget, longest);
  comparison.source = a.replay;
  comparison.kernel = data->kernel;
  comparison.device = data->device ? data->device->name : std::string{};
  comparison.space = describe_replay_space(*data);
  comparison.model = a.model;
  comparison.seeds = a.seeds;
  comparison.workers = a.workers;
  if (!a.plot.empty()) write_svg_report(comparison, a.plot);
  fmt::print("{}", a.json ? json_report(comparison) + "\n" : text_report(comparison));
}

#if defined(GPUFORECAST_HAVE_CUDA_RUNTIME) && __has_include("gpuforecast/runtime/cuda_benchmarker.hpp")
void live_search(const SearchArgs& a) {
  using namespace gpuforecast;
  const T1File t1 = read_t1(a.kernel);
  if (t1.kernel.source.empty())
    throw input_error(a.kernel, "KernelFile", "the kernel source named by KernelFile was not found beside the spec");
  CudaBenchmarkerOptions options;
  options.seed = a.first_seed;
  std::optional<CudaBenchmarker> opened;
  try {
    opened.emplace(options);
  } catch (const cuda_error& e) {
    throw cuda_error(fmt::format("live search needs a CUDA GPU and its driver ({}); replay recorded measurements "
                                 "with --replay FILE instead",
                                 e.what()));
  }
  CudaBenchmarker bench = std::move(*opened);
  if (bench.devices().empty()) throw cuda_error("no CUDA device found");
  Candidate prototype;
  prototype.kernel = t1.kernel.benchmark_name;
  prototype.problem_size = t1.kernel.problem_size;
  prototype.device = std::make_shared<const Device>(bench.devices().front());
  prototype.spec = std::make_shared<const KernelSpec>(t1.kernel);
  const auto strategies = split_list(a.strategy);
  if (strategies.size() != 1) throw invalid_argument_error("live search runs one --strategy at a time");
  Plan plan = single_run_plan(a, strategies);
  plan.progress = !a.no_progress && !a.json;
  auto& backend = plan.backend.emplace<CallerBackend>(
      caller_backend(t1.space, prototype, std::make_shared<CudaBenchmarker>(std::move(bench))));
  backend.describe = cli::static_feature_describer(a.features, prototype);
  cli::RunMonitor monitor(a.monitor, fmt::format("{} on {}", prototype.kernel, prototype.device->name),
                          cli::calibration_of_model(a.model));
  plan.observe = [&](SearchContext& ctx, std::size_t, const std::string&) {
    ctx.add_observer(cli::StopOnInterrupt{});
    monitor.watch(ctx, fmt::format("{} on {}", strategies.front(), prototype.device->name));
    // What the GPU itself says (throttling, temperature, ECC, Xid) reaches every observer as an
    // anomaly: the event log and the monitor among them.
    std::string why;
    if (auto nvml = NvmlDevice::open(a.nvml_index, &why))
      ctx.add_observer(cli::DeviceHealthWatch(std::move(*nvml), {[&ctx](const SearchAnomaly& x) { ctx.report_anomaly(x); }}));
    else
      fmt::print(stderr, "gpuforecast: the GPU's clocks, throttling, temperature, ECC and Xid errors are not watched: {}\n",
                 why);
  };
  const Trace trace = gpuforecast::run(plan).runs.front().trace;
  monitor.finish();
  const TraceEntry* best = trace.best();
  std::size_t failed = 0;
  for (const auto& e : trace.entries()) failed += e.measurement.ok() ? 0 : 1;
  if (a.json) {
    nlohmann::json j{{"kernel", a.kernel}, {"device", prototype.device->name}, {"strategy", strategies.front()},
                     {"measurements", trace.size()}, {"failed", failed},
                     {"seconds", trace.total_cost_s()}};
    if (best) j["best"] = {{"config", best->config.to_string()}, {"median_ms", best->measurement.median_ms},
                           {"found_at", best->index}};
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{} on {}: {} measurements ({} failed), {:.1f} s of compiling and measuring\n", strategies.front(),
             prototype.device->name, trace.size(), failed, trace.total_cost_s());
  if (best)
    fmt::print("best: {:.4g} ms [{}], found at measurement {}\n", best->measurement.median_ms, best->config.to_string(),
               best->index);
  else
    fmt::print("no configuration ran successfully\n");
}
#endif

#if defined(GPUFORECAST_HAVE_MPI)
// What a farm searches: the space, the candidates' prototype, the target device (empty: the
// device of the lowest GPU rank), and with --replay the data (for the optimum).
struct FarmSearch {
  gpuforecast::TuningSpace space;
  gpuforecast::Candidate prototype;
  std::string device;
  std::shared_ptr<const gpuforecast::SpaceData> data;
};

FarmSearch farm_search_of(const SearchArgs& a) {
  using namespace gpuforecast;
  FarmSearch f;
  if (!a.replay.empty()) {
    f.data = load_replay_data(a);
    f.space = f.data->space;
    f.prototype.kernel = f.data->kernel;
    f.prototype.problem_size = f.data->problem_size;
    f.prototype.device = f.data->device;
    if (!f.data->observations.empty()) f.prototype.spec = f.data->observations.front().candidate.spec;
    f.device = f.data->device ? f.data->device->name : std::string{};
    return f;
  }
  if (a.kernel.empty()) throw invalid_argument_error("search --mpi: give --replay FILE (replay ranks) or --kernel T1.json (GPU ranks)");
  const T1File t1 = read_t1(a.kernel);
  if (t1.kernel.source.empty())
    throw input_error(a.kernel, "KernelFile", "the kernel source named by KernelFile was not found beside the spec");
  f.space = t1.space;
  f.prototype.kernel = t1.kernel.benchmark_name;
  f.prototype.problem_size = t1.kernel.problem_size;
  f.prototype.spec = std::make_shared<const KernelSpec>(t1.kernel);
  return f;
}

// A GPU worker rank: it owns the GPUs of its node through the CUDA benchmarker (worker
// processes, watchdog, compile cache) and compiles what it measures; a rank that cannot (no
// CUDA driver, no GPU, a build without the CUDA runtime) tells rank 0 why and takes no work.
void serve_gpu_rank(const SearchArgs& a, gpuforecast::Candidate prototype,
                    const gpuforecast::detail::farm::WorkerFaults& faults) {
  using namespace gpuforecast;
#if defined(GPUFORECAST_HAVE_CUDA_RUNTIME) && __has_include("gpuforecast/runtime/cuda_benchmarker.hpp")
  CudaBenchmarkerOptions options;
  options.seed = a.first_seed;
  std::optional<CudaBenchmarker> bench;
  try {
    bench.emplace(options);
  } catch (const cuda_error& e) {
    return refuse_farm(e.what());
  }
  if (bench->devices().empty()) return refuse_farm("no CUDA device found");
  prototype.device = std::make_shared<const Device>(bench->devices().front());
  FarmWorkerOptions w;
  w.device = prototype.device->name;
  detail::farm::serve_farm([&bench](std::span<const Candidate> c) { return bench->measure(c); }, prototype, w, faults);
#else
  (void)a, (void)prototype, (void)faults;
  refuse_farm("this build has no CUDA runtime (configure with the CUDA toolkit at /usr/local/cuda)");
#endif
}

// --mpi: rank 0 runs one strategy on one seed, the other ranks measure for it: with --replay
// they replay stored measurements, answering the stored median, so that which rank measured a
// candidate does not change the result; with --kernel they measure on their GPUs.
void run_farm_ranks(const gpuforecast::FarmSession& session, const SearchArgs& a) {
  using namespace gpuforecast;
  const auto strategies = split_list(a.strategy);
  if (strategies.size() != 1) throw invalid_argument_error("search --mpi runs one --strategy at a time");
  FarmSearch search = farm_search_of(a);
  auto& data = search.data;
  Candidate& prototype = search.prototype;
  // Every rank reads --farm-fault, so that a bad one stops rank 0 too.
  detail::farm::WorkerFaults faults;
  {
    if (!a.farm_fault.empty()) {
      std::vector<std::string> parts;
      for (std::size_t from = 0;;) {
        const auto colon = a.farm_fault.find(':', from);
        parts.push_back(a.farm_fault.substr(from, colon - from));
        if (colon == std::string::npos) break;
        from = colon + 1;
      }
      if (parts.size() != 3 || (parts[1] != "die" && parts[1] != "hang"))
        throw invalid_argument_error(fmt::format("--farm-fault {}: give RANK:die:N or RANK:hang:N", a.farm_fault));
      if (detail::parse_number<int>("--farm-fault RANK", parts[0]) == session.rank())
        (parts[1] == "die" ? faults.die_after : faults.hang_after) =
            detail::parse_number<std::size_t>("--farm-fault N", parts[2]);
    }
  }
  if (!session.coordinator()) {
    if (!data) return serve_gpu_rank(a, prototype, faults);
    FarmWorkerOptions w;
    w.device = search.device;
    ReplayBenchmarker bench(data, ReplayOptions{0, ReplaySampling::median, a.time_scale});
    detail::farm::serve_farm([&bench](std::span<const Candidate> c) { return bench.measure(c); }, prototype, w, faults);
    return;
  }
  FarmCoordinator farm(search.device, FarmCoordinatorOptions{.heartbeat_timeout_s = a.heartbeat_timeout, .max_attempts = 2});
  if (!prototype.device) {
    // The ranks' device, described by the built-in table when it knows it (the surrogate's
    // features), else by its name alone.
    try {
      prototype.device = find_device(farm.device());
    } catch (const std::exception&) {
      prototype.device = std::make_shared<const Device>(Device::unknown(farm.device()));
    }
  }
  // With two or more worker ranks the strategies submit a candidate whenever a rank is free
  // (the coordinator is an AsyncBenchmarker), so no batch size needs choosing here.
  Plan plan = single_run_plan(a, strategies);
  const auto coordinator = std::make_shared<FarmCoordinator>(farm);  // copies share the farm
  auto& backend = plan.backend.emplace<CallerBackend>(caller_backend(search.space, prototype, coordinator));
  // The cache takes each result as it reaches rank 0, not when its batch is complete: an
  // aborted job (a rank killed) then loses none that came back.
  backend.on_result = [coordinator](FarmCoordinator::ResultHook hook) { coordinator->on_result(std::move(hook)); };
  backend.describe = cli::static_feature_describer(a.features, prototype);
  const auto start = std::chrono::steady_clock::now();
  cli::RunMonitor monitor(a.monitor, fmt::format("{} on the farm", prototype.kernel), cli::calibration_of_model(a.model));
  plan.observe = [&](SearchContext& ctx, std::size_t, const std::string&) {
    ctx.add_observer(cli::StopOnInterrupt{});
    monitor.watch(ctx, fmt::format("{} on the farm", strategies.front()));
  };
  const Trace trace = gpuforecast::run(plan).runs.front().trace;
  monitor.finish();
  farm.stop();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const TraceEntry* best = trace.best();
  std::size_t failed = 0;
  for (const auto& e : trace.entries()) failed += e.measurement.ok() ? 0 : 1;
  const auto ranks = farm.ranks();
  if (a.json) {
    nlohmann::json j{{"strategy", strategies.front()}, {"workers", ranks.size()}, {"device", farm.device()},
                     {"measurements", trace.size()}, {"failed", failed}, {"wall_seconds", wall},
                     {"measurements_per_second", wall > 0 ? static_cast<double>(trace.size()) / wall : 0.0},
                     {"charged_seconds", trace.total_cost_s()}};
    if (data) j["replay"] = a.replay, j["optimum_ms"] = data->best_ms();
    else j["kernel"] = a.kernel;
    if (best) j["best"] = {{"config", best->config.to_string()}, {"median_ms", best->measurement.median_ms},
                           {"found_at", best->index}};
    for (const auto& r : ranks)
      j["ranks"].push_back({{"rank", r.rank}, {"device", r.device}, {"measured", r.measured}, {"lost", r.lost},
                            {"reason", r.reason}});
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{} over {} worker ranks: {} measurements ({} failed) in {:.2f} s ({:.1f} per s)\n", strategies.front(),
             ranks.size(), trace.size(), failed, wall, wall > 0 ? static_cast<double>(trace.size()) / wall : 0.0);
  if (best)
    fmt::print("best: {:.4g} ms [{}], found at measurement {}{}\n", best->measurement.median_ms,
               best->config.to_string(), best->index, data ? fmt::format(" (optimum {:.4g} ms)", data->best_ms()) : "");
  for (const auto& r : ranks)
    fmt::print("rank {}: {} measurements{}\n", r.rank, r.measured, r.reason.empty() ? "" : ", " + r.reason);
}

void run_farm(const SearchArgs& a) {
  gpuforecast::FarmSession session;
  try {
    run_farm_ranks(session, a);
  } catch (const std::exception& e) {
    // The other ranks would wait for this one forever (in a receive, or in MPI's finalise):
    // say why and leave; mpirun then ends the job.
    fmt::print(stderr, "gpuforecast search --mpi: rank {}: {}\n", session.rank(), e.what());
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  }
}
#endif

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
  gpuforecast::cli::add_static_features_option(*cmd, args->features);
  cmd->add_option("--t1", args->t1, "T1 file whose Conditions constrain the replayed space (found next to the data by default)");
  cmd->add_option("--space", args->space,
                  "replay: configurations a strategy may propose: t1 (the T1 file's Conditions), cached (those stored with "
                  "a valid time, Kernel Tuner's tune_cache), cartesian (every combination; missing ones charged as "
                  "failed), auto (t1 when a T1 file is found, else cached)")
      ->capture_default_str()
      ->needs(replay);
  cmd->add_option("--sampling", args->sampling,
                  "replay: what a measurement reads from the stored runs: one_run (one drawn with the seed: noise as "
                  "recorded), bootstrap, median, or mean (Kernel Tuner's `time`, as its simulation mode serves it)")
      ->capture_default_str()
      ->needs(replay);
  std::string names;
  for (const auto& n : gpuforecast::strategy_names()) names += (names.empty() ? "" : "|") + n;
  cmd->add_option("--strategy", args->strategy, names + " (several, comma-separated, run side by side)")
      ->capture_default_str();
  cmd->add_option("--model", args->model, "pre-trained selective model file for the surrogate strategy");
  cmd->add_option("--surrogate", args->surrogate, "surrogate trained online when no --model is given")->capture_default_str();
  cmd->add_option("--budget", args->budget, "measurements per run (0: no count limit)")->capture_default_str();
  cmd->add_option("--budget-seconds", args->budget_seconds, "simulated (replay) or real seconds per run (0: no limit)");
  cmd->add_option("--seeds", args->seeds, "runs, with seeds first-seed, first-seed + 1, ...")->capture_default_str();
  cmd->add_option("--first-seed", args->first_seed)->capture_default_str();
  cmd->add_option("--threads", args->threads,
                  "replay: seeds searched side by side (0: one per hardware thread; any count gives the same result)")
      ->capture_default_str();
  cmd->add_option("--trace", args->trace, "write each run's trace in T4 format (.seedN inserted for several seeds)");
  cmd->add_option("--events", args->events,
                  "write each run's event log as it goes: JSON Lines, one line per forecast round, screening, "
                  "measurement (with the forecast made before it) and round (docs/events.md; .seedN inserted "
                  "for several seeds, STRATEGY. prefixed for several strategies)");
  cmd->add_option("--cache", args->cache,
                  "write each run's measurements to this Kernel Tuner cache file as they land (plain JSON; "
                  ".seedN inserted for several seeds, STRATEGY. prefixed for several strategies)");
  cmd->add_flag("--resume", args->resume,
                "continue the runs whose --cache file exists: what it holds is served from it, not measured again");
  cmd->add_option("--time-scale", args->time_scale,
                  "replay: hold each measurement for its stored compile + benchmark time times this factor "
                  "(0: no wait)")
      ->capture_default_str();
  cmd->add_option("--nvml-index", args->nvml_index,
                  "live: NVML's index of the GPU whose clocks, throttle reasons, temperature, ECC and Xid errors "
                  "are watched (NVML counts in PCI order)")
      ->capture_default_str();
  cmd->add_option("--sentinel-repeats", args->sentinel_repeats,
                  "replay: each measurement carries this many repeats of a sentinel (the data's steadiest "
                  "configuration), by which the anomaly monitor tells a slow device (docs/monitoring.md); 0: none")
      ->capture_default_str();
  cmd->add_option("--workers", args->workers,
                  "replay: measure on this many simulated workers at once (a virtual clock holds each measurement "
                  "for its stored compile + benchmark time), as a farm would")
      ->capture_default_str()
      ->needs(replay);
  cmd->add_option("--plot", args->plot, "write the mean convergence curves to this SVG file");
  cmd->add_option("--option", args->options, "strategy option NAME=VALUE for every strategy, or STRATEGY.NAME=VALUE for one (repeatable)");
  cmd->add_option("--screen", args->screen,
                  "surrogate strategy: drop proposals certified as no improvement over the incumbent, missing at most "
                  "a share alpha of true improvements with probability 1 - delta: alpha=A,delta=D[,tolerance=T]"
                  "[,calibration=FILE of the device's measurements, not trained on], or on");
  gpuforecast::cli::add_monitor_options(*cmd, args->monitor);
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->add_flag("--no-progress", args->no_progress, "no progress bar");
  cmd->add_flag("--list-options", args->list_options, "print every strategy's options (Markdown) and exit");
#if defined(GPUFORECAST_HAVE_MPI)
  cmd->add_flag("--mpi", args->mpi,
                "run as a measurement farm under mpirun: rank 0 searches, the other ranks measure (with --replay: "
                "replay, answering the stored median; with --kernel: on their GPUs, compiling what they measure)");
  cmd->add_option("--heartbeat-timeout", args->heartbeat_timeout,
                  "--mpi: seconds a worker holding a candidate may stay silent before it is taken as lost")
      ->capture_default_str();
  cmd->add_option("--farm-fault", args->farm_fault, "--mpi, for tests: RANK:die:N or RANK:hang:N after N results")
      ->group("");
#endif
  cmd->callback([args] {
    if (args->list_options) return list_options();
    // Not under mpirun: a worker rank that caught the signal mpirun forwards would keep waiting.
    std::optional<gpuforecast::cli::InterruptScope> interrupts;
    if (!args->mpi) interrupts.emplace();
    add_screening_options(*args);
    if (args->cache.ends_with(".gz"))
      throw gpuforecast::invalid_argument_error(
          fmt::format("--cache {}: a cache written as the search goes is plain JSON; give a name without .gz", args->cache));
    if (args->resume && args->cache.empty())
      throw gpuforecast::invalid_argument_error("--resume continues a --cache FILE: give --cache too");
    if (!std::isfinite(args->time_scale) || args->time_scale < 0)
      throw gpuforecast::invalid_argument_error(
          fmt::format("--time-scale must be a finite number >= 0, not {}", args->time_scale));
    if (args->workers == 0) throw gpuforecast::invalid_argument_error("--workers must be at least 1");
    (void)gpuforecast::parse_replay_sampling(args->sampling);  // a misspelt name fails before any file is read
    if (args->sentinel_repeats > 0 && args->replay.empty())
      throw gpuforecast::invalid_argument_error(
          "--sentinel-repeats replays a sentinel: it needs --replay (the CUDA benchmarker times none yet)");
    if (args->time_scale > 0 && args->replay.empty())
      throw gpuforecast::invalid_argument_error("--time-scale slows a replay down: it needs --replay");
#if defined(GPUFORECAST_HAVE_MPI)
    if (args->mpi) return run_farm(*args);
#endif
    if (!args->replay.empty()) return run_replay(*args);
    if (!args->kernel.empty()) {
      return run_live(*args);
    }
    throw gpuforecast::invalid_argument_error("gpuforecast search: give --replay FILE or --kernel T1.json");
  });
}};

}  // namespace
