#pragma once
// What every strategy that ranks with a selective model does each round, whatever it proposes
// (the surrogate-filtered search's proposals, screened evolution's children): teach the model and
// the screening calibration what has landed, and have the model decide on the round's candidates
// with the observers told. Not installed.
#include <cstddef>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/core/any_selective_predictor.hpp"
#include "search/surrogate_filtered/screening.hpp"

namespace gpuforecast {
class SearchContext;
}

namespace gpuforecast::detail::search {

// Gives the model, and the screening's calibration, the observations that landed since the last
// call; `learned` counts those already given.
void learn_new_observations(AnySelectivePredictor& model, RoundScreening& screening, const SearchContext& ctx,
                            std::size_t& learned);

// The model's decisions on `configs` (as the context's candidates), reported to the observers
// with the time they took. Throws error when the model answers for another number of candidates.
[[nodiscard]] std::vector<Decision> decide_and_report(AnySelectivePredictor& model, SearchContext& ctx,
                                                      const std::vector<Config>& configs);

}  // namespace gpuforecast::detail::search
