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
#include "gpuforecast/data/community_formats.hpp"
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

using namespace gpuforecast;

struct Work {
  std::string name;
  std::shared_ptr<const KernelSpec> spec;
  std::vector<Config> configs;
};

// The example kernels, each with `per_kernel` valid configurations (seeded).
std::vector<Work> example_kernels(const std::filesystem::path& dir, std::size_t per_kernel) {
  std::vector<Work> work;
  for (const char* name : {"sgemm", "conv2d", "reduction", "transpose", "softmax"}) {
    const T1File t1 = read_t1((dir / (std::string(name) + ".json")).string());
    work.push_back({name, std::make_shared<const KernelSpec>(t1.kernel), sample_valid(t1.space, per_kernel, 7)});
  }
  return work;
}

// Wall and CPU milliseconds of each compile.
struct Latencies {
  std::vector<double> wall_ms, cpu_ms;
};

// Every configuration through a fresh NVRTC compiler (empty cache: each compile reaches NVRTC).
Latencies nvrtc_latencies(const Work& w, const std::string& arch) {
  NvrtcCompiler fresh;
  Latencies l;
  for (const auto& c : w.configs) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_ms();
    const auto k = fresh.compile(*w.spec, c, arch);
    l.wall_ms.push_back(ms_since(t0));
    l.cpu_ms.push_back(thread_cpu_ms() - c0);
    if (!k->ok) fmt::print(stderr, "{} [{}] failed:\n{}\n", w.name, c.to_string(), k->log);
  }
  return l;
}

// The first `count` configurations through `nvcc -cubin`, as Kernel Tuner's default path compiles.
Latencies nvcc_latencies(const Work& w, const std::string& nvcc, const std::string& arch,
                         const std::filesystem::path& tmp, std::size_t count) {
  Latencies l;
  const auto src = tmp / w.spec->kernel_file;
  std::ofstream(src) << w.spec->source;
  for (std::size_t i = 0; i < std::min(count, w.configs.size()); ++i) {
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
      l.wall_ms.push_back(ms);
      l.cpu_ms.push_back(children_cpu_ms() - c0);
    }
  }
  return l;
}

// Compiles per second of every configuration through the compile pool, fresh cache.
double pool_rate(const std::vector<Work>& work, const std::string& arch) {
  NvrtcCompiler pooled;
  std::size_t count = 0;
  const auto t0 = std::chrono::steady_clock::now();
  {
    CompilePool pool(pooled);
    std::vector<std::shared_future<std::shared_ptr<const CompiledKernel>>> futures;
    for (const auto& w : work)
      for (const auto& c : w.configs) futures.push_back(pool.submit(w.spec, c, arch));
    for (auto& f : futures) (void)f.get();
    count = futures.size();
  }
  return 1000.0 * static_cast<double>(count) / ms_since(t0);
}

// Cache hit latencies: memory (the compiler that wrote them) and disk (a new compiler over the
// same directory).
struct CacheHits {
  std::vector<double> memory_ms, disk_ms;
};

CacheHits cache_hits(const std::vector<Work>& work, const std::string& arch, const std::filesystem::path& dir) {
  CacheHits hits;
  CompilerOptions disk_options;
  disk_options.cache_directory = dir.string();
  {
    NvrtcCompiler writer(disk_options);
    for (const auto& w : work) (void)writer.compile(*w.spec, w.configs.front(), arch);
    for (int rep = 0; rep < 20; ++rep)
      for (const auto& w : work) {
        const auto h0 = std::chrono::steady_clock::now();
        (void)writer.compile(*w.spec, w.configs.front(), arch);
        hits.memory_ms.push_back(ms_since(h0));
      }
  }
  NvrtcCompiler reader(disk_options);
  for (const auto& w : work) {
    const auto h0 = std::chrono::steady_clock::now();
    (void)reader.compile(*w.spec, w.configs.front(), arch);
    hits.disk_ms.push_back(ms_since(h0));
  }
  if (reader.nvrtc_invocations() != 0) fmt::print(stderr, "disk cache missed\n");
  return hits;
}

// The whole run's medians against the targets of issue 3.
struct Summary {
  std::vector<double> nvrtc_ms, nvcc_ratio, nvrtc_cpu_ms, cpu_ratio;
  double serial_rate = 0, pool_rate = 0;
  CacheHits hits;
};

void print_summary(const Summary& s) {
  const double nvrtc_median = median(s.nvrtc_ms);
  fmt::print("\n| measure | value | target |\n|---|---:|---|\n");
  fmt::print("| NVRTC median latency, all kernels | {:.1f} ms | <= 100 ms {} |\n", nvrtc_median,
             nvrtc_median <= 100 ? "(met)" : "(missed)");
  if (!s.nvcc_ratio.empty()) {
    const double r = median(s.nvcc_ratio);
    fmt::print("| nvcc -cubin / NVRTC, median over kernels | {:.1f}x | >= 5x {} |\n", r, r >= 5 ? "(met)" : "(missed)");
  } else {
    fmt::print("| nvcc -cubin / NVRTC | n/a (nvcc not found) | >= 5x |\n");
  }
  fmt::print("| NVRTC median CPU time, all kernels | {:.1f} ms | (load-independent view of the above) |\n",
             median(s.nvrtc_cpu_ms));
  if (!s.cpu_ratio.empty())
    fmt::print("| nvcc -cubin / NVRTC CPU time, median over kernels | {:.1f}x | |\n", median(s.cpu_ratio));
  fmt::print("| compiles/s serial | {:.1f} | |\n", s.serial_rate);
  fmt::print("| compiles/s with the pool ({} threads) | {:.1f} ({:.2f}x serial) | |\n",
             std::thread::hardware_concurrency(), s.pool_rate, s.pool_rate / s.serial_rate);
  const double hit = median(s.hits.memory_ms);
  fmt::print("| cache hit, memory, median | {:.4f} ms | <= 1 ms {} |\n", hit, hit <= 1 ? "(met)" : "(missed)");
  fmt::print("| cache hit, disk, median | {:.3f} ms | |\n", median(s.hits.disk_ms));
}
}  // namespace
#endif  // GPUFORECAST_HAVE_CUDA_RUNTIME: the helpers serve only the measurement

int main(int argc, char** argv) try {
#ifndef GPUFORECAST_HAVE_CUDA_RUNTIME
  (void)argc, (void)argv;
  fmt::print("compile_speed: built without the CUDA runtime; nothing to measure\n");
  return 0;
#else
  const std::size_t per_kernel = argc > 1 ? detail::parse_number<std::size_t>("configurations per kernel (argument 1)", argv[1]) : 6;
  const std::size_t nvcc_per_kernel = argc > 2 ? detail::parse_number<std::size_t>("nvcc configurations per kernel (argument 2)", argv[2]) : 2;
  const std::string arch = argc > 3 ? argv[3] : "sm_90";
  const std::string nvcc = find_nvcc();
  const auto tmp = std::filesystem::temp_directory_path() / fmt::format("gpuforecast_compile_speed_{}", ::getpid());
  std::filesystem::create_directories(tmp);
  const std::vector<Work> work =
      example_kernels(std::filesystem::path(GPUFORECAST_SOURCE_DIR) / "examples" / "kernels", per_kernel);

  // Latencies scale with how busy the machine is: say how busy it was.
  std::string load = "unknown";
  if (std::ifstream in("/proc/loadavg"); in) std::getline(in, load);
  fmt::print("compile_speed: {} configs per kernel for {}, {} hardware threads, NVRTC {}, load average {}\n\n",
             per_kernel, arch, std::thread::hardware_concurrency(), NvrtcCompiler::nvrtc_version(), load);
  fmt::print("| kernel | NVRTC median ms | NVRTC max ms | nvcc -cubin median ms | nvcc / NVRTC | NVRTC CPU ms | nvcc CPU ms | CPU ratio |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  Summary summary;
  double serial_total_ms = 0;
  for (const auto& w : work) {
    const Latencies nvrtc = nvrtc_latencies(w, arch);
    const Latencies nvcc_l = nvcc.empty() ? Latencies{} : nvcc_latencies(w, nvcc, arch, tmp, nvcc_per_kernel);
    for (double l : nvrtc.wall_ms) serial_total_ms += l;
    summary.nvrtc_ms.insert(summary.nvrtc_ms.end(), nvrtc.wall_ms.begin(), nvrtc.wall_ms.end());
    summary.nvrtc_cpu_ms.insert(summary.nvrtc_cpu_ms.end(), nvrtc.cpu_ms.begin(), nvrtc.cpu_ms.end());
    const double med = median(nvrtc.wall_ms), nv = median(nvcc_l.wall_ms), mc = median(nvrtc.cpu_ms),
                 nc = median(nvcc_l.cpu_ms);
    if (nv > 0) summary.nvcc_ratio.push_back(nv / med);
    if (nc > 0) summary.cpu_ratio.push_back(nc / mc);
    fmt::print("| {} | {:.1f} | {:.1f} | {} | {} | {:.1f} | {} | {} |\n", w.name, med,
               *std::max_element(nvrtc.wall_ms.begin(), nvrtc.wall_ms.end()), nv > 0 ? fmt::format("{:.0f}", nv) : "n/a",
               nv > 0 ? fmt::format("{:.1f}x", nv / med) : "n/a", mc, nc > 0 ? fmt::format("{:.0f}", nc) : "n/a",
               nc > 0 ? fmt::format("{:.1f}x", nc / mc) : "n/a");
  }
  summary.serial_rate = 1000.0 * static_cast<double>(summary.nvrtc_ms.size()) / serial_total_ms;
  // Throughput: the same configurations again, fresh caches, through the pool.
  summary.pool_rate = pool_rate(work, arch);
  summary.hits = cache_hits(work, arch, tmp / "cache");
  print_summary(summary);
  std::filesystem::remove_all(tmp);
  return 0;
#endif
} catch (const std::exception& e) {
  fmt::print(stderr, "compile_speed: error: {}\n", e.what());
  return 1;
}
