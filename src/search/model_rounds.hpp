#pragma once
// What every strategy that ranks with a selective model does each round, whatever it proposes
// (the surrogate-filtered search's proposals, screened evolution's children): teach the model and
// the screening calibration what has landed, and have the model decide on the round's candidates
// with the observers told. Not installed.
#include <cstddef>
#include <limits>
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

// What the model said in one round.
struct RoundForecasts {
  std::vector<Decision> decisions;  // one per candidate
  // Its forecast of the incumbent, made in the same call (screening may set the candidates
  // against it); NaN when nothing is measured yet or the forecast is not a positive time.
  double incumbent_forecast_ms = std::numeric_limits<double>::quiet_NaN();
};

// The model's decisions on `configs` (as the context's candidates), and with `forecast_incumbent`
// its forecast of the incumbent, reported to the observers with the time they took. The incumbent
// is asked only when wanted: a model may pay per candidate (the LLM). Throws error when the
// model answers for another number of candidates.
[[nodiscard]] RoundForecasts decide_and_report(AnySelectivePredictor& model, SearchContext& ctx,
                                               const std::vector<Config>& configs, bool forecast_incumbent);

}  // namespace gpuforecast::detail::search
