#pragma once
// Screening with a Model: which candidates need not be measured, because with a guarantee they
// are no improvement over the incumbent (the best time measured so far).
//
//   auto model = gpuforecast::load("model.gfm");
//   auto s = gpuforecast::screen(model, candidates, best_ms, measured_on_this_device);
//   for (std::size_t i = 0; i < candidates.size(); ++i)
//     if (!s.skip[i]) measure(candidates[i]);
//
// `calibration` holds measurements of the same kernel and device that the model did not train
// on; the model forecasts them, and stats/screening.hpp certifies the rule from those
// pairs at `incumbent_ms`: with probability >= 1 - delta, among candidates truly faster than
// incumbent_ms * (1 - tolerance), the share skipped is <= alpha. Candidates and calibration
// observations are checked as forecast() checks them.
#include <span>
#include <vector>

#include "gpuforecast/stats/screening.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/export.hpp"
#include "gpuforecast/forecast.hpp"

namespace gpuforecast GPUFORECAST_API {

struct Screening {
  ScreeningRule rule;               // certified, margin, improvements, ...; reason when nothing is
  std::vector<bool> skip;           // one per candidate
  std::vector<Decision> decisions;  // the model's, one per candidate
};

// Throws invalid_argument_error for a non-positive or NaN incumbent, or for bad options
// (ScreeningOptions); failed calibration measurements are left out (they improve on nothing).
[[nodiscard]] Screening screen(const Model& model, std::span<const Candidate> candidates, double incumbent_ms,
                               std::span<const Observation> calibration, const ScreeningOptions& options = {});

}  // namespace gpuforecast
