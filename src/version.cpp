#include "gpuforecast/version.hpp"

namespace gpuforecast {
const char* version() noexcept { return GPUFORECAST_VERSION_STRING; }
}  // namespace gpuforecast
