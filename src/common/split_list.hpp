#pragma once
// "a,b,,c" -> {"a", "b", "c"}: comma-separated option values of the CLI and the benchmarks.
#include <string>
#include <vector>

namespace gpuforecast::detail {

inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace gpuforecast::detail
