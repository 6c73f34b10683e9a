#pragma once
// Umbrella: constraint expressions and walking a tuning space.
#include "gpuforecast/space/enumerate.hpp"
#include "gpuforecast/space/expression.hpp"
