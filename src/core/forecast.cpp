#include "gpuforecast/core/forecast.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

int speedup_bin(double t_ref_ms, double t_candidate_ms) {
  if (!(t_ref_ms > 0) || !(t_candidate_ms > 0) || !std::isfinite(t_ref_ms) || !std::isfinite(t_candidate_ms))
    throw invalid_argument_error(fmt::format(
        "speedup_bin needs positive finite times, got reference {} ms and candidate {} ms", t_ref_ms, t_candidate_ms));
  const double b = std::floor(2.0 * std::log2(t_ref_ms / t_candidate_ms)) + 4.0;
  return static_cast<int>(std::clamp(b, 1.0, static_cast<double>(speedup_bin_count)));
}

}  // namespace gpuforecast
