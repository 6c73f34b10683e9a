// How long reading the shared measurement files takes: every file under
// benchmark_hub/cachefiles one by one (inflate + parse + Observations), then all of them at once
// through Dataset::load (parallel over files). Build with -DCMAKE_BUILD_TYPE=Release to measure.
// Target: all 18 files in a few seconds; readers sit on the path of every test and program.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/data/t4.hpp"

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
  fmt::print("{:<40} {:>9} {:>12} {:>10}\n", "file", "entries", "load_space s", "MB/s json");
  double sum = 0;
  for (const auto& p : paths) {
    const auto t0 = Clock::now();
    const auto s = gpuforecast::load_space(p);
    const double dt = seconds_since(t0);
    sum += dt;
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
    fmt::print("{:<40} {:>9} {:>12.3f} {:>10.0f}\n", rel, s.observations.size(), dt, mb / dt);
  }
  fmt::print("{:<40} {:>9} {:>12.3f}\n", "sum, one by one", "", sum);
  const auto t0 = Clock::now();
  const auto d = gpuforecast::Dataset::load(paths);
  fmt::print("{:<40} {:>9} {:>12.3f}\n", "Dataset::load, all files", d.size(), seconds_since(t0));
  return 0;
}
