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
#include <string_view>
#include <vector>

#include "gpuforecast/calibration/candidate_pairs.hpp"
#include "gpuforecast/stats/learn_then_test.hpp"
#include "gpuforecast/calibration/ordinal_conformal.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

enum class PairLoss {
  wrong_bin,        // the most probable bin is not the true bin
  wrong_direction,  // the candidate called faster (bins 4-8) when it is slower (1-3), or the reverse
};

enum class PairConfidence {
  top_bin_probability,    // largest bin probability
  margin,                 // largest minus second largest
  entropy,                // minus the entropy of the eight bins
  direction_probability,  // max(P(faster), P(slower)): the probability of the called direction
};

[[nodiscard]] std::string_view to_string(PairLoss l) noexcept;
[[nodiscard]] std::string_view to_string(PairConfidence c) noexcept;
// "wrong_bin" | "wrong_direction"; throws invalid_argument_error otherwise.
[[nodiscard]] PairLoss parse_pair_loss(std::string_view s);
// "top_bin_probability" | "margin" | "entropy" | "direction_probability"; throws otherwise.
[[nodiscard]] PairConfidence parse_pair_confidence(std::string_view s);

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

struct PairwiseOptions {
  double alpha = 0.1;  // miscoverage of the bin sets and the allowed risk among answered pairs
  double delta = 0.1;  // probability that the deferral guarantee fails
  PairLoss loss = PairLoss::wrong_direction;
  PairConfidence confidence = PairConfidence::direction_probability;
  // Learn-then-Test starts at the threshold answering this fraction of the calibration pairs
  // (LttOptions::start_fraction): measured on convolution_milo, starting among the few most
  // confident pairs made whole splits answer nothing.
  double start_fraction = 0.1;
};

struct PairDecision {
  BinProbabilities probabilities{};
  int predicted_bin = 4;
  bool faster = true;  // the called direction
  BinRun set;          // conformal set of bins
  double confidence = 0;
  bool defer = true;   // measure the candidate
};

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
