#pragma once
// `gpuforecast adapt` (and Python's for_new_device(out=...)): a model file adapted to a new
// device, as for_new_device() adapts a Model, written beside its model's file.
#include <span>
#include <string>

#include "gpuforecast/forecast.hpp"
#include "internal_api.hpp"

namespace gpuforecast GPUFORECAST_INTERNAL_API {

// Adapts the model of `model_path` to the device of `data_files` (one kernel on one device) and
// writes it to `out_path` with a "new_device" section and without the model's calibration (it
// judged the model's own forecasts). Returns the adapted model, as load(out_path) would. Throws
// as for_new_device() and the readers do.
Model write_new_device_model(const std::string& model_path, std::span<const std::string> data_files,
                             const std::string& out_path, const NewDeviceOptions& options = {});

}  // namespace gpuforecast
