#pragma once

#include "gpuforecast/export.hpp"
#define GPUFORECAST_VERSION_MAJOR 0
#define GPUFORECAST_VERSION_MINOR 1
#define GPUFORECAST_VERSION_PATCH 0
#define GPUFORECAST_VERSION_STRING "0.1.0"

namespace gpuforecast GPUFORECAST_API {
[[nodiscard]] const char* version() noexcept;
}
