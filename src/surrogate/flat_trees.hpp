#pragma once
// Boosted regression trees as flat float32 arrays, for forecasts in microseconds without the
// library that trained them. Every tree is padded to a complete binary tree of one depth D
// (a leaf above depth D becomes splits that always go left, down to copies of its value), so a
// walk is D branch-free steps: i = 2i + 1 + (x[feature[i]] >= threshold[i]). Scoring runs tree
// by tree over blocks of rows, so that one tree's nodes stay in L1 while the rows stream past.
// Not installed.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "gpuforecast/core/archive.hpp"

namespace gpuforecast::detail {

class FlatTrees {
 public:
  // From XGBoost's JSON model (XGBoosterSaveModelToBuffer with {"format": "json"}) of a gbtree with
  // numerical splits. `expect_features`: the model's feature count must match it. Throws
  // error naming what is wrong (categorical splits, a depth above 16, an out-of-range index).
  static FlatTrees from_xgboost_json(std::string_view json, std::size_t expect_features);

  // out[r] = base + the sum of every tree's leaf for row r (rows x features(), row-major).
  void predict(std::span<const float> x, std::size_t rows, std::span<float> out) const;

  [[nodiscard]] std::size_t trees() const noexcept { return m_trees; }
  [[nodiscard]] int depth() const noexcept { return m_depth; }
  [[nodiscard]] std::size_t features() const noexcept { return m_features; }
  [[nodiscard]] float base() const noexcept { return m_base; }
  [[nodiscard]] std::size_t bytes() const noexcept;

  void save(ArchiveWriter& w) const;
  static FlatTrees load(ArchiveReader& r);

 private:
  [[nodiscard]] std::size_t internal_per_tree() const noexcept { return (std::size_t{1} << m_depth) - 1; }
  [[nodiscard]] std::size_t leaves_per_tree() const noexcept { return std::size_t{1} << m_depth; }

  std::size_t m_trees = 0;
  std::size_t m_features = 0;
  int m_depth = 0;
  float m_base = 0;
  // A split's feature and threshold side by side: one load brings both (the walk is bound by
  // its loads). threshold +inf: always left.
  struct Split {
    std::uint32_t feature;
    float threshold;
  };
  std::vector<Split> m_split;  // trees x internal_per_tree()
  std::vector<float> m_leaf;   // trees x leaves_per_tree()
};

// The mean of several models' forecasts of rows x (rows x their width): a bag's forecast.
[[nodiscard]] std::vector<float> mean_forecast(std::span<const FlatTrees> models, std::span<const float> x,
                                               std::size_t rows);

}  // namespace gpuforecast::detail
