#pragma once
// What a surrogate says about one candidate.
#include <array>
#include <optional>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

inline constexpr int speedup_bin_count = 8;

// The GPU Forecasters half-octave bin of a candidate against a reference, 1..8:
// clamp(floor(2*log2(t_ref/t_cand)) + 4, 1, 8). Bin 4 holds speedups in [1, sqrt 2).
[[nodiscard]] int speedup_bin(double t_ref_ms, double t_candidate_ms);

struct Forecast {
  double median_ms = 0;  // point forecast of the runtime
  double lower_ms = 0;   // 5% quantile
  double upper_ms = 0;   // 95% quantile
  double p_fail = 0;     // probability that the candidate fails (compile/launch/runtime)
  double spread = 0;     // model's own uncertainty, in log-runtime units (e.g. ensemble std)
  // Against a reference candidate, when one was given: P(bin = 1..8), index 0 is bin 1.
  std::optional<std::array<double, speedup_bin_count>> bin_probabilities;
};

}  // namespace gpuforecast
