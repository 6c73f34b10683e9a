#pragma once
// Split conformal calibration of a runtime forecaster: fit on a held-out calibration set,
// then every interval covers a fresh exchangeable runtime with probability >= 1 - alpha.
#include <span>
#include <vector>

#include "calibration/nonconformity.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class ArchiveWriter;
class ArchiveReader;

class SplitConformal {
 public:
  SplitConformal() = default;
  // Throws invalid_argument_error unless 0 < alpha < 1.
  explicit SplitConformal(double alpha, ConformalScore score = ConformalScore::normalised_residual);

  // Computes the scores of the calibration set and its conformal quantile. Throws
  // invalid_argument_error for an empty set, mismatched sizes, or non-positive/NaN runtimes.
  void fit(std::span<const Forecast> forecasts, std::span<const double> observed_ms);

  [[nodiscard]] Interval interval(const Forecast& f) const;
  [[nodiscard]] double quantile() const noexcept { return m_quantile; }
  [[nodiscard]] double alpha() const noexcept { return m_alpha; }
  [[nodiscard]] ConformalScore score() const noexcept { return m_score; }
  [[nodiscard]] std::size_t size() const noexcept { return m_scores.size(); }
  [[nodiscard]] bool fitted() const noexcept { return !m_scores.empty(); }
  // Sorted calibration scores (for adaptive conformal and diagnostics).
  [[nodiscard]] const std::vector<double>& scores() const noexcept { return m_scores; }

  void save(ArchiveWriter& w) const;
  static SplitConformal load(ArchiveReader& r);

 private:
  double m_alpha = 0.1;
  ConformalScore m_score = ConformalScore::normalised_residual;
  std::vector<double> m_scores;
  double m_quantile = 0;
};

}  // namespace gpuforecast
