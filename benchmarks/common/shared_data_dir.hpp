#pragma once
// Where a benchmark reads the shared datasets by default: $GPUFORECAST_DATA, else
// ../shared/datasets beside the source tree (as the tests look for them).
#include <cstdlib>
#include <filesystem>

namespace gpuforecast::bench {

inline std::filesystem::path shared_data_dir() {
  const char* env = std::getenv("GPUFORECAST_DATA");
  return env && *env ? std::filesystem::path(env)
                     : std::filesystem::path(GPUFORECAST_SOURCE_DIR) / ".." / "shared" / "datasets";
}

}  // namespace gpuforecast::bench
