#include "calibration/split_conformal.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "stats/conformal_quantile.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

SplitConformal::SplitConformal(double alpha, ConformalScore score) : m_alpha(alpha), m_score(score) {
  check_alpha(alpha);
}

void SplitConformal::fit(std::span<const Forecast> forecasts, std::span<const double> observed_ms) {
  if (forecasts.size() != observed_ms.size())
    throw invalid_argument_error(fmt::format("calibration needs one runtime per forecast, got {} forecasts and {} runtimes",
                                             forecasts.size(), observed_ms.size()));
  if (forecasts.empty())
    throw invalid_argument_error("conformal calibration needs at least one calibration point; the set is empty");
  std::vector<double> s;
  s.reserve(forecasts.size());
  for (std::size_t i = 0; i < forecasts.size(); ++i) {
    try {
      s.push_back(nonconformity(m_score, forecasts[i], observed_ms[i]));
    } catch (const invalid_argument_error& e) {
      throw invalid_argument_error(fmt::format("calibration point {}: {}", i, e.what()));
    }
  }
  m_quantile = conformal_quantile(s, m_alpha);
  std::sort(s.begin(), s.end());
  m_scores = std::move(s);
}

Interval SplitConformal::interval(const Forecast& f) const {
  if (!fitted()) throw invalid_argument_error("split conformal used before fit()");
  return conformal_interval(m_score, f, m_quantile);
}

}  // namespace gpuforecast
