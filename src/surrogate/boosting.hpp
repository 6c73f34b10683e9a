#pragma once
// Training boosted trees into FlatTrees. XGBoost fits them (when this build has it); what it
// fitted is then copied into flat arrays, so forecasting and loading never need XGBoost.
// Not installed.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flat_trees.hpp"
#include "surrogate/xgboost.hpp"

namespace gpuforecast::detail {

// x: rows x cols row-major, y: targets (regression, `options.rounds` trees) or 0/1 labels
// (classifier: binary:logistic with `options.failure_rounds` trees; the flat trees give the
// margin). The tree settings of `options` apply; its interval, product and encoder fields do
// not. Throws invalid_argument_error without XGBoost.
// `xgboost_predictions`, when given, receives XGBoost's own predictions of x (probabilities for a
// classifier): what tests hold the flat copy to. `weights`: one per row (none: all 1).
[[nodiscard]] FlatTrees boost_flat_trees(const std::vector<float>& x, std::size_t cols, const std::vector<float>& y,
                                         const XgboostOptions& options, bool classifier,
                                         std::vector<double>* xgboost_predictions = nullptr,
                                         const std::vector<float>* weights = nullptr);

}  // namespace gpuforecast::detail
