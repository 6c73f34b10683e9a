#pragma once
// The shared spaces a benchmark runs on: <data>/benchmark_hub/cachefiles/<kernel>/<device>.json.gz,
// in path order, the _T4 copies left out (they hold a device's measurements again, in the T4
// format), and the --kernels / --devices filters that pick among them.
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast::bench {

struct SharedSpaceFile {
  std::string kernel, device;
  std::filesystem::path path;
};

// Throws error naming the folder when there is none.
inline std::vector<SharedSpaceFile> shared_space_files(const std::filesystem::path& data) {
  const std::filesystem::path root = data / "benchmark_hub" / "cachefiles";
  if (!std::filesystem::is_directory(root))
    throw error(fmt::format("no shared spaces under {} (set GPUFORECAST_DATA)", root.string()));
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::recursive_directory_iterator(root))
    if (f.path().string().ends_with(".json.gz")) files.push_back(f.path());
  std::sort(files.begin(), files.end());
  std::vector<SharedSpaceFile> spaces;
  for (const auto& f : files) {
    std::string device = f.filename().string();
    device = device.substr(0, device.find(".json"));
    if (!device.ends_with("_T4")) spaces.push_back({f.parent_path().filename().string(), device, f});
  }
  return spaces;
}

// An empty filter wants every name.
inline bool wanted(const std::vector<std::string>& filter, const std::string& name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

}  // namespace gpuforecast::bench
