// `gpuforecast search --kernel T1.json`: one strategy, one seed, measuring on the GPU through the
// CUDA benchmarker, with the GPU's own health signals among the observers' events.
#include <fmt/core.h>

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
#if defined(GPUFORECAST_HAVE_CUDA_RUNTIME)
#include "gpuforecast/runtime/cuda_benchmarker.hpp"
#endif

namespace gpuforecast::cli {

#if defined(GPUFORECAST_HAVE_CUDA_RUNTIME)
namespace {

CudaBenchmarker open_gpu(const SearchArgs& a) {
  const CudaBenchmarkerOptions options = gpu_options(a);
  std::optional<CudaBenchmarker> opened;
  try {
    opened.emplace(options);
  } catch (const cuda_error& e) {
    throw cuda_error(fmt::format("live search needs a CUDA GPU and its driver ({}); replay recorded measurements "
                                 "with --replay FILE instead",
                                 e.what()));
  }
  if (opened->devices().empty()) throw cuda_error("no CUDA device found");
  return std::move(*opened);
}

}  // namespace

CudaBenchmarkerOptions gpu_options(const SearchArgs& a) {
  CudaBenchmarkerOptions options;
  options.seed = a.first_seed;
  options.timeout_s = a.kernel_timeout_s;
  options.sentinel_repeats = a.sentinel_repeats;
  return options;
}

void run_live(const SearchArgs& a) {
  SearchTarget target = search_target(read_t1(a.kernel));
  auto bench = std::make_shared<CudaBenchmarker>(open_gpu(a));
  target.prototype.device = std::make_shared<const Device>(bench->devices().front());
  const std::string device = target.prototype.device->name;
  Plan plan = single_run_plan(a);
  auto& backend = plan.backend.emplace<CallerBackend>(caller_backend(target.space, target.prototype, bench));
  backend.describe = static_feature_describer(a.features, target.prototype);
  backend.watch_gpu = a.nvml_index;
  RunMonitor monitor(a.monitor, fmt::format("{} on {}", target.prototype.kernel, device), calibration_of_model(a.model));
  plan.observe = [&](SearchContext& ctx, std::size_t, const std::string&) {
    ctx.add_observer(StopOnInterrupt{});
    monitor.watch(ctx, fmt::format("{} on {}", plan.strategy, device));
  };
  MeasuredRun report{plan.strategy, device, run(plan).runs.front().trace};
  monitor.finish();
  report.kernel = a.kernel;
  fmt::print("{}", a.json ? json_report(report) + "\n" : text_report(report));
}

#else

void run_live(const SearchArgs&) {
  throw cuda_error(
      "gpuforecast search --kernel: this build has no CUDA runtime (configure with the CUDA toolkit "
      "at /usr/local/cuda); replay recorded data with --replay instead");
}

#endif

}  // namespace gpuforecast::cli
