#pragma once
// Gaussian-process regression (Eigen): the model family of Kernel Tuner's Bayesian optimisation.
// Inputs are the standardised log2 / one-hot features the k-NN uses; the target is normalised
// log-runtime. Kernel: Matern 5/2 with one length scale per input (ARD), a signal and a noise
// variance, fitted by maximising the log marginal likelihood (Adam on log hyper-parameters, weak
// log-normal priors) on a seeded subset. The posterior mean uses up to `max_points` ok rows.
// Where trees are piecewise constant, a GP interpolates smoothly between few measurements.
// Interval: quantiles of leave-one-out residuals (closed form); p_fail: L2 logistic regression.
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

struct GaussianProcessOptions {
  std::size_t max_points = 2000;    // ok rows in the posterior (a seeded random subset beyond)
  std::size_t hyper_points = 400;   // rows the marginal likelihood is maximised on
  int iterations = 120;             // Adam steps on the log hyper-parameters
  double learning_rate = 0.05;
  std::uint64_t seed = 0;
  FeatureEncoderOptions encoder;
};

class GaussianProcessSurrogate {
 public:
  explicit GaussianProcessSurrogate(GaussianProcessOptions options = {});

  void fit(std::span<const Observation> observations);
  void update(std::span<const Observation> observations);  // refits with the new rows
  [[nodiscard]] std::vector<Forecast> predict(std::span<const Candidate> candidates) const;  // thread-safe
  [[nodiscard]] std::string kind() const { return "gp"; }
  void save(ArchiveWriter& w) const;
  static GaussianProcessSurrogate load(ArchiveReader& r);

  [[nodiscard]] bool fitted() const noexcept { return m_state != nullptr; }
  [[nodiscard]] const GaussianProcessOptions& options() const noexcept { return m_options; }
  // Fitted hyper-parameters: one length scale per input column, signal and noise variance.
  [[nodiscard]] std::vector<double> length_scales() const;
  [[nodiscard]] double signal_variance() const;
  [[nodiscard]] double noise_variance() const;

  struct State;

 private:
  GaussianProcessOptions m_options;
  std::shared_ptr<const State> m_state;
};

static_assert(Surrogate<GaussianProcessSurrogate>);
static_assert(PersistentSurrogate<GaussianProcessSurrogate>);

}  // namespace gpuforecast
