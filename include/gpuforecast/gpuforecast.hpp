#pragma once
// Everything of gpuforecast::gpuforecast: core types, spaces, data, surrogates, calibration,
// search and forecast(). The CUDA runtime is separate (gpuforecast/runtime.hpp, gpuforecast::cuda).
#include "gpuforecast/calibration.hpp"
#include "gpuforecast/compose.hpp"
#include "gpuforecast/core.hpp"
#include "gpuforecast/data.hpp"
#include "gpuforecast/compare.hpp"
#include "gpuforecast/forecast.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "gpuforecast/screen.hpp"
#include "gpuforecast/run.hpp"
#include "gpuforecast/search.hpp"
#include "gpuforecast/space.hpp"
#include "gpuforecast/surrogate.hpp"
#include "gpuforecast/version.hpp"
