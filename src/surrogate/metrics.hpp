#pragma once
// Forecast-quality metrics of DESIGN.md "Evaluation that counts", shared by `gpuforecast eval`,
// the benchmarks and calibration. Runtimes are in ms; lower is better everywhere a "top" set is
// taken. All functions throw invalid_argument_error on mismatched sizes or empty input.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Spearman's rho with average ranks for ties (Pearson correlation of the ranks); 0 when either
// side is constant.
[[nodiscard]] double spearman(std::span<const double> a, std::span<const double> b);
// Kendall's tau-b (ties in either variable corrected), O(n log n) (Knight's algorithm).
[[nodiscard]] double kendall_tau_b(std::span<const double> a, std::span<const double> b);
// Mean absolute percentage error, in percent: mean |pred - truth| / truth * 100.
[[nodiscard]] double mape(std::span<const double> predicted, std::span<const double> truth);
// Fraction of the true best `true_fraction` (at least one element) found among the predicted
// best `predicted_fraction` (at least one). Defaults: true top-1% inside predicted top-5%.
[[nodiscard]] double top_recall(std::span<const double> predicted, std::span<const double> truth,
                                double true_fraction = 0.01, double predicted_fraction = 0.05);
// Best true time among the predicted best `fraction` divided by the best true time: 1 means the
// optimum was among them; larger is worse.
[[nodiscard]] double utility(std::span<const double> predicted, std::span<const double> truth,
                             double fraction = 0.10);

// Speedup-bin probabilities of `candidate` against `reference` from two runtime forecasts, taking
// each log-runtime as normal with its median and the sd implied by its 5-95% interval.
[[nodiscard]] BinProbabilities bin_probabilities(const Forecast& reference, const Forecast& candidate);
// Multi-class Brier score sum_k (p_k - [k = bin])^2, in [0, 2]. `bin` is 1..8.
[[nodiscard]] double brier(const BinProbabilities& p, int bin);
// Ranked probability score over the ordinal bins: mean over the 7 thresholds of
// (P(B <= k) - [bin <= k])^2, in [0, 1]: the CRPS of a distribution on ordered bins.
[[nodiscard]] double crps_ordinal(const BinProbabilities& p, int bin);
// Most probable bin, 1..8 (the lowest on ties).
[[nodiscard]] int predicted_bin(const BinProbabilities& p);

struct BinScores {
  double exact = 0;       // P(predicted bin == true bin)
  double within_one = 0;  // P(|predicted - true| <= 1)
  double brier = 0;       // mean multi-class Brier
  double crps = 0;        // mean ordinal CRPS
  std::size_t pairs = 0;
};
// Scores the bin forecasts on `pairs` random (reference, candidate) pairs of distinct indices,
// drawn with `seed`. Only pairs within the same `group` (if given, one id per element) count,
// as speedups across kernels or devices are not what the bins mean.
[[nodiscard]] BinScores bin_scores(std::span<const Forecast> forecasts, std::span<const double> truth,
                                   std::size_t pairs, std::uint64_t seed,
                                   std::span<const std::uint32_t> group = {});

struct ForecastScores {
  double spearman = 0;
  double kendall = 0;
  double mape = 0;
  double top1_recall = 0;  // true top-1% inside predicted top-5%
  double utility = 0;      // best true time in predicted top-10% / best true time
  BinScores bins;
  std::size_t count = 0;
};
// Every metric above for forecasts of candidates whose measured times are `truth` (one space).
[[nodiscard]] ForecastScores score_forecasts(std::span<const Forecast> forecasts, std::span<const double> truth,
                                             std::uint64_t seed, std::size_t pairs = 2000);

}  // namespace gpuforecast
