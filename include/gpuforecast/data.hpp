#pragma once
// Umbrella: dataset files and the Dataset type.
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/data/kernel_tuner_cache_appender.hpp"
#include "gpuforecast/data/t1.hpp"
#include "gpuforecast/data/t4.hpp"
