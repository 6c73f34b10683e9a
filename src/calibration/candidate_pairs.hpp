#pragma once
// Drawing (reference, candidate) pairs of points of one space, of each PairKind
// (gpuforecast/calibration/pairs.hpp), the unit of pairwise selective prediction.
// Disjoint pairs share no point. Pairs that share a point have dependent losses (one badly
// forecast point spoils all its pairs), which the binomial test of Learn-then-Test does not
// allow for: the guarantee is measured on disjoint pairs.
#include <cstdint>
#include <span>
#include <vector>

#include "gpuforecast/calibration/pairs.hpp"
#include "gpuforecast/core/config.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct CandidatePair {
  std::size_t reference = 0;  // indices into the caller's points
  std::size_t candidate = 0;
  friend bool operator==(const CandidatePair&, const CandidatePair&) = default;
};

// `count` distinct ordered pairs of distinct indices below n, drawn uniformly with `seed`; all
// n(n-1) of them (shuffled) when there are no more than `count`.
// disjoint: a uniformly random matching instead, at most n / 2 pairs.
[[nodiscard]] std::vector<CandidatePair> random_pairs(std::size_t n, std::size_t count, std::uint64_t seed,
                                                      bool disjoint = false);

// `count` distinct ordered pairs (i, j) whose configs differ in exactly one parameter value,
// drawn uniformly among all such pairs with `seed`; all of them (shuffled) when there are no
// more than `count`. Configs must share their parameter list (throws invalid_argument_error).
// disjoint: neighbour pairs taken in random order while both points are still unused, each
// pair's direction drawn at random (a random maximal matching of the neighbour graph).
[[nodiscard]] std::vector<CandidatePair> neighbour_pairs(std::span<const Config> configs, std::size_t count,
                                                         std::uint64_t seed, bool disjoint = false);

// Neighbour pairs (i, j) with measured[i] and not measured[j], each j at most once (a parent
// may have several children: their losses share only the parent, whose runtime the model
// knows), `count` at most, drawn uniformly with `seed`.
[[nodiscard]] std::vector<CandidatePair> child_pairs(std::span<const Config> configs, std::span<const char> measured,
                                                     std::size_t count, std::uint64_t seed);

// Every neighbour pair (i, j) with measured[i] and not measured[j], a child as often as it has
// measured neighbours, in an order shuffled with `seed`: the population child_pairs samples.
[[nodiscard]] std::vector<CandidatePair> all_child_pairs(std::span<const Config> configs, std::span<const char> measured,
                                                         std::uint64_t seed);

// The first pair of each child in `all`'s order (all_child_pairs), `count` at most: child_pairs
// from a population already drawn.
[[nodiscard]] std::vector<CandidatePair> one_pair_per_child(std::span<const CandidatePair> all, std::size_t count);

// random or neighbour (child pairs need to know what is measured: child_pairs).
[[nodiscard]] std::vector<CandidatePair> sample_pairs(PairKind kind, std::span<const Config> configs,
                                                      std::size_t count, std::uint64_t seed, bool disjoint = false);

}  // namespace gpuforecast
