#include "gpuforecast/runtime/cuda_benchmarker.hpp"

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "gpuforecast/core/error.hpp"
#include "runtime/compile_pool.hpp"
#include "runtime/cuda_devices.hpp"
#include "runtime/detail/driver_api.hpp"
#include "runtime/kernel_arguments.hpp"
#include "runtime/launch_geometry.hpp"
#include "runtime/device_executor.hpp"
#include "runtime/worker_process.hpp"

namespace gpuforecast {

namespace {
using detail::Job;

// One device's way of running jobs: a worker process, or an executor in this process.
class Runner {
 public:
  virtual ~Runner() = default;
  virtual Measurement run(const Job& job, double timeout_s) = 0;
  [[nodiscard]] virtual bool has_reference(const std::string& set) const = 0;
};

class ProcessRunner final : public Runner {
 public:
  explicit ProcessRunner(int ordinal) : m_worker(ordinal) { m_worker.ensure_started(); }
  Measurement run(const Job& job, double timeout_s) override { return m_worker.run(job, timeout_s); }
  [[nodiscard]] bool has_reference(const std::string& set) const override { return m_worker.has_reference(set); }

 private:
  detail::WorkerProcess m_worker;
};

class InProcessRunner final : public Runner {
 public:
  InProcessRunner(const driver::DriverApi& api, int ordinal) : m_executor(api, ordinal) {}
  Measurement run(const Job& job, double) override { return m_executor.run(job); }
  [[nodiscard]] bool has_reference(const std::string& set) const override { return m_executor.has_reference(set); }

 private:
  detail::DeviceExecutor m_executor;
};

std::string kernel_of(const Candidate& c) { return !c.kernel.empty() ? c.kernel : c.spec->benchmark_name; }

struct Prepared {
  bool ready = false;  // false: `early` is the measurement
  Measurement early;
  LaunchGeometry geometry;
  std::vector<detail::ArgumentDescriptor> arguments;
  std::string set;
  std::shared_future<std::shared_ptr<const CompiledKernel>> compiled;
  std::string target;
};
}  // namespace

struct CudaBenchmarker::Impl {
  CudaBenchmarkerOptions options;
  std::vector<Device> devices;
  std::vector<int> ordinals;
  std::unique_ptr<NvrtcCompiler> compiler;
  std::unique_ptr<CompilePool> pool;
  std::vector<std::unique_ptr<Runner>> runners;  // one per device
  std::mutex reference_mutex;
  std::map<std::string, std::optional<Job>> reference_jobs;  // set -> job (nullopt: none compiles)
  std::vector<char> sentinel_warmed;                          // per runner: its first sentinel ran

  [[nodiscard]] std::optional<Job> reference_job(const std::string& set) {
    std::lock_guard lock(reference_mutex);
    if (auto it = reference_jobs.find(set); it != reference_jobs.end()) return it->second;
    return std::nullopt;
  }

  // The reference configuration, timed a fixed number of times without verification on runner
  // `w`, into m.sentinel_ms; a sentinel that fails says so in the log and leaves it empty.
  void time_sentinel(std::size_t w, const std::string& set, Measurement& m) {
    std::optional<Job> job = reference_job(set);
    if (!job) {
      m.log += "no sentinel: no reference configuration compiles\n";
      return;
    }
    const std::size_t repeats =
        sentinel_warmed[w] ? options.sentinel_repeats : std::max(options.sentinel_repeats, options.sentinel_warmup_repeats);
    job->kind = Job::Kind::measure;
    job->verify = false;
    job->criterion = "fixed_count";
    job->criterion_params = {{"count", static_cast<double>(repeats)}};
    const Measurement s = runners[w]->run(*job, options.timeout_s);
    if (s.status != Status::ok) {
      m.log += fmt::format("sentinel failed ({}): {}\n", to_string(s.status), s.log);
      return;
    }
    sentinel_warmed[w] = 1;
    m.sentinel_ms = s.samples_ms;
  }

  Prepared prepare(const Candidate& c, const std::string& target) {
    Prepared p;
    auto early = [&](Status s, std::string log) {
      p.early.status = s;
      p.early.reason = std::string(to_string(s));
      p.early.log = std::move(log);
      return p;
    };
    if (!c.spec) return early(Status::invalid, "no KernelSpec (source, geometry, arguments): nothing to measure");
    try {
      const auto ps = c.problem_size.empty() ? std::span<const std::int64_t>(c.spec->problem_size)
                                             : std::span<const std::int64_t>(c.problem_size);
      p.geometry = compute_launch_geometry(*c.spec, c.config, ps);
      std::vector<std::string> key{c.spec->benchmark_name, c.spec->kernel_name, std::to_string(options.seed)};
      for (auto v : ps) key.push_back(std::to_string(v));
      for (const auto& a : c.spec->arguments) {
        detail::ArgumentDescriptor d{a.name, a.type, a.memory_type, a.mem_type, a.fill_type, a.fill_value, a.output, 1};
        if (a.memory_type != "Scalar" && a.memory_type != "scalar") {
          const double n = evaluate_spec_expression(a.size.empty() ? "1" : a.size, c.config, ps);
          if (!(n >= 1)) throw invalid_argument_error(fmt::format("argument {} has size {}", a.name, n));
          d.count = static_cast<std::uint64_t>(n);
        }
        key.insert(key.end(), {d.name, d.type, d.memory_type, d.mem_type, d.fill_type, fmt::format("{}", d.fill_value),
                               std::to_string(d.count), d.output ? "out" : "in"});
        p.arguments.push_back(std::move(d));
      }
      p.set = content_key(key);
    } catch (const error& e) {
      return early(Status::invalid, fmt::format("{}: {}", c.describe(), e.what()));
    }
    p.target = target;
    p.compiled = pool->submit(c.spec, c.config, target);
    p.ready = true;
    return p;
  }

  Job make_job(const Prepared& p, const CompiledKernel& k) const {
    Job j;
    j.image = k.image;
    j.lowered_name = k.lowered_name;
    j.geometry = p.geometry;
    j.argument_set = p.set;
    j.arguments = p.arguments;
    j.seed = options.seed;
    j.verify = options.verify;
    j.atol = options.atol, j.rtol = options.rtol;
    j.criterion = options.stopping;
    j.criterion_params = options.stopping_params;
    j.warmup = options.warmup;
    j.flush_l2 = options.flush_l2;
    return j;
  }

  // The reference job of each argument set the batch brings: the configured reference of the
  // kernel when it has one (none, if that does not compile or launch), else the set's first
  // candidate that compiles. Sets seen in earlier batches keep theirs.
  void choose_references(std::span<const Candidate> candidates, const std::vector<Prepared>& prepared,
                         const std::string& target) {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const Prepared& p = prepared[i];
      if (!p.ready || reference_jobs.count(p.set)) continue;
      const Candidate& c = candidates[i];
      if (auto it = options.references.find(kernel_of(c)); it != options.references.end()) {
        reference_jobs[p.set] = configured_reference(c, it->second, p, target);
        continue;
      }
      auto k = p.compiled.get();
      if (k && k->ok) {
        Job j = make_job(p, *k);
        j.kind = Job::Kind::reference;
        reference_jobs[p.set] = std::move(j);
      }
    }
  }

  // The reference job of `reference`, a configuration of c's kernel; none when it does not
  // compile or its launch geometry cannot be computed.
  std::optional<Job> configured_reference(const Candidate& c, const Config& reference, const Prepared& p,
                                          const std::string& target) {
    auto k = compiler->compile(*c.spec, reference, target);
    if (!k->ok) return std::nullopt;
    Prepared rp = p;
    try {
      rp.geometry = compute_launch_geometry(*c.spec, reference, c.problem_size);
    } catch (const error&) {
      return std::nullopt;
    }
    Job j = make_job(rp, *k);
    j.kind = Job::Kind::reference;
    return j;
  }

  // Before a verified job runs on `runner`: its set's reference outputs, recorded there once.
  // Without them the job runs unverified, and the returned note says why.
  std::string ensure_reference_outputs(Runner& runner, const std::string& set, Job& job) {
    const std::optional<Job> ref = reference_job(set);
    if (!ref) {
      job.verify = false;
      return "output not verified: no reference configuration compiles\n";
    }
    if (runner.has_reference(set)) return {};
    const Measurement rm = runner.run(*ref, options.timeout_s);
    if (rm.status == Status::ok) return {};
    job.verify = false;
    return fmt::format("output not verified: the reference run failed ({}): {}\n", to_string(rm.status), rm.log);
  }

  // Candidate c on worker w: its kernel for the worker's architecture (compiled already when that
  // is the first device's), then verified and timed there; m.cost_s is the wall time of both.
  void measure_on(std::size_t w, const std::string& target, const Candidate& c, Prepared& p, Measurement& m) {
    if (!p.ready) {
      m = std::move(p.early);
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<const CompiledKernel> k;
    try {
      k = target == p.target ? p.compiled.get() : compiler->compile(*c.spec, c.config, target);
    } catch (const std::exception& e) {
      m.status = Status::compile_failed;
      m.reason = "compile_failed";
      m.log = e.what();
      return;
    }
    m.compile_ms = k->compile_ms;
    if (!k->ok) {
      m.status = Status::compile_failed;
      m.reason = "compile_failed";
      m.log = k->log;
    } else {
      Job job = make_job(p, *k);
      const std::string note = job.verify ? ensure_reference_outputs(*runners[w], p.set, job) : std::string();
      const double compile_ms = m.compile_ms;
      m = runners[w]->run(job, options.timeout_s);
      m.compile_ms = compile_ms;
      m.log = note + m.log;
    }
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m.cost_s = wall_s;  // waiting for the compile (if the pool is behind) plus measuring
    if (m.status != Status::ok) m.reason = std::string(to_string(m.status));
    // After failures too: a device that slowed down shows it whatever the configuration did.
    if (options.sentinel_repeats > 0) time_sentinel(w, p.set, m);
  }
};

CudaBenchmarker::CudaBenchmarker(CudaBenchmarkerOptions options) : m_impl(std::make_unique<Impl>()) {
  Impl& im = *m_impl;
  im.options = std::move(options);
  // Validate the criterion here, where an error can still be an exception.
  (void)make_stopping_criterion(im.options.stopping, im.options.stopping_params);
  detail::start_worker_spawner();  // workers are forked from it: see worker_process.hpp
  im.devices = enumerate_cuda_devices();
  if (im.devices.empty()) throw cuda_error("the CUDA driver reports no GPU");
  if (im.options.device_ordinals.empty())
    for (std::size_t i = 0; i < im.devices.size(); ++i) im.ordinals.push_back(static_cast<int>(i));
  else
    im.ordinals = im.options.device_ordinals;
  std::vector<Device> chosen;
  for (int o : im.ordinals) {
    if (o < 0 || o >= static_cast<int>(im.devices.size()))
      throw invalid_argument_error(fmt::format("device ordinal {} does not exist ({} devices)", o, im.devices.size()));
    chosen.push_back(im.devices[static_cast<std::size_t>(o)]);
    if (im.options.isolate) {
      im.runners.push_back(std::make_unique<ProcessRunner>(o));
    } else {
      std::string why;
      const driver::DriverApi* api = driver::driver(&why);
      if (!api) throw cuda_error(why);
      im.runners.push_back(std::make_unique<InProcessRunner>(*api, o));
    }
  }
  im.devices = std::move(chosen);
  im.sentinel_warmed.assign(im.runners.size(), 0);
  im.compiler = std::make_unique<NvrtcCompiler>(im.options.compiler);
  im.pool = std::make_unique<CompilePool>(*im.compiler, im.options.compile_threads);
}

CudaBenchmarker::~CudaBenchmarker() = default;
CudaBenchmarker::CudaBenchmarker(CudaBenchmarker&&) noexcept = default;
CudaBenchmarker& CudaBenchmarker::operator=(CudaBenchmarker&&) noexcept = default;
const std::vector<Device>& CudaBenchmarker::devices() const noexcept { return m_impl->devices; }
const CudaBenchmarkerOptions& CudaBenchmarker::options() const noexcept { return m_impl->options; }

std::vector<Measurement> CudaBenchmarker::measure(std::span<const Candidate> candidates) {
  Impl& im = *m_impl;
  std::vector<Measurement> out(candidates.size());
  // Compiling starts for every candidate now, for the first device's architecture; workers on
  // other architectures compile on demand (through the same cache).
  const std::string target0 = NvrtcCompiler::target_for(im.devices.front());
  std::vector<Prepared> prepared;
  prepared.reserve(candidates.size());
  for (const auto& c : candidates) prepared.push_back(im.prepare(c, target0));
  if (im.options.verify) im.choose_references(candidates, prepared, target0);

  // One worker per device, each taking the next candidate until none is left.
  std::atomic<std::size_t> next{0};
  auto work = [&](std::size_t w) {
    std::string target = target0;
    try {
      target = NvrtcCompiler::target_for(im.devices[w]);
    } catch (const error&) {
      // A device NVRTC cannot target keeps the first device's image; its measurement says why.
    }
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= candidates.size()) return;
      im.measure_on(w, target, candidates[i], prepared[i], out[i]);
    }
  };
  if (im.runners.size() == 1) {
    work(0);
  } else {
    std::vector<std::thread> threads;
    for (std::size_t w = 0; w < im.runners.size(); ++w) threads.emplace_back(work, w);
    for (auto& t : threads) t.join();
  }
  return out;
}

}  // namespace gpuforecast
