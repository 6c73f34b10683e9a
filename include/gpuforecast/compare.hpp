#pragma once
// Pairs with a Model: is each candidate faster than a reference, by how much, and may that
// answer be trusted without measuring.
//
//   auto model = gpuforecast::load("model.gfm");
//   auto pairs = gpuforecast::calibrate_pairs(model, held_out);  // measured, not trained on
//   for (const auto& c : gpuforecast::compare(model, pairs, parent, children))
//     if (c.decision.defer) measure(...); else use(c.decision.faster, c.decision.set);
//
// The bin distribution of a pair comes from the model's forecasts of both points (each
// log-runtime normal with the forecast's median and spread); the rule is an ordinal conformal
// set of bins and a Learn-then-Test threshold on the pair's confidence, fitted on pairs drawn
// from the calibration observations (docs/pairs.md). compare() checks the reference and every
// candidate as forecast() does.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/calibration/pairs.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/export.hpp"
#include "gpuforecast/forecast.hpp"

namespace gpuforecast GPUFORECAST_API {

struct PairCalibrationOptions {
  PairwiseOptions selective;  // alpha, delta, loss and confidence of the rule
  // Calibrate on pairs like those asked about. neighbour: two points one parameter apart, both
  // forecast (compare() without a reference runtime). child: each calibration point against one
  // of its neighbours among the calibration points, that neighbour at its measured runtime: a
  // measured parent and its child, as compare() with the reference's runtime asks (each point is
  // a child once; `disjoint` does not apply, since a parent's known runtime adds no error).
  PairKind kind = PairKind::neighbour;
  std::size_t pairs = 2000;             // at most, over all spaces of the observations
  // Pairs that share no point: the binomial test behind the guarantee assumes independent losses.
  bool disjoint = true;
  std::uint64_t seed = 0;
};

// The fitted rule: bin sets at 1 - alpha, and the confidence a pair needs to be answered without
// measuring. Immutable and cheap to copy (shared).
class PairCalibration {
 public:
  PairCalibration() = default;  // empty: compare() throws
  [[nodiscard]] bool empty() const noexcept { return !m_impl; }
  [[nodiscard]] const PairwiseOptions& options() const;
  // The pairs it was calibrated on: child pairs answer compare() with a parent's runtime, the
  // other kinds compare() with a forecast reference.
  [[nodiscard]] PairKind kind() const;
  // A pair is answered without measuring iff its confidence >= threshold (+inf: none is).
  [[nodiscard]] double threshold() const;
  [[nodiscard]] std::size_t calibration_pairs() const;
  [[nodiscard]] double answered_fraction() const;  // of the calibration pairs
  // 1 - delta upper bound of the loss among the answered calibration pairs.
  [[nodiscard]] double risk_upper_bound() const;

  struct Impl;  // the fitted selector (src/api)
  explicit PairCalibration(std::shared_ptr<const Impl> impl) : m_impl(std::move(impl)) {}
  [[nodiscard]] const Impl& impl() const;

 private:
  std::shared_ptr<const Impl> m_impl;
};

// Fits the bin sets and the deferral rule on pairs of `calibration`'s successful measurements,
// drawn within each space (kernel, device, problem size). Throws invalid_argument_error when
// fewer than two pairs can be drawn; invalid_configuration_error for an observation the model's
// check refuses (naming its row in `calibration`).
[[nodiscard]] PairCalibration calibrate_pairs(const Model& model, std::span<const Observation> calibration,
                                              const PairCalibrationOptions& options = {});

struct Comparison {
  PairDecision decision;       // bins, called direction, bin set, defer
  std::string extrapolation;   // what the candidate (or the reference) extrapolates; "" if nothing
};

// Each candidate against `reference`. Throws invalid_configuration_error naming the candidate's
// row (or "the reference"), as forecast() does; with `space`, every configuration must lie in it.
[[nodiscard]] std::vector<Comparison> compare(const Model& model, const PairCalibration& pairs,
                                              const Candidate& reference, std::span<const Candidate> candidates,
                                              const TuningSpace* space = nullptr);
// The same against a reference whose runtime was measured (a search's parent or incumbent): that
// runtime stands in for its forecast. Calibrate the rule on child pairs (PairKind::child) for
// this question. Throws invalid_argument_error unless `reference_ms` is finite and positive.
// Either compare() refuses a rule calibrated for the other question (invalid_argument_error).
[[nodiscard]] std::vector<Comparison> compare(const Model& model, const PairCalibration& pairs,
                                              const Candidate& reference, double reference_ms,
                                              std::span<const Candidate> candidates,
                                              const TuningSpace* space = nullptr);

}  // namespace gpuforecast
