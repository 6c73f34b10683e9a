#pragma once
// A new GPU is mostly like one or two of the GPUs a model was trained on (the same architecture,
// a sibling card) and unlike the rest: an RTX 2080 Ti's pnpoly times follow a Titan RTX's to 0.998
// correlation in log time and an RTX 3090's to 0.82. One forecast made for the new GPU blends them,
// and no log-affine correction of it can undo the blend. Views keep the GPUs apart: the model
// forecasts each configuration as it would run on each of its training GPUs of the kernel, and K
// measurements of the new GPU weigh the views,
//
//     log t = b + sum_v w_v log t_hat_v,    w_v >= 0,
//
// by least squares with a free intercept and non-negative weights: a view can be chosen, never
// subtracted, so the stacked forecast stays a monotone function of every view and a GPU unlike all
// of them gets a flat forecast (which its own K measurements then fail to confirm) rather than an
// extrapolation.
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/forecast.hpp"
#include "internal_api.hpp"

namespace gpuforecast GPUFORECAST_INTERNAL_API {

// One configuration as forecast for each view (each training GPU), in the views' order.
using ViewForecasts = std::vector<Forecast>;

struct ViewStacking {
  double intercept = 0;         // b, in log ms
  std::vector<double> weights;  // w_v >= 0, one per view

  // The stacked forecast of one configuration: median and both quantiles through the same map, the
  // spread as the weighted sum of the views' spreads, p_fail the weights' average of theirs (plain
  // average when every weight is 0); bin probabilities are left out (they need the interval).
  // Throws invalid_argument_error for a number of views other than the weights'.
  [[nodiscard]] Forecast apply(const ViewForecasts& views) const;
  // The stacked forecast of each configuration, in order.
  [[nodiscard]] std::vector<Forecast> apply(std::span<const ViewForecasts> configurations) const;
  // The right-hand side as reports print it, "b + w_1 log t_<device 1> + ...", one name per view.
  [[nodiscard]] std::string describe(std::span<const std::string> view_devices) const;
};

// Fits b and w on K configurations' views and their measured runtimes. Needs at least 3 points
// and as many views in each; throws invalid_argument_error (naming the point) for mismatched
// sizes, and for forecasts or runtimes that are not positive and finite.
[[nodiscard]] ViewStacking fit_view_stacking(std::span<const ViewForecasts> views, std::span<const double> observed_ms);

// The K configurations' own stacked forecasts, each from the stacking fitted on the other K - 1:
// what a check of the K, or a correction fitted on them, may look at without having seen the
// point's own time. Needs at least 4 points.
[[nodiscard]] std::vector<Forecast> stack_leaving_each_out(std::span<const ViewForecasts> views,
                                                           std::span<const double> observed_ms);

}  // namespace gpuforecast
