#include "gpuforecast/screen.hpp"

#include <fmt/core.h>

#include <cmath>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

Screening screen(const Model& model, std::span<const Candidate> candidates, double incumbent_ms,
                 std::span<const Observation> calibration, const ScreeningOptions& options) {
  if (!(std::isfinite(incumbent_ms) && incumbent_ms > 0))
    throw invalid_argument_error(fmt::format("screen: incumbent {} ms is not a positive finite time", incumbent_ms));
  // Every calibration row is forecast (so a refused row is named by its index in `calibration`);
  // the failed ones then give no pair.
  std::vector<Candidate> known;
  known.reserve(calibration.size());
  for (const auto& o : calibration) known.push_back(o.candidate);
  const auto known_decisions = forecast(model, known);
  std::vector<double> known_forecast, measured;
  for (std::size_t i = 0; i < calibration.size(); ++i) {
    const auto& m = calibration[i].measurement;
    if (m.ok() && std::isfinite(m.median_ms) && m.median_ms > 0) {
      known_forecast.push_back(known_decisions[i].forecast.median_ms);
      measured.push_back(m.median_ms);
    }
  }
  Screening s;
  s.rule = certify_screening(known_forecast, measured, incumbent_ms, options);
  s.decisions = forecast(model, candidates);
  s.skip.resize(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const double f = s.decisions[i].forecast.median_ms;
    s.skip[i] = std::isfinite(f) && f > 0 && s.rule.skip(f, incumbent_ms);
  }
  return s;
}

}  // namespace gpuforecast
