#pragma once
// Scores a fitted SelectiveCalibrator on held-out test points: interval coverage and width, the
// deferral rule's acceptance and measured risk, the risk-coverage curve and the calibration of
// the speedup-bin probabilities. Shared by `gpuforecast eval --selective`, benchmarks/selective
// and the validation tests.
#include <cstdint>
#include <span>
#include <vector>

#include "calibration/metrics.hpp"
#include "calibration/selective_calibrator.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct SelectiveEvaluation {
  std::size_t test_size = 0;
  double coverage = 0;             // of the calibrated 1 - alpha interval
  double mean_width_ms = 0;
  double mean_log_width = 0;       // mean log(high / low)
  std::size_t accepted = 0;        // by the deferral rule
  double accepted_fraction = 0;
  double risk_accepted = 0;        // mean loss among accepted (0 when none)
  double risk_all = 0;             // mean loss if everything were accepted
  double aurc = 0;
  std::vector<RiskCoveragePoint> risk_coverage;
  // Speedup bins against a random reference of the same kernel and device (seeded).
  double ece = 0, brier = 0, crps = 0, nll = 0, bin_accuracy = 0;
  std::vector<ReliabilityBin> reliability;
};

// Throws invalid_argument_error for empty or mismatched input.
[[nodiscard]] SelectiveEvaluation evaluate_selective(const SelectiveCalibrator& calibrator,
                                                     std::span<const Candidate> candidates,
                                                     std::span<const Forecast> forecasts,
                                                     std::span<const double> observed_ms, std::uint64_t seed = 0);

}  // namespace gpuforecast
