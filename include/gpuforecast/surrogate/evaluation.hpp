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
#include "gpuforecast/surrogate/metrics.hpp"

namespace gpuforecast {

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
