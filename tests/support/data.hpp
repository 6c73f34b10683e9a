#pragma once
// Where the shared datasets are. Tests never skip when the data are missing: CI always has
// them, so a missing folder is a failure that says where we looked.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace gpuforecast::test {

inline std::filesystem::path data_dir() {
  const char* env = std::getenv("GPUFORECAST_DATA");
  std::filesystem::path dir = env && *env ? env : GPUFORECAST_DEFAULT_DATA;
  INFO("shared datasets expected at " << dir.string() << " (set GPUFORECAST_DATA)");
  REQUIRE(std::filesystem::is_directory(dir / "benchmark_hub"));
  return dir;
}

// e.g. cache_file("convolution_milo", "A100") -> .../cachefiles/convolution_milo/A100.json.gz
inline std::filesystem::path cache_file(const std::string& kernel, const std::string& device) {
  auto p = data_dir() / "benchmark_hub" / "cachefiles" / kernel / (device + ".json.gz");
  INFO("dataset file " << p.string());
  REQUIRE(std::filesystem::exists(p));
  return p;
}

inline std::filesystem::path t1_file(const std::string& kernel) {
  auto p = data_dir() / "benchmark_hub" / "kernels" / (kernel + ".json");
  INFO("T1 file " << p.string());
  REQUIRE(std::filesystem::exists(p));
  return p;
}

inline std::filesystem::path source_dir() { return GPUFORECAST_SOURCE_DIR; }

}  // namespace gpuforecast::test
