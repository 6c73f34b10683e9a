#pragma once
// k-nearest neighbours on standardised log2 features (Eigen): the forecast is the
// distance-weighted mean of the neighbours' normalised log-runtimes; the interval scales with the
// neighbours' spread (calibrated on leave-one-out residuals); p_fail is the weighted failure
// rate of the nearest observations, failed ones included.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/core/archive.hpp"
#include "surrogate/feature_encoder.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct KnnOptions {
  // Candidate neighbour counts; the one with the lowest leave-one-out error on (a sample of)
  // the training rows is used.
  std::vector<int> ks{1, 2, 3, 5, 8, 12};
  std::size_t selection_rows = 1500;  // leave-one-out sample size for choosing k
  std::uint64_t seed = 0;
  FeatureEncoderOptions encoder;
};

class KnnSurrogate {
 public:
  explicit KnnSurrogate(KnnOptions options = {});

  void fit(std::span<const Observation> observations);
  void update(std::span<const Observation> observations);  // refits with the new rows
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> candidates) const;  // thread-safe
  [[nodiscard]] std::string kind() const { return "knn"; }
  void save(ArchiveWriter& w) const;
  static KnnSurrogate load(ArchiveReader& r);

  [[nodiscard]] bool fitted() const noexcept { return m_state != nullptr; }
  [[nodiscard]] const KnnOptions& options() const noexcept { return m_options; }
  [[nodiscard]] int chosen_k() const;

  struct State;

 private:
  KnnOptions m_options;
  std::shared_ptr<const State> m_state;
};

static_assert(Surrogate<KnnSurrogate>);
static_assert(PersistentSurrogate<KnnSurrogate>);

}  // namespace gpuforecast
