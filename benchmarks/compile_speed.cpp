// Compile speed of the in-process NVRTC path against `nvcc -cubin` (what Kernel Tuner's
// default path costs), on the example kernels (examples/kernels/*.json), on this machine.
//   compile_speed [configs_per_kernel=6] [nvcc_configs_per_kernel=2] [arch=sm_90]
// Prints per-kernel median latency (serial, fresh cache), nvcc median and the ratio; compiles/s
// serially and with the compile pool; compile-cache hit latency (memory and disk).
// Targets (issue 3): median <= 100 ms per configuration, >= 5x faster than nvcc, hit <= 1 ms.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifdef GPUFORECAST_HAVE_CUDA_RUNTIME
#include "common/parse_number.hpp"
#include "gpuforecast/data/t1.hpp"
#include "runtime/compile_pool.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "gpuforecast/space/enumerate.hpp"

namespace {
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
// CPU time of this thread, and of finished child processes: on a shared machine wall time
// mostly measures the neighbours, CPU time measures the work.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
double children_cpu_ms() {
  rusage r{};
  getrusage(RUSAGE_CHILDREN, &r);
  return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
}
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
std::string find_nvcc() {
  if (const char* env = std::getenv("NVCC"); env && *env) return env;
  for (const char* p : {"/usr/local/cuda/bin/nvcc"})
    if (std::filesystem::exists(p)) return p;
  return std::system("command -v nvcc >/dev/null 2>&1") == 0 ? "nvcc" : "";
}
}  // namespace
#endif  // GPUFORECAST_HAVE_CUDA_RUNTIME: the helpers serve only the measurement

int main(int argc, char** argv) try {
#ifndef GPUFORECAST_HAVE_CUDA_RUNTIME
  (void)argc, (void)argv;
  fmt::print("compile_speed: built without the CUDA runtime; nothing to measure\n");
  return 0;
#else
  using namespace gpuforecast;
  const std::size_t per_kernel = argc > 1 ? detail::parse_number<std::size_t>("configurations per kernel (argument 1)", argv[1]) : 6;
  const std::size_t nvcc_per_kernel = argc > 2 ? detail::parse_number<std::size_t>("nvcc configurations per kernel (argument 2)", argv[2]) : 2;
  const std::string arch = argc > 3 ? argv[3] : "sm_90";
  const std::filesystem::path dir = std::filesystem::path(GPUFORECAST_SOURCE_DIR) / "examples" / "kernels";
  const std::string nvcc = find_nvcc();
  const auto tmp = std::filesystem::temp_directory_path() / fmt::format("gpuforecast_compile_speed_{}", ::getpid());
  std::filesystem::create_directories(tmp);

  struct Work {
    std::string name;
    std::shared_ptr<const KernelSpec> spec;
    std::vector<Config> configs;
  };
  std::vector<Work> work;
  for (const char* name : {"sgemm", "conv2d", "reduction", "transpose", "softmax"}) {
    const T1File t1 = read_t1((dir / (std::string(name) + ".json")).string());
    work.push_back({name, std::make_shared<const KernelSpec>(t1.kernel), sample_valid(t1.space, per_kernel, 7)});
  }

  // Latencies scale with how busy the machine is: say how busy it was.
  std::string load = "unknown";
  if (std::ifstream in("/proc/loadavg"); in) std::getline(in, load);
  fmt::print("compile_speed: {} configs per kernel for {}, {} hardware threads, NVRTC {}, load average {}\n\n",
             per_kernel, arch, std::thread::hardware_concurrency(), NvrtcCompiler::nvrtc_version(), load);
  fmt::print("| kernel | NVRTC median ms | NVRTC max ms | nvcc -cubin median ms | nvcc / NVRTC | NVRTC CPU ms | nvcc CPU ms | CPU ratio |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  std::vector<double> all_nvrtc, all_nvcc_ratio, all_nvrtc_cpu, all_cpu_ratio;
  double serial_total_ms = 0;
  std::size_t serial_count = 0;
  for (const auto& w : work) {
    NvrtcCompiler fresh;  // empty cache: every compile reaches NVRTC
    std::vector<double> lat, cpu;
    for (const auto& c : w.configs) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = thread_cpu_ms();
      const auto k = fresh.compile(*w.spec, c, arch);
      lat.push_back(ms_since(t0));
      cpu.push_back(thread_cpu_ms() - c0);
      if (!k->ok) fmt::print(stderr, "{} [{}] failed:\n{}\n", w.name, c.to_string(), k->log);
    }
    for (double l : lat) serial_total_ms += l;
    serial_count += lat.size();
    all_nvrtc.insert(all_nvrtc.end(), lat.begin(), lat.end());
    all_nvrtc_cpu.insert(all_nvrtc_cpu.end(), cpu.begin(), cpu.end());
    std::vector<double> nvcc_lat, nvcc_cpu;
    if (!nvcc.empty()) {
      const auto src = tmp / w.spec->kernel_file;
      std::ofstream(src) << w.spec->source;
      for (std::size_t i = 0; i < std::min(nvcc_per_kernel, w.configs.size()); ++i) {
        std::string cmd = fmt::format("{} -cubin -arch={} -Dkernel_tuner=1", nvcc, arch);
        for (const auto& o : w.spec->compiler_options) cmd += " " + o;
        for (std::size_t p = 0; p < w.configs[i].size(); ++p)
          cmd += fmt::format(" -D{}={}", w.configs[i].names()[p], w.configs[i][p].to_string());
        cmd += fmt::format(" -o {} {} >/dev/null 2>&1", (tmp / "out.cubin").string(), src.string());
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = children_cpu_ms();
        const int rc = std::system(cmd.c_str());
        const double ms = ms_since(t0);
        if (rc != 0) {
          fmt::print(stderr, "nvcc failed: {}\n", cmd);
        } else {
          nvcc_lat.push_back(ms);
          nvcc_cpu.push_back(children_cpu_ms() - c0);
        }
      }
    }
    const double med = median(lat), nv = median(nvcc_lat), mc = median(cpu), nc = median(nvcc_cpu);
    if (nv > 0) all_nvcc_ratio.push_back(nv / med);
    if (nc > 0) all_cpu_ratio.push_back(nc / mc);
    fmt::print("| {} | {:.1f} | {:.1f} | {} | {} | {:.1f} | {} | {} |\n", w.name, med,
               *std::max_element(lat.begin(), lat.end()), nv > 0 ? fmt::format("{:.0f}", nv) : "n/a",
               nv > 0 ? fmt::format("{:.1f}x", nv / med) : "n/a", mc, nc > 0 ? fmt::format("{:.0f}", nc) : "n/a",
               nc > 0 ? fmt::format("{:.1f}x", nc / mc) : "n/a");
  }

  // Throughput: the same configurations again, fresh caches, serially vs through the pool.
  NvrtcCompiler pooled;
  std::size_t pool_count = 0;
  const auto t0 = std::chrono::steady_clock::now();
  {
    CompilePool pool(pooled);
    std::vector<std::shared_future<std::shared_ptr<const CompiledKernel>>> futures;
    for (const auto& w : work)
      for (const auto& c : w.configs) futures.push_back(pool.submit(w.spec, c, arch));
    for (auto& f : futures) (void)f.get();
    pool_count = futures.size();
  }
  const double pool_ms = ms_since(t0);

  // Cache hits: memory (same compiler) and disk (a new compiler over the same directory).
  std::vector<double> hit_mem, hit_disk;
  CompilerOptions disk_options;
  disk_options.cache_directory = (tmp / "cache").string();
  {
    NvrtcCompiler writer(disk_options);
    for (const auto& w : work) (void)writer.compile(*w.spec, w.configs.front(), arch);
    for (int rep = 0; rep < 20; ++rep)
      for (const auto& w : work) {
        const auto h0 = std::chrono::steady_clock::now();
        (void)writer.compile(*w.spec, w.configs.front(), arch);
        hit_mem.push_back(ms_since(h0));
      }
  }
  {
    NvrtcCompiler reader(disk_options);
    for (const auto& w : work) {
      const auto h0 = std::chrono::steady_clock::now();
      (void)reader.compile(*w.spec, w.configs.front(), arch);
      hit_disk.push_back(ms_since(h0));
    }
    if (reader.nvrtc_invocations() != 0) fmt::print(stderr, "disk cache missed\n");
  }

  const double nvrtc_median = median(all_nvrtc);
  const double serial_rate = 1000.0 * static_cast<double>(serial_count) / serial_total_ms;
  const double pool_rate = 1000.0 * static_cast<double>(pool_count) / pool_ms;
  fmt::print("\n| measure | value | target |\n|---|---:|---|\n");
  fmt::print("| NVRTC median latency, all kernels | {:.1f} ms | <= 100 ms {} |\n", nvrtc_median,
             nvrtc_median <= 100 ? "(met)" : "(missed)");
  if (!all_nvcc_ratio.empty()) {
    const double r = median(all_nvcc_ratio);
    fmt::print("| nvcc -cubin / NVRTC, median over kernels | {:.1f}x | >= 5x {} |\n", r, r >= 5 ? "(met)" : "(missed)");
  } else {
    fmt::print("| nvcc -cubin / NVRTC | n/a (nvcc not found) | >= 5x |\n");
  }
  fmt::print("| NVRTC median CPU time, all kernels | {:.1f} ms | (load-independent view of the above) |\n",
             median(all_nvrtc_cpu));
  if (!all_cpu_ratio.empty())
    fmt::print("| nvcc -cubin / NVRTC CPU time, median over kernels | {:.1f}x | |\n", median(all_cpu_ratio));
  fmt::print("| compiles/s serial | {:.1f} | |\n", serial_rate);
  fmt::print("| compiles/s with the pool ({} threads) | {:.1f} ({:.2f}x serial) | |\n",
             std::thread::hardware_concurrency(), pool_rate, pool_rate / serial_rate);
  const double hit = median(hit_mem);
  fmt::print("| cache hit, memory, median | {:.4f} ms | <= 1 ms {} |\n", hit, hit <= 1 ? "(met)" : "(missed)");
  fmt::print("| cache hit, disk, median | {:.3f} ms | |\n", median(hit_disk));
  std::filesystem::remove_all(tmp);
  return 0;
#endif
} catch (const std::exception& e) {
  fmt::print(stderr, "compile_speed: error: {}\n", e.what());
  return 1;
}
