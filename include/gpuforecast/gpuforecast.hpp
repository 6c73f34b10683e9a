#pragma once
// Everything a user needs: core types, spaces, data, surrogates, calibration, search, forecast().
#include "gpuforecast/core.hpp"
#include "gpuforecast/data.hpp"
#include "gpuforecast/space.hpp"
#include "gpuforecast/version.hpp"
