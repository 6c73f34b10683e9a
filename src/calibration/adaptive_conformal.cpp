#include "calibration/adaptive_conformal.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/conformal_quantile.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

AdaptiveConformal::AdaptiveConformal(double alpha, double gamma, ConformalScore score,
                                     std::span<const double> initial_scores, std::size_t window)
    : m_alpha(alpha), m_gamma(gamma), m_alpha_t(alpha), m_alpha_1(alpha), m_score(score), m_window(window) {
  check_alpha(alpha);
  if (!(gamma > 0) || !std::isfinite(gamma))
    throw invalid_argument_error(fmt::format("adaptive conformal step gamma must be positive, got {}", gamma));
  if (initial_scores.empty())
    throw invalid_argument_error("adaptive conformal needs a non-empty set of calibration scores");
  for (std::size_t i = 0; i < initial_scores.size(); ++i) {
    if (std::isnan(initial_scores[i]))
      throw invalid_argument_error(fmt::format("calibration score {} of {} is NaN", i, initial_scores.size()));
    m_scores.push_back(initial_scores[i]);
  }
  if (m_window > 0)
    while (m_scores.size() > m_window) m_scores.pop_front();
  m_sorted.assign(m_scores.begin(), m_scores.end());
  std::sort(m_sorted.begin(), m_sorted.end());
}

double AdaptiveConformal::current_quantile() const {
  if (m_alpha_t <= 0) return std::numeric_limits<double>::infinity();
  const std::size_t n = m_sorted.size();
  const auto k = static_cast<std::size_t>(std::ceil(static_cast<double>(n + 1) * (1.0 - m_alpha_t) - 1e-9));
  if (k > n) return std::numeric_limits<double>::infinity();
  if (k == 0) return -std::numeric_limits<double>::infinity();
  return m_sorted[k - 1];
}

Interval AdaptiveConformal::interval(const Forecast& f) const {
  if (m_sorted.empty()) throw invalid_argument_error("adaptive conformal used before it was given calibration scores");
  const double q = current_quantile();
  if (q == -std::numeric_limits<double>::infinity()) return {f.median_ms, f.median_ms};
  return conformal_interval(m_score, f, q);
}

bool AdaptiveConformal::update(const Forecast& f, double observed_ms) {
  const double s = nonconformity(m_score, f, observed_ms);  // validates inputs first
  const bool miss = !interval(f).contains(observed_ms);
  m_alpha_t += m_gamma * (m_alpha - (miss ? 1.0 : 0.0));
  ++m_steps;
  m_misses += miss ? 1 : 0;
  m_scores.push_back(s);
  m_sorted.insert(std::upper_bound(m_sorted.begin(), m_sorted.end(), s), s);
  if (m_window > 0 && m_scores.size() > m_window) {
    const double old = m_scores.front();
    m_scores.pop_front();
    m_sorted.erase(std::lower_bound(m_sorted.begin(), m_sorted.end(), old));
  }
  return miss;
}

double AdaptiveConformal::miss_rate() const noexcept {
  return m_steps == 0 ? 0.0 : static_cast<double>(m_misses) / static_cast<double>(m_steps);
}

double AdaptiveConformal::miss_rate_bound() const noexcept {
  if (m_steps == 0) return std::numeric_limits<double>::infinity();
  return (std::max(m_alpha_1, 1 - m_alpha_1) + m_gamma) / (m_gamma * static_cast<double>(m_steps));
}

}  // namespace gpuforecast
