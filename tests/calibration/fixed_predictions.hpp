#pragma once
// Real-data fixture for the calibration tests: one cheap surrogate fitted once on a seeded
// fraction of a real space, and its fixed forecasts of every other valid configuration. The
// calibration/test splits are then drawn from those held-out points, so 100 splits cost 100
// calibrations, not 100 trainings.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "surrogate/knn.hpp"
#include "support/data.hpp"

namespace gpuforecast::test {

struct HeldOut {
  std::string label;
  std::vector<Candidate> candidates;
  std::vector<Forecast> forecasts;
  std::vector<double> runtimes_ms;
};

inline HeldOut fixed_predictions(const std::string& kernel, const std::string& device, double train_fraction,
                                 std::uint64_t seed) {
  const SpaceData space = load_space(cache_file(kernel, device).string());
  std::vector<Observation> ok;
  for (const auto& o : space.observations)
    if (o.measurement.ok() && o.measurement.median_ms > 0) ok.push_back(o);
  std::mt19937_64 rng(seed);
  std::shuffle(ok.begin(), ok.end(), rng);
  const auto n_train = static_cast<std::size_t>(train_fraction * static_cast<double>(ok.size()));
  KnnOptions ko;
  ko.seed = seed;
  KnnSurrogate knn(ko);
  knn.fit(std::span<const Observation>(ok.data(), n_train));
  HeldOut h;
  h.label = kernel + "@" + device;
  for (std::size_t i = n_train; i < ok.size(); ++i) {
    h.candidates.push_back(ok[i].candidate);
    h.runtimes_ms.push_back(ok[i].measurement.median_ms);
  }
  h.forecasts = knn.predict(h.candidates);
  return h;
}

}  // namespace gpuforecast::test
