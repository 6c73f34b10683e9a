#pragma once
// "a,b,,c" -> {"a", "b", "c"}: comma-separated option values of the CLI and the benchmarks.
// Commas inside parentheses do not split: "xgboost,ensemble(xgboost=0.7,knn=0.3)" is two items.
#include <string>
#include <vector>

namespace gpuforecast::detail {

inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size()) {
      if (s[i] == '(') ++depth;
      else if (s[i] == ')' && depth > 0) --depth;
      if (s[i] != ',' || depth > 0) continue;
    }
    if (i > start) out.push_back(s.substr(start, i - start));
    start = i + 1;
  }
  return out;
}

}  // namespace gpuforecast::detail
