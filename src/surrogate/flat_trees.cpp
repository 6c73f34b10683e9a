#include "flat_trees.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast::detail {

namespace {

constexpr int max_depth = 16;
constexpr float always_left = std::numeric_limits<float>::infinity();

[[noreturn]] void bad_model(const std::string& why) { throw error("flat trees: the XGBoost model " + why); }

// One tree as XGBoost writes it: parallel arrays indexed by node id, -1 children at leaves.
struct JsonTree {
  std::vector<int> left, right;
  std::vector<std::uint32_t> feature;
  std::vector<float> condition;  // the threshold at a split, the leaf value at a leaf

  int depth_below(int node, int level) const {
    if (level > max_depth) bad_model(fmt::format("has a tree deeper than {} levels", max_depth));
    if (left[static_cast<std::size_t>(node)] < 0) return 0;
    return 1 + std::max(depth_below(left[static_cast<std::size_t>(node)], level + 1),
                        depth_below(right[static_cast<std::size_t>(node)], level + 1));
  }
};

JsonTree read_tree(const nlohmann::json& t, std::size_t features) {
  JsonTree out;
  out.left = t.at("left_children").get<std::vector<int>>();
  out.right = t.at("right_children").get<std::vector<int>>();
  const auto split = t.at("split_indices").get<std::vector<std::int64_t>>();
  out.condition = t.at("split_conditions").get<std::vector<float>>();
  const std::size_t n = out.left.size();
  if (n == 0 || out.right.size() != n || split.size() != n || out.condition.size() != n)
    bad_model("has a tree whose node arrays differ in length");
  if (t.contains("split_type")) {
    for (const auto v : t.at("split_type").get<std::vector<int>>())
      if (v != 0) bad_model("has categorical splits, which flat trees do not evaluate");
  }
  out.feature.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool leaf = out.left[i] < 0;
    if (!leaf && (out.left[i] >= static_cast<int>(n) || out.right[i] < 0 || out.right[i] >= static_cast<int>(n)))
      bad_model(fmt::format("has a child index out of range at node {}", i));
    if (!leaf && (split[i] < 0 || static_cast<std::size_t>(split[i]) >= features))
      bad_model(fmt::format("splits on feature {} of {}", split[i], features));
    out.feature[i] = leaf ? 0 : static_cast<std::uint32_t>(split[i]);
  }
  return out;
}

}  // namespace

FlatTrees FlatTrees::from_xgboost_json(std::string_view json, std::size_t expect_features) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    bad_model(std::string("is not valid JSON: ") + e.what());
  }
  try {
    const auto& learner = doc.at("learner");
    const auto& param = learner.at("learner_model_param");
    const std::size_t features = std::stoul(param.at("num_feature").get<std::string>());
    if (features != expect_features)
      bad_model(fmt::format("has {} features where {} were given to it", features, expect_features));
    const double base_score = std::stod(param.at("base_score").get<std::string>());
    const std::string objective = learner.at("objective").at("name").get<std::string>();
    const auto& booster = learner.at("gradient_booster");
    if (booster.at("name").get<std::string>() != "gbtree") bad_model("is not a gbtree booster");

    std::vector<JsonTree> trees;
    int depth = 0;
    for (const auto& t : booster.at("model").at("trees")) {
      trees.push_back(read_tree(t, features));
      depth = std::max(depth, trees.back().depth_below(0, 0));
    }

    FlatTrees f;
    f.m_trees = trees.size();
    f.m_features = features;
    f.m_depth = depth;
    // The margin of binary:logistic starts from the logit of base_score; regression from base_score.
    if (objective == "binary:logistic") f.m_base = static_cast<float>(std::log(base_score / (1 - base_score)));
    else if (objective == "reg:squarederror") f.m_base = static_cast<float>(base_score);
    else bad_model("has objective " + objective + ", which flat trees do not evaluate");
    f.m_split.assign(f.m_trees * f.internal_per_tree(), Split{0, always_left});
    f.m_leaf.assign(f.m_trees * f.leaves_per_tree(), 0.0f);
    for (std::size_t t = 0; t < trees.size(); ++t) {
      const JsonTree& src = trees[t];
      Split* split = f.m_split.data() + t * f.internal_per_tree();
      float* leaf = f.m_leaf.data() + t * f.leaves_per_tree();
      // Walk every complete-tree slot, carrying the XGBoost node it stands for: below a real leaf
      // the padding splits keep going left, and the leaf's value fills the slots it covers.
      struct Slot {
        std::size_t slot;
        int node;
        int level;
      };
      std::vector<Slot> stack{{0, 0, 0}};
      while (!stack.empty()) {
        const Slot s = stack.back();
        stack.pop_back();
        const auto node = static_cast<std::size_t>(s.node);
        if (s.level == depth) {
          leaf[s.slot - f.internal_per_tree()] = src.condition[node];
          continue;
        }
        if (src.left[node] < 0) {
          // Padding: both children stand for the same leaf; lookups only ever go left.
          stack.push_back({2 * s.slot + 1, s.node, s.level + 1});
          stack.push_back({2 * s.slot + 2, s.node, s.level + 1});
          continue;
        }
        split[s.slot] = {src.feature[node], src.condition[node]};
        stack.push_back({2 * s.slot + 1, src.left[node], s.level + 1});
        stack.push_back({2 * s.slot + 2, src.right[node], s.level + 1});
      }
    }
    return f;
  } catch (const nlohmann::json::exception& e) {
    bad_model(std::string("lacks a field flat trees need: ") + e.what());
  } catch (const std::logic_error& e) {  // std::stoul / std::stod
    bad_model(std::string("has a malformed number: ") + e.what());
  }
}

void FlatTrees::predict(std::span<const float> x, std::size_t rows, std::span<float> out) const {
  if (x.size() != rows * m_features || out.size() != rows)
    throw invalid_argument_error(fmt::format("flat trees: {} values for {} rows of {} features", x.size(), rows,
                                             m_features));
  std::fill(out.begin(), out.end(), m_base);
  // Rows go down a tree in groups of `lanes`: their walks are independent, so the processor
  // overlaps the dependent loads of one walk with the others' (one walk alone waits on each).
  // Blocks of rows are small enough that their features stay in L1 beside one tree.
  constexpr std::size_t lanes = 8, block = 64;
  const std::size_t internal = internal_per_tree(), leaves = leaves_per_tree();
  for (std::size_t r0 = 0; r0 < rows; r0 += block) {
    const std::size_t r1 = std::min(rows, r0 + block);
    for (std::size_t t = 0; t < m_trees; ++t) {
      const Split* split = m_split.data() + t * internal;
      const float* leaf = m_leaf.data() + t * leaves;
      std::size_t r = r0;
      for (; r + lanes <= r1; r += lanes) {
        const float* row = x.data() + r * m_features;
        std::size_t i[lanes] = {};
        for (int d = 0; d < m_depth; ++d)
          for (std::size_t k = 0; k < lanes; ++k) {
            const Split s = split[i[k]];
            i[k] = 2 * i[k] + 1 + static_cast<std::size_t>(row[k * m_features + s.feature] >= s.threshold);
          }
        for (std::size_t k = 0; k < lanes; ++k) out[r + k] += leaf[i[k] - internal];
      }
      for (; r < r1; ++r) {
        const float* row = x.data() + r * m_features;
        std::size_t i = 0;
        for (int d = 0; d < m_depth; ++d) i = 2 * i + 1 + static_cast<std::size_t>(row[split[i].feature] >= split[i].threshold);
        out[r] += leaf[i - internal];
      }
    }
  }
}

std::size_t FlatTrees::bytes() const noexcept {
  return m_split.size() * sizeof(Split) + m_leaf.size() * sizeof(float);
}

void FlatTrees::save(ArchiveWriter& w) const {
  w.u32(1);  // layout version
  w.u64(m_trees);
  w.u64(m_features);
  w.u32(static_cast<std::uint32_t>(m_depth));
  w.f64(m_base);
  std::vector<float> feature, threshold;
  for (const Split& s : m_split) {
    feature.push_back(static_cast<float>(s.feature));  // exact below 2^24 features
    threshold.push_back(s.threshold);
  }
  w.f32s(feature);
  w.f32s(threshold);
  w.f32s(m_leaf);
}

FlatTrees FlatTrees::load(ArchiveReader& r) {
  if (r.u32() != 1) r.fail("flat trees: unknown layout version");
  FlatTrees f;
  f.m_trees = r.u64();
  f.m_features = r.u64();
  const auto depth = r.u32();
  if (depth > max_depth) r.fail("flat trees: stored depth above 16");
  f.m_depth = static_cast<int>(depth);
  f.m_base = static_cast<float>(r.f64());
  const auto feature = r.f32s();
  const auto threshold = r.f32s();
  f.m_leaf = r.f32s();
  if (f.m_trees > (std::size_t{1} << 24)) r.fail("flat trees: implausible tree count");
  if (feature.size() != f.m_trees * f.internal_per_tree() || threshold.size() != feature.size() ||
      f.m_leaf.size() != f.m_trees * f.leaves_per_tree())
    r.fail("flat trees: stored arrays do not match the tree count and depth");
  f.m_split.reserve(feature.size());
  for (std::size_t i = 0; i < feature.size(); ++i) {
    const float v = feature[i];
    if (!(v >= 0) || static_cast<double>(v) >= static_cast<double>(f.m_features)) r.fail("flat trees: split feature out of range");
    f.m_split.push_back({static_cast<std::uint32_t>(v), threshold[i]});
  }
  return f;
}

std::vector<float> mean_forecast(std::span<const FlatTrees> models, std::span<const float> x, std::size_t rows) {
  std::vector<float> mean(rows, 0.0f), one(rows);
  for (const auto& m : models) {
    m.predict(x, rows, one);
    for (std::size_t i = 0; i < rows; ++i) mean[i] += one[i] / static_cast<float>(models.size());
  }
  return mean;
}

}  // namespace gpuforecast::detail
