#pragma once
// Umbrella: the composition layer (surrogate + calibrator -> SelectiveModel).
#include "gpuforecast/compose/selective_model_spec.hpp"
