#include "runtime/device_executor.hpp"

#include <cuda.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "runtime/detail/measurement_loop.hpp"
#include "runtime/sample_error.hpp"
#include "gpuforecast/core/archive.hpp"
#include "runtime/cupti_timer.hpp"

namespace gpuforecast::detail {

// ---- serialisation of jobs and results (the worker protocol) ----

std::string serialize(const Job& j) {
  ArchiveWriter w;
  w.u64(static_cast<std::uint64_t>(j.kind));
  w.str(j.image);
  w.str(j.lowered_name);
  for (auto v : j.geometry.grid) w.u64(v);
  for (auto v : j.geometry.block) w.u64(v);
  w.u64(j.geometry.shared_memory_bytes);
  w.str(j.argument_set);
  w.u64(j.arguments.size());
  for (const auto& a : j.arguments) {
    w.str(a.name), w.str(a.type), w.str(a.memory_type), w.str(a.mem_type), w.str(a.fill_type);
    w.f64(a.fill_value), w.u64(a.output), w.u64(a.count);
  }
  w.u64(j.seed), w.u64(j.verify), w.f64(j.atol), w.f64(j.rtol);
  w.str(j.criterion);
  w.f64_map(j.criterion_params);
  w.i64(j.warmup), w.u64(j.flush_l2);
  return w.release();
}

Job deserialize_job(const std::string& bytes) {
  ArchiveReader r(bytes, "benchmark job message");
  Job j;
  j.kind = static_cast<Job::Kind>(r.u64());
  j.image = r.str();
  j.lowered_name = r.str();
  for (auto& v : j.geometry.grid) v = r.u64();
  for (auto& v : j.geometry.block) v = r.u64();
  j.geometry.shared_memory_bytes = r.u64();
  j.argument_set = r.str();
  j.arguments.resize(r.u64());
  for (auto& a : j.arguments) {
    a.name = r.str(), a.type = r.str(), a.memory_type = r.str(), a.mem_type = r.str(), a.fill_type = r.str();
    a.fill_value = r.f64(), a.output = r.u64() != 0, a.count = r.u64();
  }
  j.seed = r.u64(), j.verify = r.u64() != 0, j.atol = r.f64(), j.rtol = r.f64();
  j.criterion = r.str();
  j.criterion_params = r.f64_map();
  j.warmup = r.i64(), j.flush_l2 = r.u64() != 0;
  return j;
}

std::string serialize(const Measurement& m) {
  ArchiveWriter w;
  w.u64(static_cast<std::uint64_t>(m.status));
  w.f64s(m.samples_ms);
  w.f64(m.median_ms), w.f64(m.ci_low_ms), w.f64(m.ci_high_ms), w.f64(m.compile_ms), w.f64(m.benchmark_ms),
      w.f64(m.cost_s);
  w.str(m.reason), w.str(m.log);
  return w.release();
}

Measurement deserialize_measurement(const std::string& bytes) {
  ArchiveReader r(bytes, "worker measurement message");
  Measurement m;
  m.status = static_cast<Status>(r.u64());
  m.samples_ms = r.f64s();
  m.median_ms = r.f64(), m.ci_low_ms = r.f64(), m.ci_high_ms = r.f64(), m.compile_ms = r.f64(),
  m.benchmark_ms = r.f64(), m.cost_s = r.f64();
  m.reason = r.str(), m.log = r.str();
  return m;
}

// ---- the executor ----

namespace {
// A fault that leaves the context unusable: the executor rebuilds it.
class sticky_error : public sample_error {
 public:
  using sample_error::sample_error;
};

KernelSpec spec_from(const Job& job) {
  KernelSpec s;
  s.benchmark_name = job.argument_set;
  for (const auto& a : job.arguments)
    s.arguments.push_back(KernelArgument{a.name, a.type, a.memory_type, "ReadWrite", a.mem_type, a.fill_type,
                                         std::to_string(a.count), a.fill_value, a.output});
  return s;
}
}  // namespace

struct DeviceExecutor::State {
  driver::DeviceHandle device = 0;
  driver::Context ctx = nullptr;
  driver::Stream stream = nullptr;
  driver::Event start = nullptr, stop = nullptr;
  driver::DevicePtr flush = 0;
  std::size_t flush_capacity = 0;  // bytes allocated
  std::size_t flush_limit = 0;     // the most it may grow to
  std::size_t flush_min = 0;       // twice the L2
  std::size_t flush_bytes = 0;     // written before the next sample
  double write_bytes_per_s = 0;    // half the peak memory bandwidth: a cautious memset rate
  double enqueue_s_max = 0;        // longest host time to enqueue start event, kernel, stop event
  std::string set;
  std::vector<HostArgument> host;
  std::vector<driver::DevicePtr> device_ptrs;
  CuptiKernelTimes* cupti = nullptr;
  std::string cupti_why;
};

DeviceExecutor::DeviceExecutor(const driver::DriverApi& api, int ordinal, std::function<void()> progress)
    : m_api(api), m_ordinal(ordinal), m_progress(std::move(progress)) {}

DeviceExecutor::~DeviceExecutor() { release_context(false); }

bool DeviceExecutor::has_reference(const std::string& set) const { return m_references.count(set) > 0; }

void DeviceExecutor::ensure_context() {
  if (m_state) return;
  auto s = std::make_unique<State>();
  auto check = [&](driver::Result r, const char* what) {
    if (r != driver::success) throw cuda_error(fmt::format("{}: {}", what, driver::describe_result(m_api, r)));
  };
  // Before the context exists. A test driver's launches never reach CUPTI, and enabling CUPTI
  // would initialise the real driver in a process that may still fork workers.
  if (driver::is_real_driver(m_api))
    s->cupti = CuptiKernelTimes::instance(&s->cupti_why);
  else
    s->cupti_why = "a test driver table is in use";
  check(m_api.device_get(&s->device, m_ordinal), "cuDeviceGet");
  if (auto r = m_api.primary_ctx_retain(&s->ctx, s->device); r != driver::success)
    throw cuda_error(fmt::format("cuDevicePrimaryCtxRetain: {}{}", driver::describe_result(m_api, r),
                                 driver::is_sticky(r) ? ": a sticky error lost this process's CUDA context and the "
                                                        "driver gives it no new one; isolated workers (the default) "
                                                        "recover from this by starting a new process"
                                                      : ""));
  m_state = std::move(s);  // from here release_context cleans up
  State& st = *m_state;
  check(m_api.ctx_set_current(st.ctx), "cuCtxSetCurrent");
  check(m_api.stream_create(&st.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(m_api.event_create(&st.start, CU_EVENT_DEFAULT), "cuEventCreate");
  check(m_api.event_create(&st.stop, CU_EVENT_DEFAULT), "cuEventCreate");
  int l2 = 0;
  check(m_api.device_get_attribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, st.device), "cuDeviceGetAttribute(L2)");
  // At least twice the L2: writing it evicts every line the previous sample left behind. The
  // flush also keeps the stream busy while the host enqueues the start event, the kernel and
  // the stop event; an idle stream would let the event pair take in the host's launch time
  // (about 180 us on the H200 of the gpu-check, where CUPTI and events then differed by 30% on
  // a 500 us kernel). So the flush is sized per sample in run_once, and its buffer grows there
  // when needed, up to 1/16 of device memory and 2 GiB.
  st.flush_min = std::max<std::size_t>(2 * static_cast<std::size_t>(l2), 1 << 20);
  std::size_t total = 0;
  m_api.device_total_mem(&total, st.device);
  st.flush_limit = std::max(st.flush_min, std::min<std::size_t>(total / 16, std::size_t{2} << 30));
  st.flush_capacity = st.flush_bytes = st.flush_min;
  check(m_api.mem_alloc(&st.flush, st.flush_capacity), "cuMemAlloc(L2 flush buffer)");
  int memory_khz = 0, bus_bits = 0;
  m_api.device_get_attribute(&memory_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, st.device);
  m_api.device_get_attribute(&bus_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, st.device);
  st.write_bytes_per_s = 0.5 * 2.0 * memory_khz * 1e3 * bus_bits / 8.0;
}

void DeviceExecutor::release_context(bool reset) {
  if (!m_state) return;
  State& st = *m_state;
  for (auto p : st.device_ptrs)
    if (p) m_api.mem_free(p);
  if (st.flush) m_api.mem_free(st.flush);
  if (st.start) m_api.event_destroy(st.start);
  if (st.stop) m_api.event_destroy(st.stop);
  if (st.stream) m_api.stream_destroy(st.stream);
  if (st.ctx) m_api.primary_ctx_release(st.device);
  if (reset) m_api.primary_ctx_reset(st.device);
  m_state.reset();
}

namespace {
class ExecutorTimer final : public SampleTimer {
 public:
  ExecutorTimer(const driver::DriverApi& api, DeviceExecutor::State& st, std::function<void()> launch,
                const std::function<void()>& progress, bool flush)
      : m_api(api), m_st(st), m_launch(std::move(launch)), m_progress(progress), m_flush(flush) {}

  void prepare() override {
    if (!m_flush) return;
    // Asynchronous on the same stream, before the start event: never inside a sample.
    if (auto r = m_api.memset_d8_async(m_st.flush, static_cast<unsigned char>(++m_pass), m_st.flush_bytes, m_st.stream);
        r != driver::success)
      throw (driver::is_sticky(r) ? sticky_error(Status::runtime_failed, "L2 flush: " + driver::describe_result(m_api, r))
                                  : sample_error(Status::runtime_failed, "L2 flush: " + driver::describe_result(m_api, r)));
  }

  TimedSample run_once() override {
    if (m_st.cupti && !m_drained) {
      (void)m_st.cupti->take_ms();  // records of earlier runs
      m_drained = true;
    }
    const auto enqueue_start = std::chrono::steady_clock::now();
    m_api.event_record(m_st.start, m_st.stream);
    m_launch();
    m_api.event_record(m_st.stop, m_st.stream);
    const double enqueue_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - enqueue_start).count();
    if (m_flush && enqueue_s > m_st.enqueue_s_max) {
      // The next flush outlasts twice the slowest enqueue seen (warm-up runs set it).
      m_st.enqueue_s_max = enqueue_s;
      const auto wanted = std::clamp(static_cast<std::size_t>(2 * enqueue_s * m_st.write_bytes_per_s),
                                     m_st.flush_min, m_st.flush_limit);
      if (wanted > m_st.flush_capacity) grow_flush(std::min(m_st.flush_limit, wanted + wanted / 2));
      m_st.flush_bytes = std::min(wanted, m_st.flush_capacity);
    }
    if (auto r = m_api.event_synchronize(m_st.stop); r != driver::success) {
      const std::string msg = "kernel failed: " + driver::describe_result(m_api, r);
      if (driver::is_sticky(r)) throw sticky_error(Status::runtime_failed, msg);
      throw sample_error(Status::runtime_failed, msg);
    }
    if (m_progress) m_progress();
    TimedSample s;
    float ms = 0;
    if (m_api.event_elapsed_time(&ms, m_st.start, m_st.stop) == driver::success) s.event_ms = ms;
    if (m_st.cupti) {
      const auto d = m_st.cupti->take_ms();
      if (!d.empty()) s.cupti_ms = d.back();
    }
    s.kernel_ms = s.cupti_ms > 0 ? s.cupti_ms : std::max(s.event_ms, 0.0);
    return s;
  }

 private:
  // Between samples, after this one's kernel finished. A failed allocation keeps the old size.
  void grow_flush(std::size_t bytes) {
    if (m_api.ctx_synchronize() != driver::success) return;  // the error surfaces in the next sample
    driver::DevicePtr bigger = 0;
    if (m_api.mem_alloc(&bigger, bytes) != driver::success) return;
    m_api.mem_free(m_st.flush);
    m_st.flush = bigger;
    m_st.flush_capacity = bytes;
  }

  const driver::DriverApi& m_api;
  DeviceExecutor::State& m_st;
  std::function<void()> m_launch;
  const std::function<void()>& m_progress;
  bool m_flush;
  bool m_drained = false;
  unsigned m_pass = 0;
};
}  // namespace

namespace {

// A driver call that failed: the candidate's fault (`otherwise`), or, for an error that leaves
// the context unusable, a sticky one (the executor rebuilds the context).
[[noreturn]] void fail(const driver::DriverApi& api, driver::Result r, Status otherwise, const std::string& what) {
  const std::string msg = fmt::format("{}: {}", what, driver::describe_result(api, r));
  if (driver::is_sticky(r)) throw sticky_error(Status::runtime_failed, msg);
  throw sample_error(otherwise, msg);
}

// Argument buffers: generated once per argument set (host data from the job's seed), allocated on
// the device; kept for the jobs of the same set that follow.
void prepare_arguments(const driver::DriverApi& api, DeviceExecutor::State& st, const Job& job) {
  if (st.set == job.argument_set) return;
  for (auto p : st.device_ptrs)
    if (p) api.mem_free(p);
  st.device_ptrs.clear();
  st.host.clear();
  st.set.clear();
  st.host = make_host_arguments(spec_from(job), Config{}, {}, job.seed);
  for (const auto& a : st.host) {
    driver::DevicePtr p = 0;
    if (!a.scalar && !a.constant)
      if (auto r = api.mem_alloc(&p, a.data.size()); r != driver::success)
        fail(api, r, Status::launch_failed, fmt::format("cuMemAlloc({} bytes for {})", a.data.size(), a.name));
    st.device_ptrs.push_back(p);
  }
  st.set = job.argument_set;
}

// One job's kernel on a ready context: the function of its loaded module, its launch parameters,
// and the runs that upload the arguments, launch, and read the outputs back. The module is the
// caller's, so that it outlives this on a sticky error (it dies with the context then).
class KernelRun {
 public:
  KernelRun(const driver::DriverApi& api, DeviceExecutor::State& st, const Job& job, driver::Module& module,
            const std::function<void()>& progress)
      : m_api(api), m_st(st), m_geometry(job.geometry), m_module(module), m_progress(progress) {
    load(job);
  }

  // The launch parameters: scalars by value, buffers by device pointer (__constant__ ones are
  // symbols of the module, not parameters). After prepare_arguments.
  void bind_arguments() {
    m_params.clear();
    for (std::size_t i = 0; i < m_st.host.size(); ++i) {
      auto& a = m_st.host[i];
      if (a.constant) continue;
      m_params.push_back(a.scalar ? static_cast<void*>(a.data.data()) : static_cast<void*>(&m_st.device_ptrs[i]));
    }
  }

  // Every input to the device, __constant__ ones into their symbols.
  void upload() {
    for (std::size_t i = 0; i < m_st.host.size(); ++i) {
      const auto& a = m_st.host[i];
      if (a.scalar) continue;
      driver::DevicePtr dst = m_st.device_ptrs[i];
      std::size_t bytes = a.data.size();
      if (a.constant) {
        std::size_t symbol_bytes = 0;
        if (auto r = m_api.module_get_global(&dst, &symbol_bytes, m_module, a.name.c_str()); r != driver::success)
          fail(m_api, r, Status::launch_failed, fmt::format("__constant__ argument \"{}\" not found", a.name));
        bytes = std::min(bytes, symbol_bytes);
      }
      if (auto r = m_api.memcpy_htod(dst, a.data.data(), bytes); r != driver::success)
        fail(m_api, r, Status::runtime_failed, fmt::format("upload of {}", a.name));
    }
    // cuMemcpyHtoD from pageable memory may return before its DMA lands, and our stream does
    // not wait for the legacy stream: without this, the kernel raced its own input upload (seen
    // on the H200 as correct kernels whose last elements read back as the initial zeros).
    if (auto r = m_api.ctx_synchronize(); r != driver::success)
      fail(m_api, r, Status::runtime_failed, "upload of the arguments");
  }

  void launch() {
    const auto& g = m_geometry;
    auto r = m_api.launch_kernel(m_function, static_cast<unsigned>(g.grid[0]), static_cast<unsigned>(g.grid[1]),
                                 static_cast<unsigned>(g.grid[2]), static_cast<unsigned>(g.block[0]),
                                 static_cast<unsigned>(g.block[1]), static_cast<unsigned>(g.block[2]),
                                 static_cast<unsigned>(g.shared_memory_bytes), m_st.stream, m_params.data(), nullptr);
    if (r != driver::success) fail(m_api, r, Status::launch_failed, "cuLaunchKernel with " + g.to_string());
  }

  // Upload, one launch, and every output read back (empty for the other arguments).
  std::vector<std::vector<std::byte>> checked_run() {
    upload();
    launch();
    if (auto r = m_api.stream_synchronize(m_st.stream); r != driver::success)
      fail(m_api, r, Status::runtime_failed, "kernel failed");
    if (m_progress) m_progress();
    std::vector<std::vector<std::byte>> outputs(m_st.host.size());
    for (std::size_t i = 0; i < m_st.host.size(); ++i) {
      const auto& a = m_st.host[i];
      if (!a.output || a.scalar || a.constant) continue;
      outputs[i].resize(a.data.size());
      if (auto r = m_api.memcpy_dtoh(outputs[i].data(), m_st.device_ptrs[i], a.data.size()); r != driver::success)
        fail(m_api, r, Status::runtime_failed, "download of " + a.name);
    }
    return outputs;
  }

 private:
  // The module (driver JIT/link of the image), its function, and the geometry the driver can take.
  void load(const Job& job) {
    if (auto r = m_api.module_load_data(&m_module, job.image.data()); r != driver::success)
      fail(m_api, r, r == driver::error_out_of_memory ? Status::launch_failed : Status::compile_failed,
           "cuModuleLoadData (driver JIT/link of the compiled image)");
    if (auto r = m_api.module_get_function(&m_function, m_module, job.lowered_name.c_str()); r != driver::success)
      fail(m_api, r, Status::compile_failed, fmt::format("cuModuleGetFunction(\"{}\")", job.lowered_name));
    const auto& g = m_geometry;
    for (int d = 0; d < 3; ++d)
      if (g.grid[d] > std::numeric_limits<std::uint32_t>::max() || g.block[d] > std::numeric_limits<std::uint32_t>::max())
        throw sample_error(Status::launch_failed, "launch geometry too large: " + g.to_string());
    if (g.shared_memory_bytes > 48 * 1024)
      if (auto r = m_api.func_set_attribute(m_function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(g.shared_memory_bytes));
          r != driver::success)
        fail(m_api, r, Status::launch_failed, fmt::format("{} bytes of dynamic shared memory", g.shared_memory_bytes));
  }

  const driver::DriverApi& m_api;
  DeviceExecutor::State& m_st;
  const LaunchGeometry& m_geometry;
  driver::Module& m_module;
  const std::function<void()>& m_progress;
  driver::Function m_function = nullptr;
  std::vector<void*> m_params;
};

}  // namespace

namespace {

// The reference configuration's outputs (and its inputs), kept to verify the others against.
std::vector<HostArgument> reference_outputs(KernelRun& kernel, const DeviceExecutor::State& st) {
  auto outputs = kernel.checked_run();
  std::vector<HostArgument> reference;
  for (std::size_t i = 0; i < st.host.size(); ++i) {
    HostArgument a = st.host[i];
    a.data = std::move(outputs[i]);
    reference.push_back(std::move(a));
  }
  return reference;
}

// One checked run compared with the reference's outputs: throws sample_error (invalid) naming
// the first output that differs; returns the line for the measurement's log.
std::string verify_outputs(KernelRun& kernel, const DeviceExecutor::State& st,
                           const std::vector<HostArgument>* reference, const Job& job) {
  auto outputs = kernel.checked_run();
  if (!reference) return "output not verified: no reference outputs for this argument set\n";
  for (std::size_t i = 0; i < st.host.size(); ++i) {
    if (!st.host[i].output || st.host[i].scalar || st.host[i].constant) continue;
    const auto v = verify_output((*reference)[i], outputs[i], job.atol, job.rtol);
    if (!v.ok) throw sample_error(Status::invalid, "output differs from the reference configuration: " + v.message);
  }
  return "output verified against the reference configuration\n";
}

// Warm-up, then samples until the job's stopping criterion says stop (the measurement loop).
void time_kernel(const driver::DriverApi& api, DeviceExecutor::State& st, KernelRun& kernel, const Job& job,
                 const std::function<void()>& progress, Measurement& m) {
  kernel.upload();
  ExecutorTimer timer(api, st, [&kernel] { kernel.launch(); }, progress, job.flush_l2);
  SteadyClock clock;
  const auto criterion = make_stopping_criterion(job.criterion, job.criterion_params);
  LoopOptions options;
  options.warmup = static_cast<int>(job.warmup);
  run_measurement_loop(timer, *criterion, clock, options, m);
  if (!st.cupti) m.log += "timing: CUDA events only (" + st.cupti_why + ")\n";
}

}  // namespace

Measurement DeviceExecutor::run(const Job& job) {
  m_context_rebuilt = false;
  Measurement m;
  m.status = Status::ok;
  driver::Module module = nullptr;
  try {
    ensure_context();
    State& st = *m_state;
    m_api.ctx_set_current(st.ctx);
    KernelRun kernel(m_api, st, job, module, m_progress);
    prepare_arguments(m_api, st, job);
    // The parent's timeout is meant for kernels: a fresh worker's context, module load and
    // argument generation (slow under sanitizers on a loaded machine) start the clock afresh.
    if (m_progress) m_progress();
    kernel.bind_arguments();
    if (job.kind == Job::Kind::reference) {
      m_references[job.argument_set] = reference_outputs(kernel, st);
      m.log = "reference outputs recorded";
    } else {
      if (job.verify) {
        const auto ref = m_references.find(job.argument_set);
        m.log += verify_outputs(kernel, st, ref == m_references.end() ? nullptr : &ref->second, job);
      }
      time_kernel(m_api, st, kernel, job, m_progress, m);
    }
  } catch (const sticky_error& e) {
    m.status = Status::runtime_failed;
    m.samples_ms.clear();
    m.log += std::string(e.what()) + "\ncontext rebuilt after a sticky error\n";
    module = nullptr;  // dies with the context
    release_context(true);
    m_context_rebuilt = true;
  } catch (const sample_error& e) {
    m.status = e.get_status();
    m.samples_ms.clear();
    m.log += std::string(e.what()) + "\n";
  } catch (const std::exception& e) {
    m.status = Status::runtime_failed;
    m.samples_ms.clear();
    m.log += std::string(e.what()) + "\n";
  }
  if (module) m_api.module_unload(module);
  if (m.status != Status::ok) {
    m.median_ms = m.ci_low_ms = m.ci_high_ms = 0;
    m.reason = std::string(to_string(m.status));
  }
  return m;
}

}  // namespace gpuforecast::detail
