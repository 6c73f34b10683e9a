// How long reading the shared measurement files takes: every file under
// benchmark_hub/cachefiles one by one (inflate + parse + Observations), then all of them at once
// through Dataset::load (parallel over files). Build with -DCMAKE_BUILD_TYPE=Release to measure.
// Target: all 18 files in a few seconds; readers sit on the path of every test and program.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/data/community_formats.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("GPUFORECAST_DATA"); env && *env) return env;
  return std::filesystem::path(GPUFORECAST_SOURCE_DIR) / ".." / "shared" / "datasets";
}

}  // namespace

int main() {
  const auto root = data_dir() / "benchmark_hub" / "cachefiles";
  std::vector<std::string> paths;
  for (const auto& k : std::filesystem::directory_iterator(root))
    for (const auto& f : std::filesystem::directory_iterator(k.path()))
      if (f.path().string().ends_with(".json.gz")) paths.push_back(f.path().string());
  std::sort(paths.begin(), paths.end());
  if (paths.empty()) {
    fmt::print(stderr, "no files under {} (set GPUFORECAST_DATA)\n", root.string());
    return 1;
  }
  // Wall and CPU time: on a shared machine the wall clock says more about the neighbours.
  fmt::print("{:<40} {:>9} {:>8} {:>8} {:>12}\n", "file", "entries", "wall s", "cpu s", "MB/s (cpu)");
  double sum = 0, sum_cpu = 0;
  for (const auto& p : paths) {
    const auto t0 = Clock::now();
    const std::clock_t c0 = std::clock();
    const auto s = gpuforecast::load_space(p);
    const double dt = seconds_since(t0);
    const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    sum += dt;
    sum_cpu += cpu;
    const auto rel = std::filesystem::relative(p, root).string();
    // Uncompressed size is what the parser walks; gzip keeps it in the trailer.
    std::FILE* f = std::fopen(p.c_str(), "rb");
    unsigned char t[4] = {0, 0, 0, 0};
    if (f) {
      std::fseek(f, -4, SEEK_END);
      if (std::fread(t, 1, 4, f) != 4) t[0] = t[1] = t[2] = t[3] = 0;
      std::fclose(f);
    }
    const double mb = (t[0] | (t[1] << 8) | (t[2] << 16) | (static_cast<unsigned>(t[3]) << 24)) / 1e6;
    fmt::print("{:<40} {:>9} {:>8.3f} {:>8.3f} {:>12.0f}\n", rel, s.observations.size(), dt, cpu,
               cpu > 0 ? mb / cpu : 0.0);
  }
  fmt::print("{:<40} {:>9} {:>8.3f} {:>8.3f}\n", "sum, one by one", "", sum, sum_cpu);
  const auto t0 = Clock::now();
  const std::clock_t c0 = std::clock();
  const auto d = gpuforecast::Dataset::load(paths);
  fmt::print("{:<40} {:>9} {:>8.3f} {:>8.3f}\n", "Dataset::load, all files (threads)", d.size(), seconds_since(t0),
             static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
  return 0;
}
