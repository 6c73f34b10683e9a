#pragma once
// Ridge regression on log-runtime: one-hot and log2 features plus their pairwise interactions,
// closed form, regularisation chosen by exact leave-one-out error. Intervals from the
// leave-one-out residuals; p_fail from an L2 logistic regression on the same features.
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

struct RidgeOptions {
  // Candidate penalties, as multiples of the number of training rows; the one with the lowest
  // leave-one-out error is used.
  std::vector<double> lambdas{1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0};
  bool interactions = true;  // pairwise products (and squares) of log2 features
  double logistic_lambda = 1.0;
  FeatureEncoderOptions encoder;
};

class RidgeSurrogate {
 public:
  explicit RidgeSurrogate(RidgeOptions options = {});

  void fit(std::span<const Observation> observations);
  // Refits on everything seen so far plus `observations` (vocabulary kept from fit()).
  void update(std::span<const Observation> observations);
  // Thread-safe. Throws invalid_argument_error before fit().
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> candidates) const;
  [[nodiscard]] std::string kind() const { return "ridge"; }
  void save(ArchiveWriter& w) const;
  static RidgeSurrogate load(ArchiveReader& r);

  [[nodiscard]] bool fitted() const noexcept { return m_state != nullptr; }
  [[nodiscard]] const RidgeOptions& options() const noexcept { return m_options; }
  [[nodiscard]] double chosen_lambda() const;

  struct State;

 private:
  RidgeOptions m_options;
  std::shared_ptr<const State> m_state;  // immutable once fitted: copies share it
};

static_assert(Surrogate<RidgeSurrogate>);
static_assert(PersistentSurrogate<RidgeSurrogate>);

}  // namespace gpuforecast
