#include "surrogate/ridge.hpp"

#include <Eigen/Dense>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpuforecast/core/error.hpp"
#include "logistic.hpp"
#include "tabular.hpp"

namespace gpuforecast {

using detail::RowPrediction;

struct RidgeSurrogate::State {
  detail::TabularBase base;
  detail::Standardiser input;                // base columns
  std::vector<std::size_t> interacting;      // positions in `input` that form products
  std::vector<double> expanded_mean, expanded_scale;
  std::vector<double> weights;               // over expanded columns
  double intercept = 0;
  double lambda = 0;
  double q05 = 0, q95 = 0;                   // leave-one-out residual quantiles
  // Range of the normalised training targets: a linear model far outside its data (an unseen
  // kernel's parameters encode as 0) can extrapolate to absurd times, so forecasts are clamped
  // to the range widened by its own width on each side.
  double y_low = 0, y_high = 0;
  void set_range() {
    const auto y = base.norm.targets(base.rows);
    y_low = std::numeric_limits<double>::infinity();
    y_high = -y_low;
    for (double v : y)
      if (v == v) {
        y_low = std::min(y_low, v);
        y_high = std::max(y_high, v);
      }
    const double w = std::max(y_high - y_low, 1.0);
    y_low -= w;
    y_high += w;
  }
  detail::Logistic failure;

  [[nodiscard]] std::size_t expanded_width() const {
    const std::size_t k = interacting.size();
    return input.columns.size() + k * (k + 1) / 2;
  }
  // Standardised base features followed by products, then centred and scaled.
  [[nodiscard]] Eigen::MatrixXd expand(const std::vector<double>& z, std::size_t rows) const {
    const std::size_t b = input.columns.size(), k = interacting.size();
    Eigen::MatrixXd X(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(expanded_width()));
    for (std::size_t i = 0; i < rows; ++i) {
      const double* zi = z.data() + i * b;
      Eigen::Index c = 0;
      for (std::size_t j = 0; j < b; ++j) X(static_cast<Eigen::Index>(i), c++) = zi[j];
      for (std::size_t a = 0; a < k; ++a)
        for (std::size_t bb = a; bb < k; ++bb) X(static_cast<Eigen::Index>(i), c++) = zi[interacting[a]] * zi[interacting[bb]];
    }
    if (!expanded_mean.empty())
      for (Eigen::Index j = 0; j < X.cols(); ++j)
        X.col(j) = (X.col(j).array() - expanded_mean[static_cast<std::size_t>(j)]) * expanded_scale[static_cast<std::size_t>(j)];
    return X;
  }
};

namespace {

void train(RidgeSurrogate::State& s, const RidgeOptions& o) {
  const auto& rows = s.base.rows;
  const auto& enc = s.base.encoder;
  s.input.fit(rows, enc.columns({FeatureRole::device, FeatureRole::problem, FeatureRole::kernel, FeatureRole::parameter_log,
                                 FeatureRole::parameter_one_hot, FeatureRole::parameter_category, FeatureRole::feature}));
  s.interacting.clear();
  if (o.interactions) {
    for (std::size_t j = 0; j < s.input.columns.size(); ++j) {
      const auto role = enc.roles()[s.input.columns[j]];
      if (s.input.scale[j] > 0 && (role == FeatureRole::parameter_log || role == FeatureRole::device ||
                                   role == FeatureRole::problem || role == FeatureRole::feature))
        s.interacting.push_back(j);
    }
  }
  const auto ok = detail::ok_rows(rows);
  const auto y_all = s.base.norm.targets(rows);
  std::vector<double> x_ok(ok.size() * rows.dim);
  for (std::size_t i = 0; i < ok.size(); ++i)
    std::copy_n(rows.x.data() + ok[i] * rows.dim, rows.dim, x_ok.data() + i * rows.dim);
  const auto z = s.input.apply(x_ok.data(), ok.size(), rows.dim);
  s.expanded_mean.clear();
  s.expanded_scale.clear();
  Eigen::MatrixXd X = s.expand(z, ok.size());
  const Eigen::Index n = X.rows(), p = X.cols();
  s.expanded_mean.resize(static_cast<std::size_t>(p));
  s.expanded_scale.resize(static_cast<std::size_t>(p));
  for (Eigen::Index j = 0; j < p; ++j) {
    const double m = X.col(j).mean();
    const double sd = std::sqrt((X.col(j).array() - m).square().mean());
    s.expanded_mean[static_cast<std::size_t>(j)] = m;
    s.expanded_scale[static_cast<std::size_t>(j)] = sd > 1e-12 ? 1.0 / sd : 0.0;
    X.col(j) = (X.col(j).array() - m) * s.expanded_scale[static_cast<std::size_t>(j)];
  }
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) y(i) = y_all[ok[static_cast<std::size_t>(i)]];
  s.intercept = y.mean();
  y.array() -= s.intercept;

  // Eigenbasis of X'X: every penalty's fit and exact leave-one-out residuals cost O(n p).
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(X.transpose() * X);
  const Eigen::VectorXd e = eig.eigenvalues().cwiseMax(0.0);
  const Eigen::MatrixXd Z = X * eig.eigenvectors();
  const Eigen::VectorXd zy = Z.transpose() * y;
  const Eigen::MatrixXd Z2 = Z.array().square().matrix();
  double best = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best_coef, best_loo;
  for (double factor : o.lambdas) {
    const double lambda = factor * static_cast<double>(n) + 1e-10;
    const Eigen::VectorXd inv = (e.array() + lambda).inverse();
    const Eigen::VectorXd coef = zy.cwiseProduct(inv);
    const Eigen::VectorXd fitted = Z * coef;
    const Eigen::VectorXd h = (Z2 * inv).array() + 1.0 / static_cast<double>(n);
    const Eigen::VectorXd loo = (y - fitted).array() / (1.0 - h.array()).max(1e-6);
    const double mse = loo.squaredNorm() / static_cast<double>(n);
    if (mse < best) {
      best = mse;
      best_coef = coef;
      best_loo = loo;
      s.lambda = factor;
    }
  }
  const Eigen::VectorXd w = eig.eigenvectors() * best_coef;
  s.weights.assign(w.data(), w.data() + w.size());
  std::vector<double> loo(best_loo.data(), best_loo.data() + best_loo.size());
  s.q05 = detail::quantile(loo, 0.05);
  s.q95 = detail::quantile(loo, 0.95);

  // Failure classifier on the base features of every row.
  const auto z_all = s.input.apply(rows.x.data(), rows.rows(), rows.dim);
  std::vector<double> failed(rows.rows());
  for (std::size_t i = 0; i < rows.rows(); ++i) failed[i] = rows.ok(i) ? 0.0 : 1.0;
  s.failure.fit(z_all, s.input.columns.size(), failed, o.logistic_lambda);
  s.set_range();
}

}  // namespace

RidgeSurrogate::RidgeSurrogate(RidgeOptions options) : m_options(std::move(options)) {
  if (m_options.lambdas.empty()) throw invalid_argument_error("RidgeOptions::lambdas is empty");
}

void RidgeSurrogate::fit(std::span<const Observation> observations) {
  m_state = detail::fit_tabular<State>(observations, m_options, "ridge surrogate", train);
}

void RidgeSurrogate::update(std::span<const Observation> observations) {
  if (!m_state) return fit(observations);
  if (observations.empty()) return;
  m_state = detail::refit_tabular(*m_state, observations, m_options, train);
}

double RidgeSurrogate::chosen_lambda() const { return m_state ? m_state->lambda : 0.0; }

std::vector<Forecast> RidgeSurrogate::predict(std::span<const Candidate> candidates) const {
  if (!m_state) throw invalid_argument_error("ridge surrogate: predict() before fit()");
  const State& s = *m_state;
  const auto x = s.base.encoder.encode(candidates);
  const auto z = s.input.apply(x.data(), candidates.size(), s.base.encoder.dimension());
  const Eigen::MatrixXd X = s.expand(z, candidates.size());
  const Eigen::VectorXd w = Eigen::Map<const Eigen::VectorXd>(s.weights.data(), static_cast<Eigen::Index>(s.weights.size()));
  const Eigen::VectorXd mean = (X * w).array() + s.intercept;
  std::vector<RowPrediction> rows(candidates.size());
  const std::size_t b = s.input.columns.size();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double m = std::clamp(mean(static_cast<Eigen::Index>(i)), s.y_low, s.y_high);
    rows[i] = {m, m + s.q05, m + s.q95, s.failure.predict(z.data() + i * b, b)};
  }
  return detail::to_forecasts(candidates, s.base.norm, rows);
}

void RidgeSurrogate::save(ArchiveWriter& w) const {
  if (!m_state) throw invalid_argument_error("ridge surrogate: save() before fit()");
  const State& s = *m_state;
  detail::write_tag(w, "ridge", 1);
  w.f64s(m_options.lambdas);
  w.u32(m_options.interactions ? 1 : 0);
  w.f64(m_options.logistic_lambda);
  w.u64(m_options.encoder.max_one_hot);
  detail::save_base(w, s.base);
  s.input.save(w);
  w.f64s(std::vector<double>(s.interacting.begin(), s.interacting.end()));
  w.f64s(s.expanded_mean);
  w.f64s(s.expanded_scale);
  w.f64s(s.weights);
  w.f64(s.intercept);
  w.f64(s.lambda);
  w.f64(s.q05);
  w.f64(s.q95);
  s.failure.save(w);
}

RidgeSurrogate RidgeSurrogate::load(ArchiveReader& r) {
  detail::expect_tag(r, "ridge", 1);
  RidgeOptions o;
  o.lambdas = r.f64s();
  if (o.lambdas.empty()) r.fail("ridge: no penalties stored");
  o.interactions = r.u32() != 0;
  o.logistic_lambda = r.f64();
  o.encoder.max_one_hot = r.u64();
  RidgeSurrogate out(o);
  auto s = std::make_shared<State>();
  s->base = detail::load_base(r);
  s->input = detail::Standardiser::load(r);
  for (double v : r.f64s()) {
    if (!(v >= 0) || v >= static_cast<double>(s->input.columns.size())) r.fail("ridge: interaction column out of range");
    s->interacting.push_back(static_cast<std::size_t>(v));
  }
  for (auto c : s->input.columns)
    if (c >= s->base.encoder.dimension()) r.fail("ridge: input column out of range");
  s->expanded_mean = r.f64s();
  s->expanded_scale = r.f64s();
  s->weights = r.f64s();
  const std::size_t p = s->expanded_width();
  if (s->expanded_mean.size() != p || s->expanded_scale.size() != p || s->weights.size() != p)
    r.fail(fmt::format("ridge: weights have {} entries, the features {}", s->weights.size(), p));
  s->intercept = r.f64();
  s->lambda = r.f64();
  s->q05 = r.f64();
  s->q95 = r.f64();
  s->failure = detail::Logistic::load(r, s->input.columns.size());
  s->set_range();
  out.m_state = std::move(s);
  return out;
}

}  // namespace gpuforecast
