#include "stats/conformal_quantile.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

void check_alpha(double alpha, const char* what) {
  if (!(alpha > 0.0 && alpha < 1.0))
    throw invalid_argument_error(fmt::format("{} must lie strictly between 0 and 1, got {}", what, alpha));
}

std::size_t conformal_rank(std::size_t n, double alpha) {
  check_alpha(alpha);
  // (n + 1)(1 - alpha) computed with a small tolerance so that e.g. n = 9, alpha = 0.1 gives
  // exactly 9 and not 10 through rounding of 0.9 * 10.
  const double x = static_cast<double>(n + 1) * (1.0 - alpha);
  return static_cast<std::size_t>(std::ceil(x - 1e-9));
}

double conformal_quantile(std::span<const double> scores, double alpha) {
  check_alpha(alpha);
  if (scores.empty())
    throw invalid_argument_error("conformal calibration needs at least one calibration score; the set is empty");
  for (std::size_t i = 0; i < scores.size(); ++i)
    if (std::isnan(scores[i]))
      throw invalid_argument_error(fmt::format("calibration score {} of {} is NaN", i, scores.size()));
  const std::size_t k = conformal_rank(scores.size(), alpha);
  if (k > scores.size()) return std::numeric_limits<double>::infinity();
  if (k == 0) return -std::numeric_limits<double>::infinity();
  std::vector<double> s(scores.begin(), scores.end());
  std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(k - 1), s.end());
  return s[k - 1];
}

}  // namespace gpuforecast
