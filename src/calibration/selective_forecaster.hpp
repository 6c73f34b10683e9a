#pragma once
// The SelectivePredictor of this library: any Surrogate plus a SelectiveCalibrator. Only the
// type-dependent glue lives here; the statistics are in SelectiveCalibrator (compiled once).
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "calibration/selective_calibrator.hpp"
#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

template <Surrogate S>
class SelectiveForecaster {
 public:
  SelectiveForecaster(S surrogate, SelectiveCalibrator calibrator)
      : m_surrogate(std::move(surrogate)), m_calibrator(std::move(calibrator)) {}

  // Forecast, calibrated interval, confidence and defer/accept for each candidate.
  [[nodiscard]] std::vector<Decision> decide(std::span<const Candidate> candidates) {
    return decide_impl(candidates, std::nullopt);
  }
  // The same with speedup-bin probabilities against a measured reference runtime.
  [[nodiscard]] std::vector<Decision> decide(std::span<const Candidate> candidates, double reference_ms) {
    return decide_impl(candidates, reference_ms);
  }

  // New measurements from a search: the calibrator adapts its level (adaptive conformal) on
  // the forecasts made before the surrogate learns from them, then the surrogate updates.
  void update(std::span<const Observation> observations) {
    const TimedCandidates runs = successful_runs(observations);
    if (!runs.candidates.empty()) {
      const std::vector<Forecast> f = m_surrogate.predict(std::span<const Candidate>(runs.candidates));
      for (std::size_t i = 0; i < runs.candidates.size(); ++i)
        m_calibrator.update(runs.candidates[i], f[i], runs.median_ms[i]);
    }
    m_surrogate.update(observations);
  }

  [[nodiscard]] const S& surrogate() const noexcept { return m_surrogate; }
  [[nodiscard]] const SelectiveCalibrator& calibrator() const noexcept { return m_calibrator; }

 private:
  std::vector<Decision> decide_impl(std::span<const Candidate> candidates, std::optional<double> reference_ms) {
    const std::vector<Forecast> f = m_surrogate.predict(candidates);
    std::vector<Decision> out;
    out.reserve(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) out.push_back(m_calibrator.decide(candidates[i], f[i], reference_ms));
    return out;
  }
  S m_surrogate;
  SelectiveCalibrator m_calibrator;
};

}  // namespace gpuforecast
