#pragma once
// Scores pairwise bin forecasts (pairwise_selective.hpp) on pairs with known true bins: the
// forecast quality of the bins and the direction, the majority-class baseline beside them, and
// the selective layer checked over many random calibration/test splits of the pairs (answered
// fraction, risk among answered pairs, how often that risk exceeded alpha). Shared by
// `gpuforecast eval --protocol pairs`, benchmarks/pairs and the tests.
#include <cstdint>
#include <span>
#include <vector>

#include "calibration/candidate_pairs.hpp"
#include "calibration/pairwise_selective.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct PairEvaluationOptions {
  double alpha = 0.1;
  double delta = 0.1;
  std::size_t splits = 20;            // random calibration/test splits of the pairs
  double calibration_fraction = 0.5;  // of the pairs, per split
  std::uint64_t seed = 0;             // split s shuffles with seed + s
  double start_fraction = 0.1;        // PairwiseOptions::start_fraction of every rule
  // The (loss, confidence) rules checked; empty: every loss with every confidence.
  std::vector<PairwiseOptions> rules;
};

// One deferral rule over the splits.
struct PairRuleSummary {
  PairLoss loss = PairLoss::wrong_direction;
  PairConfidence confidence = PairConfidence::direction_probability;
  double answered = 0;         // mean over splits of the answered fraction of test pairs
  double answered_min = 0, answered_max = 0;
  double risk_answered = 0;    // pooled over splits: losses / answered test pairs (0 when none)
  std::size_t violations = 0;  // splits whose test risk among answered pairs exceeded alpha
  double aurc = 0;             // on all pairs
  double risk_all = 0;         // mean loss if every pair were answered
  // With a population (PairPopulation): the splits whose realised risk there exceeded alpha, and
  // that risk pooled over splits (losses / answered population pairs).
  std::size_t population_violations = 0;
  double population_risk = 0;
  double population_answered = 0;  // answered population pairs, summed over splits (the risk's weight)
};

struct PairEvaluation {
  std::size_t pairs = 0;
  std::size_t splits = 0;
  double alpha = 0.1, delta = 0.1;
  double exact = 0;               // most probable bin is the true bin
  double within_one = 0;
  double direction_accuracy = 0;  // called direction is the true one
  double brier = 0, crps = 0, ece = 0;
  double majority_exact = 0;      // accuracy of always answering the most frequent true bin
  double majority_direction = 0;  // of always answering the more frequent direction
  // Accuracy among the most confident 50% / 80% of pairs: exact bin by top-bin probability,
  // direction by direction probability.
  double exact_at_50 = 0, exact_at_80 = 0, direction_at_50 = 0, direction_at_80 = 0;
  double set_coverage = 0;   // of the conformal bin sets on test pairs, mean over splits
  double mean_set_size = 0;  // bins per set
  std::size_t population_pairs = 0;  // 0: no population was given
  std::vector<PairRuleSummary> rules;
};

// The population a sample of pairs was drawn from: every pair of its kind, points shared. A test
// half of a few hundred answered pairs misses alpha by its own binomial noise in a good share of
// splits when a rule's true risk sits just under alpha; judged on the population, a split's
// realised risk is what the guarantee is about. Each split's rule is judged on the population
// pairs that share no point with the split's calibration pairs; with measured references (child
// pairs), on those whose candidate is no point of them and whose reference is no candidate of
// them: the children the calibration did not see, with any measured parent (a parent's runtime is
// known, so its pairs share no forecast error through it).
struct PairPopulation {
  std::span<const CandidatePair> sample;  // the pairs being evaluated, as point indices
  std::span<const CandidatePair> pairs;   // the population (or a uniform sample of it), as point indices
  std::span<const BinProbabilities> p;    // per population pair
  std::span<const int> true_bins;         // per population pair
  bool references_measured = false;
};

// The population pairs (indices into q.pairs) a rule calibrated on the sample pairs
// `calibration_pairs` (indices into q.sample) is judged on.
[[nodiscard]] std::vector<std::size_t> population_apart_from(const PairPopulation& q,
                                                             std::span<const std::size_t> calibration_pairs);

// Throws invalid_argument_error for empty or mismatched input, bins outside 1..8, fewer than 2
// pairs, a calibration fraction outside (0, 1) or zero splits.
[[nodiscard]] PairEvaluation evaluate_pairs(std::span<const BinProbabilities> p, std::span<const int> true_bins,
                                            const PairEvaluationOptions& options = {},
                                            const PairPopulation* population = nullptr);

}  // namespace gpuforecast
