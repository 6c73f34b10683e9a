#pragma once
// Umbrella: the core types and concepts.
#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/decision.hpp"
#include "gpuforecast/core/device.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/core/kernel_spec.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/core/tuning_space.hpp"
#include "gpuforecast/core/value.hpp"
