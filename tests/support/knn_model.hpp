#pragma once
// A model file as a user has one: a k-NN surrogate (fast to fit) trained on the successful
// measurements of convolution_milo A100, written with save_surrogate and read back with load().
// For tests of what a loaded Model does; built once per test program.
#include "data/temp_dir.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/forecast.hpp"
#include "surrogate/knn.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "support/data.hpp"

namespace gpuforecast::test {

// The successful measurements of one shared space.
inline std::vector<Observation> successful_observations(const std::string& kernel, const std::string& device) {
  const SpaceData space = load_space(cache_file(kernel, device).string());
  std::vector<Observation> ok;
  for (const auto& o : space.observations)
    if (o.measurement.ok()) ok.push_back(o);
  return ok;
}

inline const Model& convolution_knn_model() {
  static const TempDir dir;
  static const Model m = [] {
    const auto ok = successful_observations("convolution_milo", "A100");
    KnnSurrogate knn;
    knn.fit(ok);
    const auto path = (dir.path() / "knn.gfm").string();
    save_surrogate(path, AnySurrogate(std::move(knn)), TrainingSummary::of(ok));
    return load(path);
  }();
  return m;
}

}  // namespace gpuforecast::test
