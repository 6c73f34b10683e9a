#pragma once
// Gradient-boosted trees through XGBoost's C API: the cost model of TVM's Ansor/MetaSchedule,
// the baseline to beat. Regression on normalised log-runtime; a second booster (binary:logistic)
// for p_fail when training holds failures; the interval from the residuals of a seeded held-out
// fifth. Built when XGBoost is found (GPUFORECAST_HAVE_XGBOOST); the class exists either way and
// throws invalid_argument_error from fit()/load() when it was not built in.
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

struct XgboostOptions {
  int rounds = 500;
  double eta = 0.05;
  int max_depth = 7;
  double min_child_weight = 1.0;
  double subsample = 0.8;
  double colsample_bytree = 0.9;
  double lambda = 1.0;
  int failure_rounds = 100;
  // Also feed the products of every pair of numeric parameters (threads per block, tile areas...):
  // trees approximate a product with many splits, which few training points cannot afford.
  bool pair_products = false;
  double holdout_fraction = 0.2;  // for the interval; 0: quantiles of training residuals
  std::uint64_t seed = 0;
  int threads = 0;  // 0: every core (std::thread::hardware_concurrency())
  FeatureEncoderOptions encoder;
};

// Whether this build has XGBoost.
[[nodiscard]] bool xgboost_available() noexcept;

class XgboostSurrogate {
 public:
  explicit XgboostSurrogate(XgboostOptions options = {});

  void fit(std::span<const Observation> observations);
  void update(std::span<const Observation> observations);  // refits with the new rows
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> candidates) const;  // thread-safe
  [[nodiscard]] std::string kind() const { return "xgboost"; }
  void save(ArchiveWriter& w) const;
  static XgboostSurrogate load(ArchiveReader& r);

  [[nodiscard]] bool fitted() const noexcept { return m_state != nullptr; }
  [[nodiscard]] const XgboostOptions& options() const noexcept { return m_options; }

  struct State;

 private:
  XgboostOptions m_options;
  std::shared_ptr<const State> m_state;
};

static_assert(Surrogate<XgboostSurrogate>);
static_assert(PersistentSurrogate<XgboostSurrogate>);

}  // namespace gpuforecast
