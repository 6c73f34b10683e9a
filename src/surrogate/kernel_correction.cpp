#include "kernel_correction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "boosting.hpp"
#include "gpuforecast/core/error.hpp"
#include "tabular.hpp"

namespace gpuforecast::detail {

namespace {

// One member's fit: a few dozen rows train fastest on one thread.
XgboostOptions tree_options(const KernelCorrectionOptions& o, std::uint64_t seed) {
  XgboostOptions p = o.trees;
  p.seed = seed;
  p.threads = 1;
  return p;
}

// The bag's trees fitted to rows x (rows x cols) and targets y: one per member seed.
std::vector<FlatTrees> fit_bag(const std::vector<float>& x, std::size_t cols, const std::vector<float>& y,
                               const KernelCorrectionOptions& o, std::uint64_t seed) {
  const std::vector<double> values(y.begin(), y.end());
  const double low = quantile(values, o.clip_quantile), high = quantile(values, 1 - o.clip_quantile);
  std::vector<float> clipped(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) clipped[i] = static_cast<float>(std::clamp<double>(y[i], low, high));
  std::vector<FlatTrees> bag;
  for (std::size_t m = 0; m < o.members; ++m)
    bag.push_back(boost_flat_trees(x, cols, clipped, tree_options(o, seed * 1000003ULL + 7919ULL * (m + 1)), false));
  return bag;
}

// Out-of-fold forecasts `prior_weight * prior + bag` of the rows idx (in idx's order; fold k holds
// the positions congruent to k).
std::vector<float> out_of_fold(const std::vector<float>& x, std::size_t cols, const std::vector<float>& y,
                               const std::vector<float>& prior, std::span<const std::size_t> idx,
                               double prior_weight, const KernelCorrectionOptions& o, std::uint64_t seed) {
  std::vector<float> oof(idx.size());
  for (std::size_t fold = 0; fold < o.folds; ++fold) {
    std::vector<std::size_t> train_rows, held_rows, held;
    for (std::size_t k = 0; k < idx.size(); ++k) {
      if (k % o.folds == fold) {
        held.push_back(k);
        held_rows.push_back(idx[k]);
      } else {
        train_rows.push_back(idx[k]);
      }
    }
    if (held.empty()) continue;
    std::vector<float> residual;
    for (const auto i : train_rows) residual.push_back(y[i] - static_cast<float>(prior_weight) * prior[i]);
    const auto bag = fit_bag(rows_at<float>(x, cols, train_rows), cols, residual, o, seed + fold);
    const auto added = mean_forecast(bag, rows_at<float>(x, cols, held_rows), held.size());
    for (std::size_t k = 0; k < held.size(); ++k)
      oof[held[k]] = static_cast<float>(prior_weight) * prior[held_rows[k]] + added[k];
  }
  return oof;
}

}  // namespace

std::vector<float> KernelCorrection::inputs(std::span<const double> encoded, std::size_t n, std::size_t dim) const {
  std::vector<float> out(n * columns.size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < columns.size(); ++j)
      out[i * columns.size() + j] = static_cast<float>(encoded[i * dim + columns[j]]);
  return out;
}

void KernelCorrection::apply(std::span<const double> encoded, std::size_t n, std::size_t dim,
                             std::span<float> prior) const {
  const auto added = mean_forecast(trees, inputs(encoded, n, dim), n);
  for (std::size_t i = 0; i < n; ++i) prior[i] = static_cast<float>(prior_weight) * prior[i] + added[i];
}

namespace {

bool varies(std::span<const double> encoded, std::size_t rows, std::size_t dim, std::size_t j) {
  for (std::size_t i = 1; i < rows; ++i)
    if (encoded[i * dim + j] != encoded[j]) return true;
  return false;
}

}  // namespace

KernelCorrection fit_kernel_correction(std::span<const double> encoded, std::size_t dim,
                                       std::span<const std::size_t> columns, const std::vector<float>& y,
                                       const std::vector<float>& unseen_prior, const std::vector<float>& prior,
                                       const KernelCorrectionOptions& o, std::uint64_t seed) {
  const std::size_t n = y.size();
  if (encoded.size() != n * dim || prior.size() != n || unseen_prior.size() != n)
    throw invalid_argument_error("kernel correction: one prior forecast of each kind and one row per observation");
  if (o.folds < 2 || o.prior_weights.empty() || o.members < 1 || o.trees.rounds < 1 ||
      !(o.clip_quantile >= 0 && o.clip_quantile < 0.5))
    throw invalid_argument_error(
        "kernel correction: at least two folds, one prior weight, one member and one round; clip_quantile in [0, 0.5)");
  KernelCorrection c;
  c.rows = n;
  if (n < std::max(o.min_rows, o.folds)) return c;
  for (const auto j : columns)
    if (varies(encoded, n, dim, j)) c.columns.push_back(static_cast<std::uint32_t>(j));
  if (c.columns.empty()) return c;  // nothing tells its observations apart
  const auto x = c.inputs(encoded, n, dim);
  const std::size_t cols = c.columns.size();

  // The rows the choice is made on, in a seeded order that also deals them into folds.
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::mt19937_64 rng(seed ^ 0xc0223c7e0ULL);
  std::shuffle(idx.begin(), idx.end(), rng);
  if (idx.size() > o.max_cv_rows) idx.resize(o.max_cv_rows);

  // Most prior first: a tie keeps more of it.
  std::vector<double> weights = o.prior_weights;
  std::sort(weights.rbegin(), weights.rend());
  double best = std::numeric_limits<double>::infinity();
  std::vector<float> best_oof;
  for (const double a : weights) {
    const auto oof = out_of_fold(x, cols, y, unseen_prior, idx, a, o, seed);
    double sse = 0;
    for (std::size_t k = 0; k < idx.size(); ++k) sse += std::pow(static_cast<double>(y[idx[k]]) - oof[k], 2);
    if (sse < best) {
      best = sse;
      c.prior_weight = a;
      best_oof = oof;
    }
  }
  std::vector<float> residual(n);
  for (std::size_t i = 0; i < n; ++i) residual[i] = y[i] - static_cast<float>(c.prior_weight) * prior[i];
  c.trees = fit_bag(x, cols, residual, o, seed);
  if (idx.size() >= 20) {
    std::vector<double> residuals;
    for (std::size_t k = 0; k < idx.size(); ++k) residuals.push_back(static_cast<double>(y[idx[k]]) - best_oof[k]);
    c.has_interval = true;
    c.q05 = quantile(residuals, 0.05);
    c.q95 = quantile(residuals, 0.95);
  }
  return c;
}

void KernelCorrection::save(ArchiveWriter& w) const {
  w.u64(columns.size());
  for (const auto j : columns) w.u32(j);
  w.f64(prior_weight);
  w.u64(rows);
  w.u32(has_interval ? 1 : 0);
  w.f64(q05);
  w.f64(q95);
  w.u64(trees.size());
  for (const auto& t : trees) t.save(w);
}

KernelCorrection KernelCorrection::load(ArchiveReader& r, std::size_t dim) {
  KernelCorrection c;
  const auto in_range = [&](std::uint32_t j) {
    if (j >= dim) r.fail("kernel correction: an input column out of range");
    return j;
  };
  const auto columns = r.u64();
  if (columns > dim) r.fail("kernel correction: more input columns than the encoder has");
  for (std::uint64_t k = 0; k < columns; ++k) c.columns.push_back(in_range(r.u32()));
  c.prior_weight = r.f64();
  if (!(c.prior_weight >= 0 && c.prior_weight <= 10)) r.fail("kernel correction: implausible prior weight");
  c.rows = r.u64();
  c.has_interval = r.u32() != 0;
  c.q05 = r.f64();
  c.q95 = r.f64();
  const auto count = r.u64();
  if (count > 1000) r.fail("kernel correction: implausible member count");
  for (std::uint64_t m = 0; m < count; ++m) {
    c.trees.push_back(FlatTrees::load(r));
    if (c.trees.back().features() != c.columns.size())
      r.fail("kernel correction: a tree's width differs from its inputs'");
  }
  return c;
}

}  // namespace gpuforecast::detail
