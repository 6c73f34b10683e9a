#pragma once
// Umbrella: surrogates, their model file and the evaluation metrics.
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/surrogate/archive.hpp"
#include "gpuforecast/surrogate/ensemble.hpp"
#include "gpuforecast/surrogate/evaluation.hpp"
#include "gpuforecast/surrogate/feature_encoder.hpp"
#include "gpuforecast/surrogate/knn.hpp"
#include "gpuforecast/surrogate/metrics.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "gpuforecast/surrogate/ridge.hpp"
#include "gpuforecast/surrogate/transformer.hpp"
#include "gpuforecast/surrogate/xgboost.hpp"
