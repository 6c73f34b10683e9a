#pragma once
// A GPU a model was not trained on, forecast through the model's views stacked by measurements of
// it (for_new_device, include/gpuforecast/forecast.hpp), and its place in a model file: the
// "new_device" section, which names the views it stacks (the file's "views" section holds them),
// their weights, and the ratio model with its kind.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "calibration/stacked_views_surrogate.hpp"
#include "calibration/view_models.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "internal_api.hpp"

namespace gpuforecast GPUFORECAST_INTERNAL_API {

struct NewDeviceForecaster {
  std::string kernel, device;
  std::size_t measurements = 0;  // the stacking and the ratio model were fitted on
  std::shared_ptr<const StackedViewsSurrogate> forecaster;  // its views point into a ViewModels
};

void set_new_device_section(ModelFile& file, const NewDeviceForecaster& d);
// nullopt without the section; model_file_error when it is damaged, of a newer version, or names
// a view `views` lacks (nullptr: the file has no "views" section).
[[nodiscard]] std::optional<NewDeviceForecaster> new_device_from(const ModelFile& file, const std::string& origin,
                                                                 const ViewModels* views);
// A file adapted to a new device forecasts it through stacked views, which `what` (a calibration
// of the model's own surrogate) would not see: invalid_argument_error naming the file and device.
void refuse_if_adapted(const ModelFile& file, const std::string& origin, const std::string& what);

}  // namespace gpuforecast
