#pragma once
// Random forest (Breiman; SMAC's surrogate) on the tree features of the encoder: bootstrapped
// regression trees grown to single-row leaves, each split chosen among a random share of the
// columns. The forecast is the trees' mean normalised log-runtime; `spread` is the trees'
// standard deviation, the model's own uncertainty, which is what an optimistic search ranks by
// (few measurements leave whole regions where the trees disagree); the 90% interval adds the
// out-of-bag residual variance to it. p_fail comes from a smaller forest on the failure flag.
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

struct RandomForestOptions {
  std::size_t trees = 100;
  std::size_t failure_trees = 30;  // grown only when some training rows failed
  double feature_fraction = 0.7;   // share of the columns a split may choose from
  std::size_t min_leaf = 1;        // rows per leaf at least
  std::size_t max_depth = 40;
  // Rows drawn (with replacement) per tree; 0: as many as there are. Bounds the cost on large
  // training sets, where a tree of every row would take seconds.
  std::size_t max_samples = 0;
  std::uint64_t seed = 0;
  FeatureEncoderOptions encoder;
};

class RandomForestSurrogate {
 public:
  // Throws invalid_argument_error for zero trees or a feature_fraction outside (0, 1]; fit()
  // throws it when no observation succeeded.
  explicit RandomForestSurrogate(RandomForestOptions options = {});

  void fit(std::span<const Observation> observations);
  void update(std::span<const Observation> observations);  // refits with the new rows
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> candidates) const;  // thread-safe
  [[nodiscard]] std::string kind() const { return "forest"; }
  void save(ArchiveWriter& w) const;
  static RandomForestSurrogate load(ArchiveReader& r);

  [[nodiscard]] bool fitted() const noexcept { return m_state != nullptr; }
  [[nodiscard]] const RandomForestOptions& options() const noexcept { return m_options; }

  struct State;

 private:
  RandomForestOptions m_options;
  std::shared_ptr<const State> m_state;
};

static_assert(Surrogate<RandomForestSurrogate>);
static_assert(PersistentSurrogate<RandomForestSurrogate>);

}  // namespace gpuforecast
