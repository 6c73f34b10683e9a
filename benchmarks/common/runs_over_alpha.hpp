#pragma once
// How many of `runs` independent runs may see their realised risk exceed alpha before a rule that
// holds with probability 1 - delta is in doubt: delta * runs, plus two binomial standard
// deviations of slack.
#include <cmath>
#include <cstddef>

namespace gpuforecast::bench {

inline std::size_t allowed_violations(std::size_t runs, double delta) {
  const double n = static_cast<double>(runs);
  return static_cast<std::size_t>(std::floor(delta * n + 2 * std::sqrt(n * delta * (1 - delta))));
}

}  // namespace gpuforecast::bench
