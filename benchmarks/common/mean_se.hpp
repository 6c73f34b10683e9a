#pragma once
// The mean of repeated measurements (seeds, splits) and its standard error: what every table of
// the benchmarks quotes beside a number.
#include <cmath>
#include <cstddef>
#include <vector>

namespace gpuforecast::bench {

struct MeanSe {
  double mean = 0, se = 0;  // se 0 with fewer than two values
  std::size_t n = 0;
};

inline MeanSe mean_se(const std::vector<double>& x) {
  MeanSe m;
  m.n = x.size();
  if (x.empty()) return m;
  for (double v : x) m.mean += v;
  m.mean /= static_cast<double>(x.size());
  if (x.size() < 2) return m;
  double ss = 0;
  for (double v : x) ss += (v - m.mean) * (v - m.mean);
  m.se = std::sqrt(ss / static_cast<double>(x.size() - 1) / static_cast<double>(x.size()));
  return m;
}

}  // namespace gpuforecast::bench
