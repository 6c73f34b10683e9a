#pragma once
// Pairwise selective prediction for any surrogate: from a distribution over the eight speedup
// bins of a (reference, candidate) pair, a conformal set of bins (ordinal_conformal.hpp) and a
// Learn-then-Test rule that answers the pair without measuring only when its confidence clears
// a threshold certified so that, with probability >= 1 - delta over the calibration pairs, the
// loss among answered pairs is <= alpha.
//
// Where the bin distribution comes from: an LLM gives it directly; a runtime surrogate gives
// it through its log-runtime predictive distributions of both points (pair_bin_probabilities).
#include <span>
#include <vector>

#include "calibration/candidate_pairs.hpp"
#include "stats/learn_then_test.hpp"
#include "calibration/ordinal_conformal.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// P(candidate faster or as fast) = P(bin >= 4): bin 4 holds speedups in [1, sqrt 2).
[[nodiscard]] double faster_probability(const BinProbabilities& p);
[[nodiscard]] bool called_faster(const BinProbabilities& p);  // faster_probability >= 1/2
// 1 when the call is bad, 0 when good; true_bin is 1..8 (throws otherwise).
[[nodiscard]] double pair_loss(PairLoss loss, const BinProbabilities& p, int true_bin);
// Higher is more confident.
[[nodiscard]] double pair_confidence(PairConfidence confidence, const BinProbabilities& p);

// Bin distributions of pairs of points whose runtimes `forecasts` predicts (log-normal with the
// median and the spread of each forecast's 5-95% interval: surrogate/metrics.hpp).
[[nodiscard]] std::vector<BinProbabilities> pair_bin_probabilities(std::span<const Forecast> forecasts,
                                                                   std::span<const CandidatePair> pairs);
// The true bin of each pair from measured runtimes (ms, positive).
[[nodiscard]] std::vector<int> pair_true_bins(std::span<const double> runtimes_ms, std::span<const CandidatePair> pairs);

class PairwiseSelector {
 public:
  PairwiseSelector() = default;
  // Calibration pairs: their bin distributions and true bins. Throws invalid_argument_error for
  // empty or mismatched input, bins outside 1..8, alpha or delta outside (0, 1).
  static PairwiseSelector fit(std::span<const BinProbabilities> p, std::span<const int> true_bins,
                              const PairwiseOptions& options = {});
  [[nodiscard]] PairDecision decide(const BinProbabilities& p) const;
  [[nodiscard]] const PairwiseOptions& options() const noexcept { return m_options; }
  [[nodiscard]] const OrdinalConformal& sets() const noexcept { return m_sets; }
  [[nodiscard]] const LttResult& deferral() const noexcept { return m_deferral; }

 private:
  PairwiseOptions m_options;
  OrdinalConformal m_sets;
  LttResult m_deferral;
};

}  // namespace gpuforecast
