#pragma once
// A Forecast with a calibrated interval and the verdict: trust it, or measure (defer).
#include <string>

#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

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
