#pragma once
// Metrics of calibrated and selective forecasts: interval coverage and width, calibration of
// speedup-bin probabilities (ECE, Brier, CRPS, NLL), and the risk-coverage trade-off.
#include <array>
#include <span>
#include <vector>

#include "calibration/nonconformity.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "surrogate/metrics.hpp"  // BinProbabilities, per-forecast brier() and crps_ordinal()
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Fraction of observed runtimes inside their interval. Throws on empty/mismatched input.
[[nodiscard]] double empirical_coverage(std::span<const Interval> intervals, std::span<const double> observed_ms);
// Mean of high - low in ms (+inf if any interval is unbounded).
[[nodiscard]] double mean_interval_width(std::span<const Interval> intervals);
// Mean of log(high / low): width in relative terms, comparable across kernels.
[[nodiscard]] double mean_log_interval_width(std::span<const Interval> intervals);

// Per-bin statistics of the top-label reliability diagram (equal-width bins on [0,1] of the
// largest probability). Empty bins have count 0.
struct ReliabilityBin {
  double lower = 0, upper = 0;
  std::size_t count = 0;
  double mean_confidence = 0;
  double accuracy = 0;
};
// true_bins are 1..8. Throws on empty/mismatched input or a bin outside 1..8.
[[nodiscard]] std::vector<ReliabilityBin> reliability_bins(std::span<const BinProbabilities> p,
                                                           std::span<const int> true_bins, std::size_t bins = 10);
// Expected calibration error: sum over bins of count/n * |accuracy - mean confidence|.
[[nodiscard]] double expected_calibration_error(std::span<const BinProbabilities> p, std::span<const int> true_bins,
                                                std::size_t bins = 10);
// Means over many forecasts of the surrogate area's per-forecast scores.
// Mean multi-class Brier score sum_k (p_k - [y = k])^2, in [0, 2].
[[nodiscard]] double brier_score(std::span<const BinProbabilities> p, std::span<const int> true_bins);
// Mean ranked probability score over the ordinal bins: sum_{k<8} (F_k - [y <= k])^2 / 7, in [0, 1].
[[nodiscard]] double crps_ordinal(std::span<const BinProbabilities> p, std::span<const int> true_bins);
// Mean -log p(true bin), probabilities floored at 1e-12.
[[nodiscard]] double negative_log_likelihood(std::span<const BinProbabilities> p, std::span<const int> true_bins);

// Accepting the k most confident points, k = 1..n: coverage k/n and the mean loss among them.
// Ties in confidence are accepted together (a threshold cannot split them).
struct RiskCoveragePoint {
  double coverage = 0;
  double risk = 0;
  double threshold = 0;
};
[[nodiscard]] std::vector<RiskCoveragePoint> risk_coverage_curve(std::span<const double> confidence,
                                                                 std::span<const double> loss);
// Area under the risk-coverage curve (mean selective risk over k = 1..n); lower is better.
[[nodiscard]] double aurc(std::span<const double> confidence, std::span<const double> loss);

}  // namespace gpuforecast
