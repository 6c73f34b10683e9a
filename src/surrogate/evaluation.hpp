#pragma once
// The evaluation protocols of issue 4, shared by `gpuforecast eval` and benchmarks/:
// interpolation inside one space, transfer to an unseen device, transfer to an unseen kernel.
// Training sets hold failed observations too (they teach p_fail); metrics are computed on the
// successful observations of the test part.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "surrogate/metrics.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct EvaluationRun {
  std::string protocol;   // "interpolate", "transfer-device", "transfer-kernel"
  std::string surrogate;  // name given to the factory
  std::string target;     // space label, "kernel@device"
  std::uint64_t seed = 0;
  double train_fraction = 0;        // interpolate
  std::size_t target_samples = 0;   // transfer: points of the target space in training
  std::size_t train_count = 0, test_count = 0;
  ForecastScores scores;
  double fit_seconds = 0, predict_seconds = 0;
};

using SurrogateFactory = std::function<AnySurrogate(std::uint64_t seed)>;

[[nodiscard]] std::string space_label(const SpaceData& space);

// The data of one run: training observations (failed ones included) and the successful test ones.
struct EvaluationSplit {
  std::vector<Observation> train;
  std::vector<Observation> test;
  [[nodiscard]] std::vector<Candidate> test_candidates() const;
  [[nodiscard]] std::vector<double> test_times() const;
};
// A seeded random `train_fraction` of the space (rounded, at least 2) for training; the rest tests.
[[nodiscard]] EvaluationSplit interpolation_split(const SpaceData& space, double train_fraction, std::uint64_t seed);
// Everything of `train` (except `target` itself if listed) plus `target_samples` seeded random
// observations of `target`; the rest of `target` tests.
[[nodiscard]] EvaluationSplit transfer_split(std::span<const SpaceData* const> train, const SpaceData& target,
                                             std::size_t target_samples, std::uint64_t seed);
// Fits a fresh surrogate on split.train, forecasts split.test, scores (fills the counts, times
// and scores of `run`, the rest is the caller's).
void evaluate_split(EvaluationRun& run, const EvaluationSplit& split, const SurrogateFactory& make);

// Trains on a seeded random `train_fraction` of the space's observations, tests on the rest.
[[nodiscard]] EvaluationRun evaluate_interpolation(const SpaceData& space, const std::string& surrogate,
                                                   const SurrogateFactory& make, double train_fraction, std::uint64_t seed);

// Trains on every observation of `train` plus `target_samples` seeded random observations of
// `target`, tests on the rest of `target`. `protocol` labels the run ("transfer-device" or
// "transfer-kernel": the mechanics are the same, the choice of spaces differs).
[[nodiscard]] EvaluationRun evaluate_transfer(std::span<const SpaceData* const> train, const SpaceData& target,
                                              std::size_t target_samples, const std::string& surrogate,
                                              const SurrogateFactory& make, std::uint64_t seed,
                                              const std::string& protocol);

// Mean of each metric over runs (counts summed, fractions and sample sizes from the first run).
[[nodiscard]] EvaluationRun mean_run(std::span<const EvaluationRun> runs);

}  // namespace gpuforecast
