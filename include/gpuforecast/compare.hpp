#pragma once
// Pairs with a Model: is each candidate faster than a reference, by how much, and may that
// answer be trusted without measuring.
//
//   auto model = gpuforecast::load("model.gfm");
//   auto pairs = gpuforecast::calibrate_pairs(model, held_out);  // measured, not trained on
//   for (const auto& c : gpuforecast::compare(model, pairs, parent, children))
//     if (c.decision.defer) measure(...); else use(c.decision.faster, c.decision.set);
//
// The bin distribution of a pair comes from the model's forecasts of both points
// (pair_bin_probabilities); the conformal bin sets and the deferral rule are those of
// calibration/pairwise_selective.hpp, fitted on pairs drawn from the calibration observations.
// compare() checks the reference and every candidate as forecast() does.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/calibration/candidate_pairs.hpp"
#include "gpuforecast/calibration/pairwise_selective.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/export.hpp"
#include "gpuforecast/forecast.hpp"

namespace gpuforecast GPUFORECAST_API {

struct PairCalibrationOptions {
  PairwiseOptions selective;            // alpha, delta, loss and confidence of the rule
  PairKind kind = PairKind::neighbour;  // calibrate on pairs like those asked about: a search's children
  std::size_t pairs = 2000;             // at most, over all spaces of the observations
  // Pairs that share no point: the binomial test behind the guarantee assumes independent losses.
  bool disjoint = true;
  std::uint64_t seed = 0;
};

// Fits the bin sets and the deferral rule on pairs of `calibration`'s successful measurements,
// drawn within each space (kernel, device, problem size). Throws invalid_argument_error when
// fewer than two pairs can be drawn; invalid_configuration_error for an observation the model's
// check refuses (naming its row in `calibration`).
[[nodiscard]] PairwiseSelector calibrate_pairs(const Model& model, std::span<const Observation> calibration,
                                               const PairCalibrationOptions& options = {});

struct Comparison {
  PairDecision decision;       // bins, called direction, bin set, defer
  std::string extrapolation;   // what the candidate (or the reference) extrapolates; "" if nothing
};

// Each candidate against `reference`. Throws invalid_configuration_error naming the candidate's
// row (or "the reference"), as forecast() does; with `space`, every configuration must lie in it.
[[nodiscard]] std::vector<Comparison> compare(const Model& model, const PairwiseSelector& selector,
                                              const Candidate& reference, std::span<const Candidate> candidates,
                                              const TuningSpace* space = nullptr);

}  // namespace gpuforecast
