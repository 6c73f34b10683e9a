#pragma once
// What a pairwise decision is: "is the candidate faster than the reference, by how much, and
// may that answer be used without measuring". The kinds of pairs a rule is calibrated on, the
// rule's options (its loss and its confidence score) and the decision on one pair; compare.hpp
// fits the rule and applies it.
#include <string_view>

#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Which (reference, candidate) pairs: always reported side by side, as they are different questions.
//   random     any two distinct points (usually far apart: easy to order),
//   neighbour  the candidate differs from the reference in exactly one parameter (a child
//              against its parent, both unmeasured: much harder),
//   child      a neighbour pair whose reference is measured (its runtime known: a point the model
//              trained on, a search's parent) and whose candidate is not: exactly what a search
//              asks about a child of a measured parent.
enum class PairKind { random, neighbour, child };

[[nodiscard]] std::string_view to_string(PairKind k) noexcept;
// "random" | "neighbour" (also "neighbor") | "child"; throws invalid_argument_error otherwise.
[[nodiscard]] PairKind parse_pair_kind(std::string_view s);

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

struct PairwiseOptions {
  double alpha = 0.1;  // miscoverage of the bin sets and the allowed risk among answered pairs
  double delta = 0.1;  // probability that the deferral guarantee fails
  PairLoss loss = PairLoss::wrong_direction;
  PairConfidence confidence = PairConfidence::direction_probability;
  // Learn-then-Test starts at the threshold answering this fraction of the calibration pairs:
  // measured on convolution_milo, starting among the few most confident pairs made whole splits
  // answer nothing.
  double start_fraction = 0.1;
};

// A run of adjacent speedup bins (e.g. 3..5): the conformal set of a pair is never {2, 6}.
struct BinRun {
  int low = 1;   // first bin, 1..8
  int high = 0;  // last bin; high < low: the empty set
  [[nodiscard]] bool empty() const noexcept { return high < low; }
  [[nodiscard]] int size() const noexcept { return empty() ? 0 : high - low + 1; }
  [[nodiscard]] bool contains(int bin) const noexcept { return bin >= low && bin <= high; }
};

struct PairDecision {
  BinProbabilities probabilities{};
  int predicted_bin = 4;
  bool faster = true;  // the called direction
  BinRun set;          // conformal set of bins
  double confidence = 0;
  bool defer = true;   // measure the candidate
};

}  // namespace gpuforecast
