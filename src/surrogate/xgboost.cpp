#include "surrogate/xgboost.hpp"

#include <fmt/core.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "gpuforecast/core/error.hpp"
#include "boosting.hpp"
#include "tabular.hpp"

namespace gpuforecast {

bool xgboost_available() noexcept { return true; }

namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw error(fmt::format("XGBoost {} failed: {}", what, XGBGetLastError()));
}

struct DMatrix {
  DMatrixHandle h = nullptr;
  DMatrix(const std::vector<float>& x, std::size_t rows, std::size_t cols) {
    check(XGDMatrixCreateFromMat(x.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(), &h), "DMatrix creation");
  }
  ~DMatrix() {
    if (h) XGDMatrixFree(h);
  }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
};

struct Booster {
  BoosterHandle h = nullptr;
  Booster() { check(XGBoosterCreate(nullptr, 0, &h), "booster creation"); }
  explicit Booster(const DMatrix& train) { check(XGBoosterCreate(&train.h, 1, &h), "booster creation"); }
  ~Booster() {
    if (h) XGBoosterFree(h);
  }
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
  void set(const char* k, const std::string& v) { check(XGBoosterSetParam(h, k, v.c_str()), "parameter setting"); }
  [[nodiscard]] std::vector<double> predict(const DMatrix& m) const {
    bst_ulong len = 0;
    const float* out = nullptr;
    check(XGBoosterPredict(h, m.h, 0, 0, 0, &len, &out), "prediction");
    return {out, out + len};
  }
  [[nodiscard]] std::string save() const {
    bst_ulong len = 0;
    const char* out = nullptr;
    check(XGBoosterSaveModelToBuffer(h, R"({"format": "ubj"})", &len, &out), "model serialisation");
    return {out, out + len};
  }
};

int thread_count(int requested) {
  if (requested > 0) return requested;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Boosting rounds over the few thousand rows of a tuning space are too short to share: on this
// 2-core machine two threads spent most of the training time synchronising in the kernel
// (2.5x slower at 5% of a space, 1.4x at 8,000 rows). Below this many rows training runs on
// one thread; scoring a space in batches keeps every thread.
constexpr std::size_t rows_per_training_thread = 20000;

int training_thread_count(int requested, std::size_t rows) {
  if (requested > 0) return requested;
  return static_cast<int>(std::clamp<std::size_t>(rows / rows_per_training_thread, 1,
                                                  static_cast<std::size_t>(thread_count(0))));
}

}  // namespace

struct XgboostSurrogate::State {
  detail::TabularBase base;
  std::vector<std::size_t> columns;  // encoder columns fed to the trees
  std::vector<std::pair<std::size_t, std::size_t>> products;  // encoder column pairs multiplied
  std::shared_ptr<Booster> runtime;
  std::shared_ptr<Booster> failure;  // null: constant rate
  double failure_rate = 0;
  double q05 = 0, q95 = 0;
  mutable std::mutex predict_mutex;  // the C API's thread-safety differs across versions

  [[nodiscard]] std::size_t width() const noexcept { return columns.size() + products.size(); }
  [[nodiscard]] std::vector<float> features(const std::vector<double>& x, std::size_t rows, std::size_t dim) const {
    const std::size_t w = width();
    std::vector<float> out(rows * w);
    for (std::size_t i = 0; i < rows; ++i) {
      const double* xi = x.data() + i * dim;
      float* o = out.data() + i * w;
      for (std::size_t j = 0; j < columns.size(); ++j) o[j] = static_cast<float>(xi[columns[j]]);
      for (std::size_t j = 0; j < products.size(); ++j)
        o[columns.size() + j] = static_cast<float>(xi[products[j].first] * xi[products[j].second]);
    }
    return out;
  }
};

namespace {

std::shared_ptr<Booster> boost(const std::vector<float>& x, std::size_t cols, const std::vector<float>& y,
                               const XgboostOptions& o, bool classifier, const std::vector<float>* weights = nullptr) {
  const std::size_t rows = y.size();
  DMatrix d(x, rows, cols);
  check(XGDMatrixSetFloatInfo(d.h, "label", y.data(), rows), "label setting");
  if (weights) check(XGDMatrixSetFloatInfo(d.h, "weight", weights->data(), rows), "weight setting");
  auto b = std::make_shared<Booster>(d);
  b->set("objective", classifier ? "binary:logistic" : "reg:squarederror");
  b->set("tree_method", "hist");
  b->set("eta", fmt::format("{}", o.eta));
  b->set("max_depth", std::to_string(o.max_depth));
  b->set("min_child_weight", fmt::format("{}", o.min_child_weight));
  b->set("subsample", fmt::format("{}", o.subsample));
  b->set("colsample_bytree", fmt::format("{}", o.colsample_bytree));
  b->set("lambda", fmt::format("{}", o.lambda));
  b->set("seed", std::to_string(o.seed % 2147483647));
  b->set("nthread", std::to_string(training_thread_count(o.threads, rows)));
  b->set("verbosity", "0");
  const int rounds = classifier ? o.failure_rounds : o.rounds;
  for (int it = 0; it < rounds; ++it) check(XGBoosterUpdateOneIter(b->h, it, d.h), "training");
  b->set("nthread", std::to_string(thread_count(o.threads)));
  return b;
}

void train_xgboost(XgboostSurrogate::State& s, const XgboostOptions& o) {
  const auto& rows = s.base.rows;
  s.columns = s.base.encoder.columns({FeatureRole::device, FeatureRole::problem, FeatureRole::kernel,
                                      FeatureRole::parameter_raw, FeatureRole::parameter_category, FeatureRole::feature});
  s.products.clear();
  if (o.pair_products) {
    const auto raw = s.base.encoder.columns({FeatureRole::parameter_raw});
    for (std::size_t i = 0; i < raw.size(); ++i)
      for (std::size_t j = i + 1; j < raw.size(); ++j) s.products.emplace_back(raw[i], raw[j]);
  }
  const auto ok = detail::ok_rows(rows);
  const auto y_all = s.base.norm.targets(rows);
  const auto x_all = s.features(rows.x, rows.rows(), rows.dim);
  const std::size_t c = s.width();
  auto gather = [&](const std::vector<std::size_t>& idx, std::vector<float>& x, std::vector<float>& y) {
    x.resize(idx.size() * c);
    y.resize(idx.size());
    for (std::size_t i = 0; i < idx.size(); ++i) {
      std::copy_n(x_all.data() + idx[i] * c, c, x.data() + i * c);
      y[i] = static_cast<float>(y_all[idx[i]]);
    }
  };
  std::vector<float> x, y;
  // Interval: residuals of a model that did not see a held-out fifth.
  std::vector<double> residuals;
  if (o.holdout_fraction > 0 && ok.size() >= 20) {
    std::vector<std::size_t> idx = ok;
    std::mt19937_64 rng(o.seed ^ 0x9e3779b97f4a7c15ULL);
    std::shuffle(idx.begin(), idx.end(), rng);
    const auto held = std::max<std::size_t>(5, static_cast<std::size_t>(o.holdout_fraction * static_cast<double>(idx.size())));
    const std::vector<std::size_t> test(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(held));
    const std::vector<std::size_t> fit_rows(idx.begin() + static_cast<std::ptrdiff_t>(held), idx.end());
    gather(fit_rows, x, y);
    const auto probe = boost(x, c, y, o, false);
    gather(test, x, y);
    DMatrix dt(x, test.size(), c);
    const auto p = probe->predict(dt);
    for (std::size_t i = 0; i < test.size(); ++i) residuals.push_back(y[i] - p[i]);
  }
  gather(ok, x, y);
  s.runtime = boost(x, c, y, o, false);
  if (residuals.empty()) {
    DMatrix d(x, ok.size(), c);
    const auto p = s.runtime->predict(d);
    for (std::size_t i = 0; i < ok.size(); ++i) residuals.push_back(y[i] - p[i]);
  }
  s.q05 = detail::quantile(residuals, 0.05);
  s.q95 = detail::quantile(residuals, 0.95);

  s.failure_rate = detail::base_failure_rate(rows);
  s.failure.reset();
  if (const auto label = detail::failure_labels(rows); !label.empty()) s.failure = boost(x_all, c, label, o, true);
}

std::shared_ptr<Booster> load_booster(ArchiveReader& r, const std::string& blob) {
  auto b = std::make_shared<Booster>();
  if (XGBoosterLoadModelFromBuffer(b->h, blob.data(), blob.size()) != 0)
    r.fail(fmt::format("xgboost: the stored booster does not load: {}", XGBGetLastError()));
  return b;
}

}  // namespace

namespace detail {

FlatTrees boost_flat_trees(const std::vector<float>& x, std::size_t cols, const std::vector<float>& y,
                           const XgboostOptions& o, bool classifier, std::vector<double>* xgboost_predictions,
                           const std::vector<float>* weights) {
  if (weights && weights->size() != y.size()) throw invalid_argument_error("boosting: one weight per row is needed");
  const auto booster = boost(x, cols, y, o, classifier, weights);
  if (xgboost_predictions) *xgboost_predictions = booster->predict(DMatrix(x, y.size(), cols));
  bst_ulong len = 0;
  const char* out = nullptr;
  check(XGBoosterSaveModelToBuffer(booster->h, R"({"format": "json"})", &len, &out), "model serialisation");
  return FlatTrees::from_xgboost_json(std::string_view(out, len), cols);
}

}  // namespace detail

XgboostSurrogate::XgboostSurrogate(XgboostOptions options) : m_options(std::move(options)) {
  if (m_options.rounds < 1) throw invalid_argument_error("XgboostOptions::rounds must be positive");
}

void XgboostSurrogate::fit(std::span<const Observation> observations) {
  m_state = detail::fit_tabular<State>(observations, m_options, "xgboost surrogate", train_xgboost);
}

void XgboostSurrogate::update(std::span<const Observation> observations) {
  if (!m_state) return fit(observations);
  if (observations.empty()) return;
  m_state = detail::refit_tabular(*m_state, observations, m_options, train_xgboost);
}

std::vector<Forecast> XgboostSurrogate::predict(std::span<const Candidate> candidates) const {
  if (!m_state) throw invalid_argument_error("xgboost surrogate: predict() before fit()");
  const State& s = *m_state;
  if (candidates.empty()) return {};
  const auto x = s.base.encoder.encode(candidates);
  const auto f = s.features(x, candidates.size(), s.base.encoder.dimension());
  DMatrix d(f, candidates.size(), s.width());
  std::vector<double> mean, fail;
  {
    std::lock_guard lock(s.predict_mutex);
    mean = s.runtime->predict(d);
    if (s.failure) fail = s.failure->predict(d);
  }
  std::vector<detail::RowPrediction> rows(candidates.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    rows[i] = {mean[i], mean[i] + s.q05, mean[i] + s.q95, s.failure ? fail[i] : s.failure_rate};
  return detail::to_forecasts(candidates, s.base.norm, rows);
}

void XgboostSurrogate::save(ArchiveWriter& w) const {
  if (!m_state) throw invalid_argument_error("xgboost surrogate: save() before fit()");
  const State& s = *m_state;
  detail::write_tag(w, "xgboost", 1);
  const auto& o = m_options;
  w.u32(static_cast<std::uint32_t>(o.rounds));
  w.f64(o.eta);
  w.u32(static_cast<std::uint32_t>(o.max_depth));
  w.f64(o.min_child_weight);
  w.f64(o.subsample);
  w.f64(o.colsample_bytree);
  w.f64(o.lambda);
  w.u32(static_cast<std::uint32_t>(o.failure_rounds));
  w.f64(o.holdout_fraction);
  w.u64(o.seed);
  w.u64(o.encoder.max_one_hot);
  detail::save_base(w, s.base);
  w.f64s(std::vector<double>(s.columns.begin(), s.columns.end()));
  w.u32(o.pair_products ? 1 : 0);
  w.u64(s.products.size());
  for (const auto& [a, b] : s.products) {
    w.u64(a);
    w.u64(b);
  }
  w.bytes(s.runtime->save());
  w.u32(s.failure ? 1 : 0);
  if (s.failure) w.bytes(s.failure->save());
  w.f64(s.failure_rate);
  w.f64(s.q05);
  w.f64(s.q95);
}

XgboostSurrogate XgboostSurrogate::load(ArchiveReader& r) {
  detail::expect_tag(r, "xgboost", 1);
  XgboostOptions o;
  o.rounds = static_cast<int>(r.u32());
  o.eta = r.f64();
  o.max_depth = static_cast<int>(r.u32());
  o.min_child_weight = r.f64();
  o.subsample = r.f64();
  o.colsample_bytree = r.f64();
  o.lambda = r.f64();
  o.failure_rounds = static_cast<int>(r.u32());
  o.holdout_fraction = r.f64();
  o.seed = r.u64();
  o.encoder.max_one_hot = r.u64();
  if (o.rounds < 1) r.fail("xgboost: stored round count is not positive");
  XgboostSurrogate out(o);
  auto s = std::make_shared<State>();
  s->base = detail::load_base(r);
  for (double v : r.f64s()) {
    if (!(v >= 0) || v >= static_cast<double>(s->base.encoder.dimension())) r.fail("xgboost: feature column out of range");
    s->columns.push_back(static_cast<std::size_t>(v));
  }
  o.pair_products = r.u32() != 0;
  const auto np = r.u64();
  const std::size_t dim = s->base.encoder.dimension();
  if (np > dim * dim) r.fail("xgboost: implausible product count");
  for (std::uint64_t i = 0; i < np; ++i) {
    const auto a = r.u64(), b = r.u64();
    if (a >= dim || b >= dim) r.fail("xgboost: product column out of range");
    s->products.emplace_back(a, b);
  }
  out.m_options.pair_products = o.pair_products;
  s->runtime = load_booster(r, r.bytes());
  if (r.u32()) s->failure = load_booster(r, r.bytes());
  s->failure_rate = r.f64();
  s->q05 = r.f64();
  s->q95 = r.f64();
  out.m_state = std::move(s);
  return out;
}

}  // namespace gpuforecast
