// `gpuforecast search --kernel T1.json`: one strategy, one seed, measuring on the GPU through the
// CUDA benchmarker, with the GPU's own health signals among the observers' events.
#include <fmt/core.h>

#include <memory>
#include <optional>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/t1.hpp"
#include "gpuforecast/run/report.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "interrupt.hpp"
#include "search/search_args.hpp"
#include "static_features_option.hpp"
#if defined(GPUFORECAST_HAVE_CUDA_RUNTIME)
#include "device_health_watch.hpp"
#include "gpuforecast/runtime/cuda_benchmarker.hpp"
#endif

namespace gpuforecast::cli {

#if defined(GPUFORECAST_HAVE_CUDA_RUNTIME)
namespace {

CudaBenchmarker open_gpu(std::uint64_t seed, double timeout_s) {
  CudaBenchmarkerOptions options;
  options.seed = seed;
  options.timeout_s = timeout_s;
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

void run_live(const SearchArgs& a) {
  SearchTarget target = search_target(read_t1(a.kernel));
  auto bench = std::make_shared<CudaBenchmarker>(open_gpu(a.first_seed, a.kernel_timeout_s));
  target.prototype.device = std::make_shared<const Device>(bench->devices().front());
  const std::string device = target.prototype.device->name;
  Plan plan = single_run_plan(a);
  auto& backend = plan.backend.emplace<CallerBackend>(caller_backend(target.space, target.prototype, bench));
  backend.describe = static_feature_describer(a.features, target.prototype);
  RunMonitor monitor(a.monitor, fmt::format("{} on {}", target.prototype.kernel, device), calibration_of_model(a.model));
  plan.observe = [&](SearchContext& ctx, std::size_t, const std::string&) {
    ctx.add_observer(StopOnInterrupt{});
    monitor.watch(ctx, fmt::format("{} on {}", plan.strategy, device));
    // What the GPU itself says (throttling, temperature, ECC, Xid) reaches every observer as an
    // anomaly: the event log and the monitor among them.
    std::string why;
    if (auto nvml = NvmlDevice::open(a.nvml_index, &why))
      ctx.add_observer(DeviceHealthWatch(std::move(*nvml), {[&ctx](const SearchAnomaly& x) { ctx.report_anomaly(x); }}));
    else
      fmt::print(stderr, "gpuforecast: the GPU's clocks, throttling, temperature, ECC and Xid errors are not watched: {}\n",
                 why);
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
