// gpuforecast devices | compile | measure: the CUDA runtime from the command line.
//   devices   lists the GPUs the driver sees, or says that no CUDA driver was found;
//   compile   compiles one configuration of a T1 kernel with NVRTC (no GPU needed) and prints
//             its static features;
//   measure   measures configurations of a T1 kernel on this machine's GPUs and optionally
//             writes them as a Kernel Tuner cache file; with --events, an event log as a
//             search's (every measurement and fault as it lands, the end with its reason).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "command_registry.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "gpuforecast/space/enumerate.hpp"
#ifdef GPUFORECAST_HAVE_CUDA_RUNTIME
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "interrupt.hpp"
#include "gpuforecast/runtime/cuda_benchmarker.hpp"
#include "runtime/cuda_devices.hpp"
#include "runtime/launch_geometry.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "runtime/static_features.hpp"
#endif

namespace {
using namespace gpuforecast;

[[maybe_unused]] [[noreturn]] void no_runtime() {
  throw cuda_error("this gpuforecast was built without the CUDA runtime (no CUDA toolkit at build time)");
}

#ifdef GPUFORECAST_HAVE_CUDA_RUNTIME
// "name=value" pairs over the space's defaults (the first value of each parameter).
Config config_from(const T1File& t1, const std::vector<std::string>& assignments) {
  std::vector<Value> values;
  for (const auto& p : t1.space.parameters()) {
    if (p.values.empty()) throw invalid_argument_error(fmt::format("{}: parameter {} has no values", t1.path, p.name));
    values.push_back(p.values.front());
  }
  for (const auto& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos) throw invalid_argument_error(fmt::format("--config {}: expected name=value", a));
    const std::string name = a.substr(0, eq), text = a.substr(eq + 1);
    const std::size_t i = t1.space.index_of(name);
    Value v = text;
    for (const auto& candidate : t1.space.parameters()[i].values)
      if (candidate.to_string() == text) v = candidate;
    values[i] = v;
  }
  Config c = t1.space.make_config(std::move(values));
  if (!t1.space.is_valid(c))
    throw invalid_argument_error(fmt::format("[{}] violates the constraints or value lists of {}", c.to_string(), t1.path));
  return c;
}

void devices() {
  const auto devices = enumerate_cuda_devices();  // throws "no CUDA driver found: ..."
  fmt::print("CUDA devices: {}\n", devices.size());
  fmt::print("{:>3}  {:<28} {:>5} {:>5} {:>8} {:>9} {:>10} {:>7}  {}\n", "#", "name", "cc", "SMs", "MHz", "GiB", "GB/s",
             "L2 MiB", "NVRTC target");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const Device& d = devices[i];
    std::string target;
    try {
      target = NvrtcCompiler::target_for(d);
    } catch (const error& e) {
      target = e.what();
    }
    fmt::print("{:>3}  {:<28} {:>5} {:>5} {:>8.0f} {:>9.1f} {:>10.0f} {:>7.1f}  {}\n", i, d.name,
               fmt::format("{}.{}", d.compute_capability_major, d.compute_capability_minor), d.sm_count,
               d.core_clock_mhz, d.memory_gib, d.memory_bandwidth_gbs, d.l2_cache_mib, target);
  }
}

struct CompileArgs {
  std::string kernel;
  std::vector<std::string> config;
  std::string arch = "sm_90";
  std::string device;
  bool log = false;
};

void compile(const CompileArgs& a) {
  const T1File t1 = read_t1(a.kernel);
  const Config config = config_from(t1, a.config);
  const std::string target = a.device.empty() ? a.arch : NvrtcCompiler::target_for(*find_device(a.device));
  NvrtcCompiler compiler;
  const auto k = compiler.compile(t1.kernel, config, target);
  fmt::print("{} [{}] for {}: {} in {:.1f} ms\n", t1.kernel.kernel_name, config.to_string(), target,
             k->ok ? "compiled" : "FAILED", k->compile_ms);
  if (!k->ok) throw error("compile failed:\n" + k->log);
  fmt::print("entry {}; {} image of {} bytes; launch {}\n", k->lowered_name, k->is_cubin ? "cubin" : "PTX",
             k->image.size(), compute_launch_geometry(t1.kernel, config).to_string());
  for (const auto& name : static_feature_names())
    if (auto it = k->features.find(name); it != k->features.end()) fmt::print("  {:<28} {:>10g}\n", name, it->second);
  if (a.log) fmt::print("NVRTC log:\n{}\n", k->log);
}

struct MeasureArgs {
  std::string kernel;
  std::vector<std::string> config;
  std::size_t sample = 0;
  bool all = false;
  std::uint64_t seed = 0;
  std::string output;
  std::vector<int> ordinals;
  double timeout_s = 10;
  double max_seconds = 1;
  double width = 0.01;
  bool in_process = false;
  std::size_t top = 0;
  std::string events;
  std::size_t sentinel_repeats = 0;
};

// Measures every configuration as a run of the "list" strategy, so that the event log (its faults
// and anomalies) and Ctrl-C / SIGTERM work as in a search: a measurement reaches them as its batch
// lands, a few per device, which keeps compilation ahead of the GPUs. The trace holds them in the
// order given; a stopped run's, the prefix it measured.
Trace measure_all(std::shared_ptr<CudaBenchmarker> gpu, const TuningSpace& space, const Candidate& prototype,
                  const std::vector<Config>& configs, const MeasureArgs& a) {
  Plan plan;
  plan.strategy = "list";
  plan.settings.configs = std::make_shared<const std::vector<Config>>(configs);
  plan.settings.options["batch"] = std::to_string(4 * std::max<std::size_t>(1, gpu->devices().size()));
  plan.budget = configs.size();
  plan.seeds = 1;
  plan.first_seed = a.seed;
  plan.backend.emplace<CallerBackend>(caller_backend(space, prototype, std::move(gpu)));
  plan.outputs.events_path = file_per_run(a.events, 1);
  plan.outputs.stop_reason = cli::interruption_reason;
  plan.observe = [](SearchContext& ctx, std::size_t, const std::string&) { ctx.add_observer(cli::StopOnInterrupt{}); };
  cli::InterruptScope interrupts;
  return run(plan).runs.front().trace;
}

void measure(const MeasureArgs& a) {
  const T1File t1 = read_t1(a.kernel);
  std::vector<Config> configs;
  if (a.all) configs = enumerate_valid(t1.space);
  else if (a.sample > 0) configs = sample_valid(t1.space, a.sample, a.seed);
  else configs.push_back(config_from(t1, a.config));
  CudaBenchmarkerOptions o;
  o.device_ordinals = a.ordinals;
  o.timeout_s = a.timeout_s;
  o.isolate = !a.in_process;
  o.seed = a.seed;
  o.sentinel_repeats = a.sentinel_repeats;
  o.stopping_params = {{"width", a.width}, {"max_seconds", a.max_seconds}};
  auto bench = std::make_shared<CudaBenchmarker>(o);
  auto spec = std::make_shared<const KernelSpec>(t1.kernel);
  auto device = std::make_shared<const Device>(bench->devices().front());
  Candidate prototype;
  prototype.kernel = t1.kernel.benchmark_name;
  prototype.problem_size = t1.kernel.problem_size;
  prototype.device = device;
  prototype.spec = spec;
  const auto t0 = std::chrono::steady_clock::now();
  const Trace trace = measure_all(std::move(bench), t1.space, prototype, configs, a);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // What was measured, in order (a run stopped by a signal measured a prefix): only that is
  // printed and written.
  configs.clear();
  std::vector<Measurement> ms;
  for (const auto& e : trace.entries()) configs.push_back(e.config), ms.push_back(e.measurement);
  std::map<Status, int> counts;
  std::string header;
  for (const auto& p : t1.space.parameters()) header += (header.empty() ? "" : ",") + p.name;
  fmt::print("parameters: {}\n", header);
  fmt::print("{:<60} {:>14} {:>10} {:>21} {:>8} {:>10}\n", "configuration", "status", "median ms", "95% CI of median",
             "samples", "compile ms");
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    ++counts[ms[i].status];
    if (a.top == 0 || ms[i].ok()) rows.push_back(i);
  }
  if (a.top > 0) {  // the fastest successful configurations only
    std::sort(rows.begin(), rows.end(), [&](auto x, auto y) { return ms[x].median_ms < ms[y].median_ms; });
    if (rows.size() > a.top) rows.resize(a.top);
  }
  for (const std::size_t i : rows) {
    const auto& m = ms[i];
    std::string cfg = configs[i].key();  // values in parameter order, Kernel Tuner's cache key
    fmt::print("{:<60} {:>14} {:>10.4f} {:>10.4f}-{:<10.4f} {:>8} {:>10.1f}\n", cfg, to_string(m.status), m.median_ms,
               m.ci_low_ms, m.ci_high_ms, m.samples_ms.size(), m.compile_ms);
  }
  std::string summary;
  for (const auto& [s, n] : counts) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, to_string(s));
  fmt::print("{} configurations on {} in {:.1f} s: {}\n", ms.size(), device->name, wall, summary);
  if (!a.output.empty()) {
    CacheFile f;
    f.path = a.output;
    f.device_name = device->name;
    f.kernel_name = t1.kernel.kernel_name;
    f.benchmark = t1.kernel.benchmark_name;
    f.problem_size = t1.kernel.problem_size;
    f.space = TuningSpace(t1.space.parameters(), {});
    const std::time_t now = std::time(nullptr);
    char stamp[64];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::gmtime(&now));
    for (std::size_t i = 0; i < ms.size(); ++i) {
      CacheEntry e;
      e.config = f.space.make_config(configs[i].values());
      e.measurement = ms[i];
      if (ms[i].ok() && !ms[i].samples_ms.empty()) {
        double sum = 0;
        for (double s : ms[i].samples_ms) sum += s;
        e.mean_ms = sum / static_cast<double>(ms[i].samples_ms.size());
      } else if (e.measurement.reason.empty() || e.measurement.reason == to_string(ms[i].status)) {
        // Kernel Tuner's names for failures.
        e.measurement.reason = ms[i].status == Status::compile_failed ? "CompilationFailedConfig"
                               : ms[i].status == Status::invalid      ? "InvalidConfig"
                                                                       : "RuntimeFailedConfig";
      }
      e.timestamp = stamp;
      f.entries.push_back(std::move(e));
    }
    write_kernel_tuner_cache(f, a.output);
    fmt::print("wrote {}\n", a.output);
  }
}
#endif

const gpuforecast::cli::RegisterCommand reg_devices{"devices", [](CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List the GPUs the CUDA driver sees (says so when there is no driver)");
  cmd->callback([] {
#ifdef GPUFORECAST_HAVE_CUDA_RUNTIME
    devices();
#else
    no_runtime();
#endif
  });
}};

const gpuforecast::cli::RegisterCommand reg_compile{"compile", [](CLI::App& app) {
  auto* cmd = app.add_subcommand("compile", "Compile one configuration of a T1 kernel with NVRTC and print its static features");
#ifdef GPUFORECAST_HAVE_CUDA_RUNTIME
  auto args = std::make_shared<CompileArgs>();
  cmd->add_option("--kernel", args->kernel, "T1 spec (.json) with its source beside it")->required();
  cmd->add_option("--config", args->config, "name=value (others: first value of their list)");
  cmd->add_option("--arch", args->arch, "target: sm_XY (cubin) or compute_XY (PTX)");
  cmd->add_option("--device", args->device, "device name from the table; overrides --arch");
  cmd->add_flag("--log", args->log, "print the NVRTC log");
  cmd->callback([args] { compile(*args); });
#else
  cmd->callback([] { no_runtime(); });
#endif
}};

const gpuforecast::cli::RegisterCommand reg_measure{"measure", [](CLI::App& app) {
  auto* cmd = app.add_subcommand("measure", "Measure configurations of a T1 kernel on this machine's GPUs");
#ifdef GPUFORECAST_HAVE_CUDA_RUNTIME
  auto args = std::make_shared<MeasureArgs>();
  cmd->add_option("--kernel", args->kernel, "T1 spec (.json) with its source beside it")->required();
  cmd->add_option("--config", args->config, "name=value for a single configuration");
  cmd->add_option("--sample", args->sample, "measure this many valid configurations drawn with --seed");
  cmd->add_flag("--all", args->all, "measure every valid configuration");
  cmd->add_option("--seed", args->seed, "sampling and argument-data seed");
  cmd->add_option("--output", args->output, "write a Kernel Tuner cache file (.json or .json.gz)");
  cmd->add_option("--device-ordinal", args->ordinals, "driver ordinals to use (default: all)");
  cmd->add_option("--timeout", args->timeout_s, "seconds without a finished kernel before a timeout");
  cmd->add_option("--max-seconds", args->max_seconds, "time cap per configuration");
  cmd->add_option("--width", args->width, "stop when the 95% CI of the median is within +-width");
  cmd->add_flag("--in-process", args->in_process, "no worker processes (a hang cannot be recovered)");
  cmd->add_option("--top", args->top, "print only the N fastest successful configurations");
  cmd->add_option("--sentinel-repeats", args->sentinel_repeats,
                  "time the kernel's reference configuration this many times after each measurement on the same GPU: "
                  "the event log's anomaly lines then tell a slower device from a slower configuration");
  cmd->add_option("--events", args->events,
                  "write each measurement, fault and anomaly as it lands to this JSON Lines file (docs/events.md)");
  cmd->callback([args] { measure(*args); });
#else
  cmd->callback([] { no_runtime(); });
#endif
}};

}  // namespace
