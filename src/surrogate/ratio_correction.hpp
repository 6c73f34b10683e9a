#pragma once
// A frozen base forecast corrected by a model of the ratio measured / base: the search's model
// corrects a pre-trained Model this way (compose/online_selective.hpp), and the stacked views of a
// new GPU are corrected by a model of what they miss (calibration/stacked_views_surrogate.hpp).
// A ratio is learnt like a runtime (positive, modelled in log), so any surrogate can learn it.
#include <algorithm>

#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/core/observation.hpp"

namespace gpuforecast::detail {

// The measurement divided by `base_ms`: the row a ratio model learns. Failed measurements, and a
// base that is not positive, are kept as they are (a failure teaches p_fail, not a ratio).
[[nodiscard]] inline Observation ratio_observation(Observation r, double base_ms) {
  if (r.measurement.ok() && base_ms > 0) {
    const double scale = 1.0 / base_ms;
    for (auto& s : r.measurement.samples_ms) s *= scale;
    r.measurement.median_ms *= scale;
    r.measurement.ci_low_ms *= scale;
    r.measurement.ci_high_ms *= scale;
  }
  return r;
}

// `base` times the ratio model's forecast: the ratio's own interval is the uncertainty left once
// the base is corrected, and its p_fail the failure the base does not know of.
[[nodiscard]] inline Forecast corrected_by_ratio(Forecast base, const Forecast& ratio) {
  const double r = std::max(ratio.median_ms, 1e-9);
  base.median_ms *= r;
  base.lower_ms = base.median_ms * (ratio.lower_ms / r);
  base.upper_ms = base.median_ms * (ratio.upper_ms / r);
  base.spread = ratio.spread;
  base.p_fail = ratio.p_fail;
  base.bin_probabilities.reset();
  return base;
}

}  // namespace gpuforecast::detail
