#pragma once
// The built-in device table (src/core/device_table.cpp), kept apart from the lookup logic.
#include <vector>

#include "gpuforecast/core/device.hpp"

namespace gpuforecast::detail {

[[nodiscard]] std::vector<Device> builtin_devices();

}  // namespace gpuforecast::detail
