#pragma once
// Adaptive conformal inference (Gibbs and Candes 2021) for use inside a search, whose candidates
// drift (toward fast configurations) and so are not exchangeable with the calibration set.
// After each measurement: alpha_{t+1} = alpha_t + gamma (alpha - err_t), err_t = 1 when the
// interval missed. Whatever the drift, the long-run miss rate satisfies
// |mean(err) - alpha| <= (max(alpha_1, 1 - alpha_1) + gamma) / (gamma T).
#include <cstddef>
#include <deque>
#include <span>
#include <vector>

#include "calibration/nonconformity.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class ArchiveWriter;
class ArchiveReader;

class AdaptiveConformal {
 public:
  AdaptiveConformal() = default;
  // initial_scores: calibration scores (non-empty). window: keep only the most recent scores
  // (0 = keep all). Throws invalid_argument_error for alpha outside (0,1), gamma <= 0, an empty
  // or NaN score set.
  AdaptiveConformal(double alpha, double gamma, ConformalScore score, std::span<const double> initial_scores,
                    std::size_t window = 0);

  // The interval at the current level alpha_t: unbounded when alpha_t <= 0, a point at the
  // forecast when alpha_t >= 1.
  [[nodiscard]] Interval interval(const Forecast& f) const;
  // Records the measured runtime of a forecast that was answered with interval(f); returns
  // whether it was a miss, then adapts alpha_t and adds the score to the window.
  bool update(const Forecast& f, double observed_ms);

  [[nodiscard]] double alpha() const noexcept { return m_alpha; }
  [[nodiscard]] double alpha_t() const noexcept { return m_alpha_t; }
  [[nodiscard]] double gamma() const noexcept { return m_gamma; }
  [[nodiscard]] std::size_t steps() const noexcept { return m_steps; }
  [[nodiscard]] std::size_t misses() const noexcept { return m_misses; }
  // Misses / steps so far (0 before the first update).
  [[nodiscard]] double miss_rate() const noexcept;
  // The deterministic bound on |miss_rate - alpha| after the steps so far.
  [[nodiscard]] double miss_rate_bound() const noexcept;

  void save(ArchiveWriter& w) const;
  static AdaptiveConformal load(ArchiveReader& r);

 private:
  [[nodiscard]] double current_quantile() const;
  double m_alpha = 0.1;
  double m_gamma = 0.01;
  double m_alpha_t = 0.1;
  double m_alpha_1 = 0.1;
  ConformalScore m_score = ConformalScore::normalised_residual;
  std::size_t m_window = 0;
  std::deque<double> m_scores;  // arrival order (for the window)
  std::vector<double> m_sorted;
  std::size_t m_steps = 0;
  std::size_t m_misses = 0;
};

}  // namespace gpuforecast
