#pragma once
// Synthetic forecasts for tests of what is done with forecasts (corrections, stackings, checks).
#include "gpuforecast/core/forecast.hpp"

namespace gpuforecast::test {

// A forecast of `ms` with the interval [ms / width, ms * width] and the given spread.
inline Forecast forecast_around(double ms, double width, double spread) {
  Forecast f;
  f.median_ms = ms;
  f.lower_ms = ms / width;
  f.upper_ms = ms * width;
  f.spread = spread;
  return f;
}

}  // namespace gpuforecast::test
