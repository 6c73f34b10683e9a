// `gpuforecast search --mpi` under mpirun: rank 0 runs one strategy on one seed, the other ranks
// measure for it. With --replay they replay stored measurements, answering the stored median,
// so that which rank measured a candidate does not change the result; with --kernel they
// measure on their GPUs.
#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "run/report.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "interrupt.hpp"
#include "search/search_args.hpp"
#include "static_features_option.hpp"
#if defined(GPUFORECAST_HAVE_MPI)
#include "farm/worker_faults.hpp"
#include "gpuforecast/farm.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#endif
#if defined(GPUFORECAST_HAVE_MPI) && defined(GPUFORECAST_HAVE_CUDA_RUNTIME)
#include "gpuforecast/runtime/cuda_benchmarker.hpp"
#endif

namespace gpuforecast::cli {

#if defined(GPUFORECAST_HAVE_MPI)
namespace {

// What a farm searches; with --replay the data too (the workers' answers and the optimum). The
// target device is the replayed one, or (empty) the device of the lowest GPU rank.
struct FarmSearch {
  SearchTarget target;
  std::shared_ptr<const SpaceData> data;
  std::string device;
};

FarmSearch farm_search_of(const SearchArgs& a) {
  FarmSearch f;
  if (!a.replay.empty()) {
    f.data = load_replay_data(a);
    f.target = search_target(*f.data);
    f.device = f.data->device ? f.data->device->name : std::string{};
    return f;
  }
  if (a.kernel.empty())
    throw invalid_argument_error("search --mpi: give --replay FILE (replay ranks) or --kernel T1.json (GPU ranks)");
  f.target = search_target(read_t1(a.kernel));
  return f;
}

// A GPU worker rank: it owns the GPUs of its node through the CUDA benchmarker (worker
// processes, watchdog, compile cache) and compiles what it measures; a rank that cannot (no
// CUDA driver, no GPU, a build without the CUDA runtime) tells rank 0 why and takes no work.
void serve_gpu_rank(const SearchArgs& a, Candidate prototype, const detail::farm::WorkerFaults& faults) {
#if defined(GPUFORECAST_HAVE_CUDA_RUNTIME)
  std::optional<CudaBenchmarker> bench;
  try {
    bench.emplace(gpu_options(a));
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

void serve_replay_rank(const SearchArgs& a, const FarmSearch& search, const detail::farm::WorkerFaults& faults) {
  FarmWorkerOptions w;
  w.device = search.device;
  ReplayBenchmarker bench(search.data, ReplayOptions{0, ReplaySampling::median, a.time_scale, a.sentinel_repeats});
  detail::farm::serve_farm([&bench](std::span<const Candidate> c) { return bench.measure(c); }, search.target.prototype,
                           w, faults);
}

void coordinate(const SearchArgs& a, FarmSearch& search) {
  FarmCoordinator farm(search.device, FarmCoordinatorOptions{.heartbeat_timeout_s = a.heartbeat_timeout, .max_attempts = 2});
  Candidate& prototype = search.target.prototype;
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
  Plan plan = single_run_plan(a);
  plan.progress = false;
  const auto coordinator = std::make_shared<FarmCoordinator>(farm);  // copies share the farm
  auto& backend = plan.backend.emplace<CallerBackend>(caller_backend(search.target.space, prototype, coordinator));
  // The cache takes each result as it reaches rank 0, not when its batch is complete: an
  // aborted job (a rank killed) then loses none that came back.
  backend.on_result = [coordinator](FarmCoordinator::ResultHook hook) { coordinator->on_result(std::move(hook)); };
  backend.on_worker_lost = [coordinator](std::function<void(const SearchWorkerLost&)> report) {
    if (!report) return coordinator->on_rank_lost({});
    coordinator->on_rank_lost([report = std::move(report)](const FarmRankLost& l) {
      report(SearchWorkerLost{0, l.rank.rank, l.rank.device, l.rank.reason, l.held, l.went});
    });
  };
  backend.describe = static_feature_describer(a.features, prototype);
  const auto start = std::chrono::steady_clock::now();
  RunMonitor monitor(a.monitor, fmt::format("{} on the farm", prototype.kernel), calibration_of_model(a.model));
  plan.observe = [&](SearchContext& ctx, std::size_t, const std::string&) {
    ctx.add_observer(StopOnInterrupt{});
    monitor.watch(ctx, fmt::format("{} on the farm", plan.strategy));
  };
  MeasuredRun report{plan.strategy, farm.device(), run(plan).runs.front().trace};
  monitor.finish();
  farm.stop();
  report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.kernel = a.kernel;
  report.replay = a.replay;
  if (search.data) report.optimum_ms = search.data->best_ms();
  auto& workers = report.farm.emplace();
  for (const auto& r : farm.ranks()) workers.push_back({r.rank, r.device, r.measured, r.lost, r.reason});
  fmt::print("{}", a.json ? json_report(report) + "\n" : text_report(report));
}

}  // namespace

void run_farm(const SearchArgs& a) {
  FarmSession session;
  try {
    if (a.strategies.size() != 1) throw invalid_argument_error("search --mpi runs one --strategy at a time");
    FarmSearch search = farm_search_of(a);
    // Every rank reads --farm-fault, so that a bad one stops rank 0 too.
    const auto faults = detail::farm::parse_worker_faults(a.farm_fault, session.rank());
    if (session.coordinator()) return coordinate(a, search);
    if (search.data) return serve_replay_rank(a, search, faults);
    return serve_gpu_rank(a, search.target.prototype, faults);
  } catch (const std::exception& e) {
    // The other ranks would wait for this one forever (in a receive, or in MPI's finalise):
    // say why and leave; mpirun then ends the job.
    fmt::print(stderr, "gpuforecast search --mpi: rank {}: {}\n", session.rank(), e.what());
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  }
}

#else

void run_farm(const SearchArgs&) {
  throw invalid_argument_error("gpuforecast search --mpi: this build has no MPI (install an MPI and configure again)");
}

#endif

}  // namespace gpuforecast::cli
