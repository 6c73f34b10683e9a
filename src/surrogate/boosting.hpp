#pragma once
// Training boosted trees into FlatTrees. XGBoost fits them (when this build has it); what it
// fitted is then copied into flat arrays, so forecasting and loading never need XGBoost.
// Not installed.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flat_trees.hpp"

namespace gpuforecast::detail {

struct BoostingParams {
  int rounds = 500;
  double eta = 0.05;
  int max_depth = 7;
  double min_child_weight = 1.0;
  double subsample = 0.8;
  double colsample_bytree = 0.9;
  double lambda = 1.0;
  std::uint64_t seed = 0;
  int threads = 0;  // 0: XGBoost's rule of xgboost.cpp (one thread for small data)
};

// Whether this build can train (XGBoost present).
[[nodiscard]] bool can_boost() noexcept;

// x: rows x cols row-major, y: targets (regression) or 0/1 labels (classifier: binary:logistic,
// the trees then give the margin). Throws invalid_argument_error without XGBoost.
// `xgboost_predictions`, when given, receives XGBoost's own predictions of x (probabilities for a
// classifier): what tests hold the flat copy to. `weights`: one per row (none: all 1).
[[nodiscard]] FlatTrees boost_flat_trees(const std::vector<float>& x, std::size_t cols, const std::vector<float>& y,
                                         const BoostingParams& params, bool classifier,
                                         std::vector<double>* xgboost_predictions = nullptr,
                                         const std::vector<float>* weights = nullptr);

}  // namespace gpuforecast::detail
