#pragma once
// Conformalised quantile regression on the surrogate's 5%/95% quantile head: the same split
// calibration with the CQR score, so the interval is [lo * e^-q, hi * e^q] (q may be negative
// when the head is too wide).
#include "calibration/split_conformal.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

[[nodiscard]] inline SplitConformal make_cqr(double alpha) { return SplitConformal(alpha, ConformalScore::cqr); }

}  // namespace gpuforecast
