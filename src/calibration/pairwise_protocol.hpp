#pragma once
// The pairs protocol (`gpuforecast eval --protocol pairs`, benchmarks/pairs): train a surrogate
// on a seeded fraction of one space, forecast the rest, draw (reference, candidate) pairs of
// each kind among the held-out points, and score the pairwise selective layer on them
// (pairwise_evaluation.hpp). One fit serves every pair kind.
#include <cstdint>
#include <string>
#include <vector>

#include "calibration/pairwise_evaluation.hpp"
#include "calibration/view_models.hpp"
#include "surrogate/evaluation.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct PairProtocolOptions {
  double train_fraction = 0.1;
  std::vector<PairKind> kinds{PairKind::random, PairKind::neighbour, PairKind::child};
  std::size_t pairs = 2000;  // per kind (fewer when the held-out points have fewer)
  // Pairs share no point (candidate_pairs.hpp): the deferral guarantee assumes independent
  // losses. Off, pairs may share points: more of them, but the guarantee is checked on
  // dependent data and fails more often than delta.
  bool disjoint = true;
  // Models of other GPUs of the space's kernel (view_models.hpp; they must outlive the call).
  // With any, the forecaster is those views stacked by the training fraction and corrected by the
  // surrogate, which learns measured / stacked on it (stacked_views_surrogate.hpp): a new GPU
  // with a fraction of its space measured and the other GPUs' models to lean on.
  std::vector<const ViewModel*> views;
  // Each split's rule is also judged on a population (pairwise_evaluation.hpp): for child pairs
  // every child pair of the space; for random and neighbour pairs, whose population grows with
  // the square of the held-out points or nearly, this many of them drawn uniformly (all when fewer).
  std::size_t population_pairs = 50000;
  PairEvaluationOptions evaluation;
};

struct PairProtocolRun {
  std::string surrogate;
  std::string target;  // space label
  PairKind kind = PairKind::random;
  std::uint64_t seed = 0;
  std::size_t train_count = 0, test_count = 0;
  double fit_seconds = 0;
  PairEvaluation evaluation;
};

// The seed of the population of the k-th kind of random or neighbour pairs.
[[nodiscard]] constexpr std::uint64_t population_draw_seed(std::uint64_t seed, std::size_t kind_index) noexcept {
  return (seed + 1) * 0x9e3779b97f4a7c15ULL + kind_index;
}

// The seed of the pair draw of the k-th kind: shared with other forecasters of the protocol
// (the LLM's), so that all of them are asked the same pairs.
[[nodiscard]] constexpr std::uint64_t pair_draw_seed(std::uint64_t seed, std::size_t kind_index) noexcept {
  return seed * 7919 + kind_index;
}

// One run per kind in options.kinds, all from one fit with `seed` (training split, surrogate,
// pair draws; the calibration/test splits of the pairs use options.evaluation.seed).
[[nodiscard]] std::vector<PairProtocolRun> evaluate_pairs_interpolation(const SpaceData& space,
                                                                        const std::string& surrogate,
                                                                        const SurrogateFactory& make,
                                                                        const PairProtocolOptions& options,
                                                                        std::uint64_t seed);

// Means of the runs' metrics (violations summed, answered_min/max the extremes over runs); the
// risks among answered pairs pooled, each run weighted by the pairs it answered.
[[nodiscard]] PairProtocolRun mean_pair_run(std::span<const PairProtocolRun> runs);

}  // namespace gpuforecast
