#pragma once
// The selective model a surrogate-filtered search uses when the caller gives none: a
// pre-trained model file (StrategySettings::model_path), or a surrogate trained online.
#include "gpuforecast/search/selective_model.hpp"
#include "gpuforecast/search/strategy_registry.hpp"

namespace gpuforecast::search_detail {

[[nodiscard]] SelectiveModel default_selective_model(const StrategySettings& settings);

}  // namespace gpuforecast::search_detail
