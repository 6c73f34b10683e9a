#pragma once
// What a gpuforecast::Model holds. Immutable after load(), so forecast() needs no locks:
// AnySurrogate::predict is const and documented thread-safe, SelectiveCalibrator::decide const.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibration/selective_calibrator.hpp"
#include "calibration/new_device_section.hpp"
#include "calibration/view_models.hpp"
#include "gpuforecast/forecast.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct Model::Impl {
  AnySurrogate surrogate;
  std::optional<SelectiveCalibrator> calibrator;
  // The per-GPU models a cross-device calibration on views stacks (the model file's "views").
  std::optional<ViewModels> views;
  // A GPU the model was not trained on, forecast through its views stacked by measurements of it
  // (for_new_device; the model file's "new_device" section); its forecaster points into `views`.
  std::optional<NewDeviceForecaster> new_device;
  ModelInfo info;
};

// Checks each candidate against the model's parameter schemas, and against `space` when given
// (invalid_configuration_error naming the row); returns what each extrapolates ("" if nothing).
[[nodiscard]] std::vector<std::string> check_candidates(const Model::Impl& model, std::span<const Candidate> candidates,
                                                        const TuningSpace* space = nullptr);

// The surrogate's forecasts of `candidates`, one each (error otherwise: a surrogate's bug); those
// of the device a calibration on views is scoped to are its views, stacked, and those of a new
// device (for_new_device) its stacked views times their ratio model.
[[nodiscard]] std::vector<Forecast> predict_all(const Model::Impl& model, std::span<const Candidate> candidates);

// Sets `model.info` for a model that forecasts its new_device (not calibrated, and saying so).
void describe_new_device(Model::Impl& model);

// Builds a Model from parts in memory (tests, tools that have just calibrated).
[[nodiscard]] Model make_model(AnySurrogate surrogate, std::optional<SelectiveCalibrator> calibrator,
                               std::string path = "<memory>");
// The same with per-GPU views (calibration/view_models.hpp), as `calibrate --rehearse` stores them.
[[nodiscard]] Model make_model(AnySurrogate surrogate, std::optional<SelectiveCalibrator> calibrator, ViewModels views,
                               std::string path = "<memory>");

}  // namespace gpuforecast
