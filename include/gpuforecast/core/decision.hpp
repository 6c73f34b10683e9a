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
};

}  // namespace gpuforecast
