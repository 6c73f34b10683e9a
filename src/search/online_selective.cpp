#include "online_selective.hpp"

#include "gpuforecast/core/error.hpp"

namespace gpuforecast::search_detail {

SelectiveModel default_selective_model(const StrategySettings&) {
  throw invalid_argument_error("surrogate-filtered search: no surrogate available in this build yet");
}

}  // namespace gpuforecast::search_detail
