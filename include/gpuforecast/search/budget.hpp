#pragma once
// How much a search may spend: a number of measurements, simulated (or real) seconds, or both.
#include <cstddef>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct Budget {
  std::size_t max_measurements = 0;  // 0: no limit on the count
  double max_seconds = 0;            // 0: no limit on the cost; seconds as charged by the benchmarker

  [[nodiscard]] bool unlimited() const noexcept { return max_measurements == 0 && max_seconds <= 0; }
  // Spent `count` measurements costing `seconds`: is anything left?
  [[nodiscard]] bool exhausted(std::size_t count, double seconds) const noexcept {
    return (max_measurements > 0 && count >= max_measurements) || (max_seconds > 0 && seconds >= max_seconds);
  }
};

}  // namespace gpuforecast
