#pragma once
// What a gpuforecast::Model holds. Immutable after load(), so forecast() needs no locks:
// AnySurrogate::predict is const and documented thread-safe, SelectiveCalibrator::decide const.
#include <optional>

#include "gpuforecast/calibration/selective_calibrator.hpp"
#include "gpuforecast/forecast.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"

namespace gpuforecast {

struct Model::Impl {
  AnySurrogate surrogate;
  std::optional<SelectiveCalibrator> calibrator;
  ModelInfo info;
};

// Builds a Model from parts in memory (tests, tools that have just calibrated).
[[nodiscard]] Model make_model(AnySurrogate surrogate, std::optional<SelectiveCalibrator> calibrator,
                               std::string path = "<memory>");

}  // namespace gpuforecast
