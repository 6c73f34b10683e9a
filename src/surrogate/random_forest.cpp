#include "surrogate/random_forest.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "gpuforecast/core/error.hpp"
#include "tabular.hpp"

namespace gpuforecast {

namespace {

// A regression tree in flat arrays: node i splits on feature[i] (< threshold[i] goes left) or,
// when feature[i] < 0, is a leaf predicting value[i].
struct Tree {
  std::vector<std::int32_t> feature;
  std::vector<double> threshold;
  std::vector<std::uint32_t> left, right;
  std::vector<double> value;

  [[nodiscard]] double predict(const double* x) const {
    std::size_t n = 0;
    while (feature[n] >= 0) n = x[feature[n]] < threshold[n] ? left[n] : right[n];
    return value[n];
  }
  void save(ArchiveWriter& w) const {
    std::vector<double> f(feature.begin(), feature.end()), l(left.begin(), left.end()), r(right.begin(), right.end());
    w.f64s(f);
    w.f64s(threshold);
    w.f64s(l);
    w.f64s(r);
    w.f64s(value);
  }
  static Tree load(ArchiveReader& r, std::size_t width) {
    Tree t;
    const auto f = r.f64s();
    t.threshold = r.f64s();
    const auto l = r.f64s(), rt = r.f64s();
    t.value = r.f64s();
    const std::size_t n = f.size();
    if (n == 0 || t.threshold.size() != n || l.size() != n || rt.size() != n || t.value.size() != n)
      r.fail("forest: a tree's node arrays differ in length");
    for (std::size_t i = 0; i < n; ++i) {
      if (f[i] >= 0 && (f[i] >= static_cast<double>(width) || !(l[i] > static_cast<double>(i)) ||
                        !(rt[i] > static_cast<double>(i)) || l[i] >= static_cast<double>(n) || rt[i] >= static_cast<double>(n)))
        r.fail("forest: a tree node points outside its tree");
      t.feature.push_back(f[i] >= 0 ? static_cast<std::int32_t>(f[i]) : -1);
      t.left.push_back(f[i] >= 0 ? static_cast<std::uint32_t>(l[i]) : 0);
      t.right.push_back(f[i] >= 0 ? static_cast<std::uint32_t>(rt[i]) : 0);
    }
    return t;
  }
};

// Grows one tree on rows `idx` (a bootstrap sample, repeats allowed) of the row-major matrix x.
class TreeBuilder {
 public:
  TreeBuilder(const std::vector<double>& x, std::size_t width, const std::vector<double>& y,
              const RandomForestOptions& o, std::mt19937_64& rng)
      : m_x(x), m_width(width), m_y(y), m_o(o), m_rng(rng) {
    m_tries = std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(o.feature_fraction * static_cast<double>(width))));
    m_columns.resize(width);
    std::iota(m_columns.begin(), m_columns.end(), 0);
  }

  Tree grow(std::vector<std::size_t> idx) {
    m_tree = {};
    m_idx = std::move(idx);
    node(0, m_idx.size(), 0);
    return std::move(m_tree);
  }

 private:
  std::size_t add_leaf(double value) {
    m_tree.feature.push_back(-1);
    m_tree.threshold.push_back(0);
    m_tree.left.push_back(0);
    m_tree.right.push_back(0);
    m_tree.value.push_back(value);
    return m_tree.value.size() - 1;
  }

  double x(std::size_t row, std::size_t col) const { return m_x[row * m_width + col]; }

  std::size_t node(std::size_t begin, std::size_t end, std::size_t depth) {
    const std::size_t n = end - begin;
    double sum = 0;
    for (std::size_t i = begin; i < end; ++i) sum += m_y[m_idx[i]];
    const double mean = sum / static_cast<double>(n);
    const std::size_t self = add_leaf(mean);
    if (n < 2 * m_o.min_leaf || depth >= m_o.max_depth) return self;
    bool constant = true;
    for (std::size_t i = begin; i < end && constant; ++i) constant = m_y[m_idx[i]] == m_y[m_idx[begin]];
    if (constant) return self;

    // Best split by squared-error reduction among a random share of the columns; as in
    // scikit-learn, further columns are tried while none of the drawn ones can split the rows.
    std::shuffle(m_columns.begin(), m_columns.end(), m_rng);
    double best_gain = 0;
    std::int64_t best_col = -1;
    double best_threshold = 0;
    std::vector<std::size_t> order(m_idx.begin() + static_cast<std::ptrdiff_t>(begin),
                                   m_idx.begin() + static_cast<std::ptrdiff_t>(end));
    const double base = sum * sum / static_cast<double>(n);
    for (std::size_t t = 0; t < m_width; ++t) {
      if (t >= m_tries && best_col >= 0) break;
      const std::size_t col = m_columns[t];
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x(a, col) < x(b, col); });
      if (!(x(order.front(), col) < x(order.back(), col))) continue;
      double left_sum = 0;
      for (std::size_t i = 0; i + 1 < n; ++i) {
        left_sum += m_y[order[i]];
        const std::size_t nl = i + 1, nr = n - nl;
        if (nl < m_o.min_leaf || nr < m_o.min_leaf) continue;
        const double a = x(order[i], col), b = x(order[i + 1], col);
        if (!(a < b)) continue;
        const double right_sum = sum - left_sum;
        const double gain = left_sum * left_sum / static_cast<double>(nl) + right_sum * right_sum / static_cast<double>(nr) - base;
        if (gain > best_gain + 1e-12) {
          best_gain = gain;
          best_col = static_cast<std::int64_t>(col);
          best_threshold = 0.5 * (a + b);
        }
      }
    }
    if (best_col < 0) return self;
    const auto col = static_cast<std::size_t>(best_col);
    const auto mid = std::partition(m_idx.begin() + static_cast<std::ptrdiff_t>(begin),
                                    m_idx.begin() + static_cast<std::ptrdiff_t>(end),
                                    [&](std::size_t r) { return x(r, col) < best_threshold; });
    const auto split = static_cast<std::size_t>(mid - m_idx.begin());
    m_tree.feature[self] = static_cast<std::int32_t>(col);
    m_tree.threshold[self] = best_threshold;
    const std::size_t l = node(begin, split, depth + 1);
    m_tree.left[self] = static_cast<std::uint32_t>(l);
    const std::size_t r = node(split, end, depth + 1);
    m_tree.right[self] = static_cast<std::uint32_t>(r);
    return self;
  }

  const std::vector<double>& m_x;
  std::size_t m_width;
  const std::vector<double>& m_y;
  const RandomForestOptions& m_o;
  std::mt19937_64& m_rng;
  std::size_t m_tries = 1;
  std::vector<std::size_t> m_columns;
  std::vector<std::size_t> m_idx;
  Tree m_tree;
};

}  // namespace

struct RandomForestSurrogate::State {
  detail::TabularBase base;
  std::vector<std::size_t> columns;  // encoder columns the trees see
  std::vector<Tree> runtime;         // on the normalised log-runtime of ok rows
  std::vector<Tree> failure;         // on the failure flag of all rows; empty: no row failed
  double noise_var = 1e-4;           // out-of-bag residual variance beyond the trees' spread
  double base_p_fail = 0;

  [[nodiscard]] std::vector<double> features(const std::vector<double>& x, std::size_t rows, std::size_t dim) const {
    std::vector<double> out(rows * columns.size());
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t j = 0; j < columns.size(); ++j) out[r * columns.size() + j] = x[r * dim + columns[j]];
    return out;
  }
};

namespace {

void train_forest(RandomForestSurrogate::State& s, const RandomForestOptions& o) {
  const auto& rows = s.base.rows;
  // Trees need each parameter once, as its raw value (splits are order-based), plus what is
  // categorical; log2 and one-hot copies only dilute the random column draws.
  s.columns = s.base.encoder.columns({FeatureRole::device, FeatureRole::problem, FeatureRole::kernel,
                                      FeatureRole::parameter_raw, FeatureRole::parameter_category, FeatureRole::feature});
  const std::size_t width = s.columns.size();
  const auto x = s.features(rows.x, rows.rows(), rows.dim);
  const auto y = s.base.norm.targets(rows);
  const auto ok = detail::ok_rows(rows);
  s.base_p_fail = detail::base_failure_rate(rows);
  s.runtime.clear();
  s.failure.clear();
  s.noise_var = 1e-4;
  if (ok.empty()) throw invalid_argument_error("forest surrogate: no successful measurement to learn from");
  if (width == 0) return;
  const std::size_t bag_size = o.max_samples > 0 ? std::min(o.max_samples, ok.size()) : ok.size();

  std::mt19937_64 rng(o.seed);
  TreeBuilder runtime_builder(x, width, y, o, rng);
  // Out-of-bag predictions: each ok row predicted by the trees that did not see it.
  struct OutOfBag {
    double sum = 0, sq = 0;
    std::size_t n = 0;
  };
  std::vector<OutOfBag> oob(rows.rows());
  std::uniform_int_distribution<std::size_t> draw(0, ok.size() - 1);
  std::vector<char> in_bag(rows.rows());
  for (std::size_t t = 0; t < o.trees; ++t) {
    std::vector<std::size_t> bag(bag_size);
    std::fill(in_bag.begin(), in_bag.end(), 0);
    for (auto& b : bag) {
      b = ok[draw(rng)];
      in_bag[b] = 1;
    }
    s.runtime.push_back(runtime_builder.grow(std::move(bag)));
    for (std::size_t r : ok)
      if (!in_bag[r]) {
        const double p = s.runtime.back().predict(x.data() + r * width);
        oob[r].sum += p;
        oob[r].sq += p * p;
        ++oob[r].n;
      }
  }
  // Noise left once the trees' disagreement is accounted for: mean over out-of-bag rows of the
  // squared residual minus the out-of-bag trees' variance.
  double excess = 0;
  std::size_t counted = 0;
  for (std::size_t r : ok)
    if (oob[r].n >= 2) {
      const double m = oob[r].sum / static_cast<double>(oob[r].n);
      const double v = std::max(0.0, oob[r].sq / static_cast<double>(oob[r].n) - m * m);
      excess += (y[r] - m) * (y[r] - m) - v;
      ++counted;
    }
  if (counted > 0) s.noise_var = std::max(1e-4, excess / static_cast<double>(counted));

  if (ok.size() < rows.rows() && o.failure_trees > 0) {
    std::vector<double> failed(rows.rows());
    for (std::size_t r = 0; r < rows.rows(); ++r) failed[r] = rows.ok(r) ? 0.0 : 1.0;
    TreeBuilder failure_builder(x, width, failed, o, rng);
    std::uniform_int_distribution<std::size_t> any(0, rows.rows() - 1);
    for (std::size_t t = 0; t < o.failure_trees; ++t) {
      std::vector<std::size_t> bag(o.max_samples > 0 ? std::min(o.max_samples, rows.rows()) : rows.rows());
      for (auto& b : bag) b = any(rng);
      s.failure.push_back(failure_builder.grow(std::move(bag)));
    }
  }
}

}  // namespace

RandomForestSurrogate::RandomForestSurrogate(RandomForestOptions options) : m_options(std::move(options)) {
  if (m_options.trees == 0) throw invalid_argument_error("RandomForestOptions::trees must be >= 1");
  if (!(m_options.feature_fraction > 0 && m_options.feature_fraction <= 1))
    throw invalid_argument_error("RandomForestOptions::feature_fraction must be in (0, 1]");
  if (m_options.min_leaf == 0) throw invalid_argument_error("RandomForestOptions::min_leaf must be >= 1");
}

void RandomForestSurrogate::fit(std::span<const Observation> observations) {
  m_state = detail::fit_tabular<State>(observations, m_options, "forest surrogate", train_forest);
}

void RandomForestSurrogate::update(std::span<const Observation> observations) {
  if (!m_state) return fit(observations);
  if (observations.empty()) return;
  m_state = detail::refit_tabular(*m_state, observations, m_options, train_forest);
}

std::vector<Forecast> RandomForestSurrogate::predict(std::span<const Candidate> candidates) const {
  if (!m_state) throw invalid_argument_error("forest surrogate: predict() before fit()");
  const State& s = *m_state;
  const auto encoded = s.base.encoder.encode(candidates);
  const auto x = s.features(encoded, candidates.size(), s.base.encoder.dimension());
  const std::size_t width = s.columns.size();
  std::vector<detail::RowPrediction> rows(candidates.size());
  std::vector<double> spread(candidates.size(), 0);
  constexpr double z95 = 1.6448536269514722;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const double* xi = x.data() + i * width;
    double mean = 0, sq = 0;
    if (!s.runtime.empty()) {
      for (const auto& t : s.runtime) {
        const double p = t.predict(xi);
        mean += p;
        sq += p * p;
      }
      mean /= static_cast<double>(s.runtime.size());
      sq /= static_cast<double>(s.runtime.size());
    }
    const double var = std::max(0.0, sq - mean * mean);
    spread[i] = std::sqrt(var);
    const double sd = std::sqrt(var + s.noise_var);
    double p_fail = s.base_p_fail;
    if (!s.failure.empty()) {
      double f = 0;
      for (const auto& t : s.failure) f += t.predict(xi);
      // Shrunk a little toward the base rate: a leaf of one failed row is not certain failure.
      p_fail = 0.9 * f / static_cast<double>(s.failure.size()) + 0.1 * s.base_p_fail;
    }
    rows[i] = {mean, mean - z95 * sd, mean + z95 * sd, p_fail};
  }
  auto out = detail::to_forecasts(candidates, s.base.norm, rows);
  for (std::size_t i = 0; i < out.size(); ++i) out[i].spread = spread[i];
  return out;
}

void RandomForestSurrogate::save(ArchiveWriter& w) const {
  if (!m_state) throw invalid_argument_error("forest surrogate: save() before fit()");
  const State& s = *m_state;
  detail::write_tag(w, "forest", 1);
  w.u64(m_options.trees);
  w.u64(m_options.failure_trees);
  w.f64(m_options.feature_fraction);
  w.u64(m_options.min_leaf);
  w.u64(m_options.max_depth);
  w.u64(m_options.max_samples);
  w.u64(m_options.seed);
  w.u64(m_options.encoder.max_one_hot);
  detail::save_base(w, s.base);
  w.f64s(std::vector<double>(s.columns.begin(), s.columns.end()));
  w.f64(s.noise_var);
  w.f64(s.base_p_fail);
  w.u64(s.runtime.size());
  for (const auto& t : s.runtime) t.save(w);
  w.u64(s.failure.size());
  for (const auto& t : s.failure) t.save(w);
}

RandomForestSurrogate RandomForestSurrogate::load(ArchiveReader& r) {
  detail::expect_tag(r, "forest", 1);
  RandomForestOptions o;
  o.trees = r.u64();
  o.failure_trees = r.u64();
  o.feature_fraction = r.f64();
  o.min_leaf = r.u64();
  o.max_depth = r.u64();
  o.max_samples = r.u64();
  o.seed = r.u64();
  o.encoder.max_one_hot = r.u64();
  if (o.trees == 0 || !(o.feature_fraction > 0 && o.feature_fraction <= 1) || o.min_leaf == 0)
    r.fail("forest: stored options are out of range");
  RandomForestSurrogate out(o);
  auto s = std::make_shared<State>();
  s->base = detail::load_base(r);
  for (double c : r.f64s()) {
    if (!(c >= 0 && c < static_cast<double>(s->base.encoder.dimension()))) r.fail("forest: input column out of range");
    s->columns.push_back(static_cast<std::size_t>(c));
  }
  s->noise_var = r.f64();
  s->base_p_fail = r.f64();
  if (!(s->noise_var >= 0) || !(s->base_p_fail >= 0 && s->base_p_fail <= 1)) r.fail("forest: stored noise or failure rate out of range");
  const std::size_t width = s->columns.size();
  const std::uint64_t n_runtime = r.u64();
  if (n_runtime > (1u << 20)) r.fail("forest: implausible tree count");
  for (std::uint64_t i = 0; i < n_runtime; ++i) s->runtime.push_back(Tree::load(r, width));
  const std::uint64_t n_failure = r.u64();
  if (n_failure > (1u << 20)) r.fail("forest: implausible tree count");
  for (std::uint64_t i = 0; i < n_failure; ++i) s->failure.push_back(Tree::load(r, width));
  out.m_state = std::move(s);
  return out;
}

}  // namespace gpuforecast
