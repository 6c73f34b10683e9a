#pragma once
// The finite-sample conformal quantile: with n exchangeable calibration scores, the
// ceil((n + 1)(1 - alpha))-th smallest score bounds a fresh score with probability >= 1 - alpha.
#include <span>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Throws invalid_argument_error naming `what` unless 0 < alpha < 1.
void check_alpha(double alpha, const char* what = "alpha");

// Index k = ceil((n + 1)(1 - alpha)) of the order statistic used (1-based); may exceed n.
[[nodiscard]] std::size_t conformal_rank(std::size_t n, double alpha);

// The k-th smallest score, k = conformal_rank(n, alpha); +infinity when k > n (too few scores
// for that alpha: the only valid interval is unbounded). Throws invalid_argument_error for an
// empty set, a NaN score, or alpha outside (0, 1).
[[nodiscard]] double conformal_quantile(std::span<const double> scores, double alpha);

}  // namespace gpuforecast
