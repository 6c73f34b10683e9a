#pragma once
// A kernel's own correction of a kernel-independent forecast. The kernel-independent prior reads
// only what means the same for every kernel (static features, device, problem), so it cannot tell
// apart configurations the compiler treats alike, and on some kernels it reads the features the
// wrong way round. A correction is a bag of boosted trees on the kernel's parameters (with its
// problem and device), fitted on that kernel's observations to what the prior left over:
//
//     forecast = prior_weight * prior + trees(parameters)
//
// How much of the prior to keep is chosen by k-fold cross-validation on the kernel's observations
// alone (squared error of the normalised log-runtime), so 20 points of a new kernel keep a prior
// that ranks them well and outvote one that does not. Not installed.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "flat_trees.hpp"
#include "gpuforecast/core/archive.hpp"
#include "surrogate/xgboost.hpp"

namespace gpuforecast::detail {

struct KernelCorrectionOptions {
  std::vector<double> prior_weights{0.0, 0.25, 0.5, 1.0};
  std::size_t folds = 5;
  std::size_t min_rows = 8;       // fewer observations keep the prior as it is
  std::size_t max_cv_rows = 600;  // the choice is made on a seeded sample of at most this many rows
  // The bag of boosted trees: XGBoost's own settings (its tree fields; seed and threads are set
  // per fit), averaged over seeds.
  std::size_t members = 3;
  XgboostOptions trees;
  // The trees learn targets clipped to this quantile and its complement: Spearman is what a search
  // needs of them, and on a few dozen points one very slow configuration would otherwise spend
  // the trees on itself. Chosen on convolution_milo and dedispersion_milo at K = 20 (0, 0.1, 0.2:
  // Spearman 0.597/0.616, 0.614/0.627, 0.607/0.652).
  double clip_quantile = 0.2;
};

struct KernelCorrection {
  // The trees' inputs: the encoder columns that vary among the kernel's observations.
  std::vector<std::uint32_t> columns;
  double prior_weight = 1;
  std::vector<FlatTrees> trees;  // a bag; their mean is added (none: the prior as it is)
  // Quantiles of the out-of-fold residuals of the chosen correction (normalised natural log);
  // has_interval false: too few rows, the prior's interval stands.
  bool has_interval = false;
  double q05 = 0, q95 = 0;
  std::size_t rows = 0;  // observations it was chosen and fitted on

  // The trees' inputs of encoded rows (rows x dim).
  [[nodiscard]] std::vector<float> inputs(std::span<const double> encoded, std::size_t rows, std::size_t dim) const;
  // prior[i] becomes the corrected forecast of encoded row i (rows x dim).
  void apply(std::span<const double> encoded, std::size_t rows, std::size_t dim, std::span<float> prior) const;
  void save(ArchiveWriter& w) const;
  static KernelCorrection load(ArchiveReader& r, std::size_t dim);  // dim: the encoder's width
};

// encoded: the kernel's rows (rows x dim, row-major), of which the trees may read `columns`;
// y: their normalised log-runtimes. The prior weight is chosen with `unseen_prior`, the
// forecasts of a prior that never saw the kernel (one that had would look better on these rows
// than on the rest of the kernel); the trees are then fitted to what is left of y after `prior`,
// the forecasts of the prior that will be corrected. Deterministic for a seed.
[[nodiscard]] KernelCorrection fit_kernel_correction(std::span<const double> encoded, std::size_t dim,
                                                     std::span<const std::size_t> columns,
                                                     const std::vector<float>& y,
                                                     const std::vector<float>& unseen_prior,
                                                     const std::vector<float>& prior,
                                                     const KernelCorrectionOptions& options, std::uint64_t seed);

}  // namespace gpuforecast::detail
