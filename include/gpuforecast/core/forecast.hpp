#pragma once
// What a surrogate says about one candidate (a Forecast), and what a selective predictor makes of
// it (a Decision): the forecast with a calibrated interval and the verdict, trust it or measure.
#include <array>
#include <optional>
#include <string>

#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

inline constexpr int speedup_bin_count = 8;

// The GPU Forecasters half-octave bin of a candidate against a reference, 1..8:
// clamp(floor(2*log2(t_ref/t_cand)) + 4, 1, 8). Bin 4 holds speedups in [1, sqrt 2).
[[nodiscard]] int speedup_bin(double t_ref_ms, double t_candidate_ms);

// P(bin = 1..8) of a candidate against a reference; index 0 is bin 1.
using BinProbabilities = std::array<double, speedup_bin_count>;

struct Forecast {
  double median_ms = 0;  // point forecast of the runtime
  double lower_ms = 0;   // 5% quantile
  double upper_ms = 0;   // 95% quantile
  double p_fail = 0;     // probability that the candidate fails (compile/launch/runtime)
  double spread = 0;     // model's own uncertainty, in log-runtime units (e.g. ensemble std)
  // Against a reference candidate, when one was given.
  std::optional<BinProbabilities> bin_probabilities;
};

struct Decision {
  Forecast forecast;
  double interval_low_ms = 0;   // calibrated interval at the predictor's 1 - alpha
  double interval_high_ms = 0;
  double confidence = 0;        // score used by the deferral rule; higher is more confident
  bool defer = true;            // true: measure it, the forecast is not trusted
  std::string reason;           // why (e.g. "confidence 0.41 < threshold 0.62")
  // What of the candidate lies outside what the model was trained on, "" when nothing does:
  // "block_size_x=2048 never seen in training (seen 16..128)", or a kernel it never saw.
  std::string extrapolation;

  // Whether a time lies in the interval, its ends included.
  [[nodiscard]] bool covers(double ms) const noexcept { return ms >= interval_low_ms && ms <= interval_high_ms; }
};

}  // namespace gpuforecast
