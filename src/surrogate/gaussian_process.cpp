#include "surrogate/gaussian_process.hpp"

#include <Eigen/Dense>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "gpuforecast/core/error.hpp"
#include "logistic.hpp"
#include "tabular.hpp"

namespace gpuforecast {

using detail::RowPrediction;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct GaussianProcessSurrogate::State {
  detail::TabularBase base;
  detail::Standardiser input;
  Eigen::VectorXd log_length;  // per input column
  double log_signal = 0, log_noise = 0;
  double mean = 0;             // of the normalised targets of the posterior rows
  double lower = -1, upper = 1;  // 5% / 95% quantiles of leave-one-out residuals
  std::vector<std::size_t> posterior_rows;  // training rows in the posterior
  detail::Logistic failure;                 // p_fail on the standardised inputs
  // Derived (not saved): posterior rows scaled by the length scales, their squared norms, and
  // K^-1 (y - mean).
  RowMatrix points;
  Eigen::VectorXd norms, alpha;
};

namespace {

const double kSqrt5 = std::sqrt(5.0);

// Matern 5/2 of scaled distance r, without the signal variance.
inline double matern(double r) { return (1.0 + kSqrt5 * r + 5.0 / 3.0 * r * r) * std::exp(-kSqrt5 * r); }
// With z = x / l: d matern(r) / d log l_j = length_factor(r) * (z_ij - z_kj)^2.
inline double length_factor(double r) { return 5.0 / 3.0 * (1.0 + kSqrt5 * r) * std::exp(-kSqrt5 * r); }

RowMatrix to_matrix(const std::vector<double>& z, std::size_t rows, std::size_t cols) {
  RowMatrix m(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  std::copy(z.begin(), z.end(), m.data());
  return m;
}

// Squared distances between the rows of a and b.
RowMatrix squared_distances(const RowMatrix& a, const RowMatrix& b, const Eigen::VectorXd& b_norms) {
  RowMatrix d2 = -2.0 * (a * b.transpose());
  d2.colwise() += a.rowwise().squaredNorm();
  d2.rowwise() += b_norms.transpose();
  return d2.cwiseMax(0.0);
}

struct Fit {
  Eigen::LLT<Eigen::MatrixXd> llt;
  Eigen::VectorXd alpha;
  double log_likelihood = -std::numeric_limits<double>::infinity();
  bool ok = false;
};

// Covariance of the scaled rows z, its Cholesky factor and alpha = K^-1 y; adds jitter if needed.
Fit factorise(const RowMatrix& z, const Eigen::VectorXd& y, double signal, double noise, Eigen::MatrixXd* k_signal) {
  const Eigen::VectorXd norms = z.rowwise().squaredNorm();
  const RowMatrix d2 = squared_distances(z, z, norms);
  Eigen::MatrixXd k = d2.array().sqrt().unaryExpr([](double r) { return matern(r); }).matrix() * signal;
  if (k_signal) *k_signal = k;
  Fit f;
  double jitter = 0;
  for (int attempt = 0; attempt < 6; ++attempt) {
    Eigen::MatrixXd kn = k;
    kn.diagonal().array() += noise + jitter;
    f.llt.compute(kn);
    if (f.llt.info() == Eigen::Success) {
      f.alpha = f.llt.solve(y);
      const double log_det = 2.0 * f.llt.matrixLLT().diagonal().array().log().sum();
      f.log_likelihood = -0.5 * y.dot(f.alpha) - 0.5 * log_det - 0.5 * static_cast<double>(y.size()) * std::log(2 * M_PI);
      f.ok = true;
      return f;
    }
    jitter = jitter == 0 ? 1e-8 * signal : jitter * 100;
  }
  return f;
}

void prepare(GaussianProcessSurrogate::State& s) {
  const auto& rows = s.base.rows;
  const std::size_t d = s.input.columns.size();
  const auto targets = s.base.norm.targets(rows);
  RowMatrix z(static_cast<Eigen::Index>(s.posterior_rows.size()), static_cast<Eigen::Index>(d));
  Eigen::VectorXd y(static_cast<Eigen::Index>(s.posterior_rows.size()));
  for (std::size_t i = 0; i < s.posterior_rows.size(); ++i) {
    const std::size_t r = s.posterior_rows[i];
    const auto x = s.input.apply(rows.x.data() + r * rows.dim, 1, rows.dim);
    for (std::size_t j = 0; j < d; ++j)
      z(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = x[j] * std::exp(-s.log_length[static_cast<Eigen::Index>(j)]);
    y[static_cast<Eigen::Index>(i)] = targets[r] - s.mean;
  }
  Fit f = factorise(z, y, std::exp(s.log_signal), std::exp(s.log_noise), nullptr);
  if (!f.ok) throw invalid_argument_error("gp surrogate: covariance matrix is not positive definite even with jitter");
  s.points = std::move(z);
  s.norms = s.points.rowwise().squaredNorm();
  s.alpha = std::move(f.alpha);
}

void train(GaussianProcessSurrogate::State& s, const GaussianProcessOptions& o) {
  const auto& rows = s.base.rows;
  const auto& enc = s.base.encoder;
  s.input.fit(rows, enc.columns({FeatureRole::device, FeatureRole::problem, FeatureRole::kernel, FeatureRole::parameter_log,
                                 FeatureRole::parameter_category, FeatureRole::feature}));
  const std::size_t d = s.input.columns.size();
  std::vector<std::size_t> ok = detail::ok_rows(rows);
  std::mt19937_64 rng(o.seed);
  std::shuffle(ok.begin(), ok.end(), rng);
  s.posterior_rows.assign(ok.begin(), ok.begin() + static_cast<std::ptrdiff_t>(std::min(ok.size(), o.max_points)));
  const std::size_t nh = std::min(ok.size(), std::max<std::size_t>(o.hyper_points, 2));
  const auto targets = s.base.norm.targets(rows);
  // Every row standardised once: the hyper-parameter subset and the failure classifier use it.
  const auto z_all = s.input.apply(rows.x.data(), rows.rows(), rows.dim);

  double mean = 0;
  for (auto r : s.posterior_rows) mean += targets[r];
  s.mean = mean / static_cast<double>(s.posterior_rows.size());

  // The hyper-parameter subset: the first nh of the shuffled ok rows.
  RowMatrix x(static_cast<Eigen::Index>(nh), static_cast<Eigen::Index>(d));
  Eigen::VectorXd y(static_cast<Eigen::Index>(nh));
  for (std::size_t i = 0; i < nh; ++i) {
    for (std::size_t j = 0; j < d; ++j) x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = z_all[ok[i] * d + j];
    y[static_cast<Eigen::Index>(i)] = targets[ok[i]] - s.mean;
  }
  double var = y.squaredNorm() / static_cast<double>(std::max<std::size_t>(nh, 1));
  if (!(var > 1e-12)) var = 1e-12;

  std::size_t active = 0;
  for (double sc : s.input.scale) active += sc > 0;
  const double prior_length = 0.5 * std::log(static_cast<double>(std::max<std::size_t>(active, 1)));
  constexpr double prior_sd = 1.5;  // log-normal prior on the length scales: keeps tiny data sane

  const Eigen::Index p = static_cast<Eigen::Index>(d) + 2;  // log lengths, log signal, log noise
  Eigen::VectorXd theta(p);
  theta.head(static_cast<Eigen::Index>(d)).setConstant(prior_length);
  theta[p - 2] = std::log(var);
  theta[p - 1] = std::log(0.05 * var);
  const double min_log_noise = std::log(1e-6 * var);
  Eigen::VectorXd m1 = Eigen::VectorXd::Zero(p), m2 = Eigen::VectorXd::Zero(p), best = theta;
  double best_objective = -std::numeric_limits<double>::infinity();
  const double b1 = 0.9, b2 = 0.999;
  for (int it = 0; it < o.iterations && nh >= 2; ++it) {
    const Eigen::ArrayXd length = theta.head(static_cast<Eigen::Index>(d)).array().exp();
    const RowMatrix z = x.array().rowwise() / length.transpose();
    const double signal = std::exp(theta[p - 2]), noise = std::exp(theta[p - 1]);
    Eigen::MatrixXd k_signal;
    Fit f = factorise(z, y, signal, noise, &k_signal);
    if (!f.ok) break;
    double objective = f.log_likelihood;
    for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(d); ++j)
      objective -= 0.5 * std::pow((theta[j] - prior_length) / prior_sd, 2);
    if (objective > best_objective) {
      best_objective = objective;
      best = theta;
    }
    // d logL / d theta = 0.5 tr((alpha alpha^T - K^-1) dK/dtheta).
    const Eigen::MatrixXd k_inv = f.llt.solve(Eigen::MatrixXd::Identity(static_cast<Eigen::Index>(nh), static_cast<Eigen::Index>(nh)));
    const Eigen::MatrixXd w = f.alpha * f.alpha.transpose() - k_inv;
    Eigen::VectorXd grad(p);
    // Length scales: dK_ik / d log l_j = signal * length_factor(r_ik) * (z_ij - z_kj)^2.
    const Eigen::VectorXd norms = z.rowwise().squaredNorm();
    const RowMatrix r = squared_distances(z, z, norms).array().sqrt();
    const Eigen::MatrixXd g = w.cwiseProduct(r.unaryExpr([](double v) { return length_factor(v); })) * signal;
    const Eigen::VectorXd g_rows = g.rowwise().sum();
    for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(d); ++j) {
      const Eigen::VectorXd zj = z.col(j);
      const double t = zj.array().square().matrix().dot(g_rows) - zj.dot(g * zj);
      grad[j] = t - (theta[j] - prior_length) / (prior_sd * prior_sd);
    }
    grad[p - 2] = 0.5 * w.cwiseProduct(k_signal).sum();
    grad[p - 1] = 0.5 * noise * w.trace();
    // Adam, ascending.
    m1 = b1 * m1 + (1 - b1) * grad;
    m2 = b2 * m2 + (1 - b2) * grad.cwiseProduct(grad);
    const double c1 = 1 - std::pow(b1, it + 1), c2 = 1 - std::pow(b2, it + 1);
    theta.array() += o.learning_rate * (m1.array() / c1) / ((m2.array() / c2).sqrt() + 1e-8);
    theta[p - 1] = std::max(theta[p - 1], min_log_noise);
    theta.head(static_cast<Eigen::Index>(d)) = theta.head(static_cast<Eigen::Index>(d)).cwiseMax(-6.0).cwiseMin(8.0);
  }
  s.log_length = best.head(static_cast<Eigen::Index>(d));
  s.log_signal = best[p - 2];
  s.log_noise = best[p - 1];

  // Interval: leave-one-out residuals of the hyper-parameter subset, r_i = alpha_i / [K^-1]_ii.
  if (nh >= 5) {
    const Eigen::ArrayXd length = s.log_length.array().exp();
    const RowMatrix z = x.array().rowwise() / length.transpose();
    Fit f = factorise(z, y, std::exp(s.log_signal), std::exp(s.log_noise), nullptr);
    if (f.ok) {
      const Eigen::MatrixXd k_inv =
          f.llt.solve(Eigen::MatrixXd::Identity(static_cast<Eigen::Index>(nh), static_cast<Eigen::Index>(nh)));
      std::vector<double> residuals(nh);
      for (std::size_t i = 0; i < nh; ++i) {
        const auto ii = static_cast<Eigen::Index>(i);
        residuals[i] = f.alpha[ii] / k_inv(ii, ii);  // y_i - mu_{-i}: truth minus forecast
      }
      s.lower = detail::quantile(residuals, 0.05);
      s.upper = detail::quantile(residuals, 0.95);
    }
  }
  // Failure classifier on every row (failed ones included), as the ridge baseline does.
  std::vector<double> failed(rows.rows());
  for (std::size_t i = 0; i < rows.rows(); ++i) failed[i] = rows.ok(i) ? 0.0 : 1.0;
  s.failure.fit(z_all, d, failed, 1.0);
  prepare(s);
}

}  // namespace

GaussianProcessSurrogate::GaussianProcessSurrogate(GaussianProcessOptions options) : m_options(std::move(options)) {
  if (m_options.max_points < 1) throw invalid_argument_error("GaussianProcessOptions::max_points must be >= 1");
  if (m_options.iterations < 0) throw invalid_argument_error("GaussianProcessOptions::iterations must be >= 0");
  if (!(m_options.learning_rate > 0)) throw invalid_argument_error("GaussianProcessOptions::learning_rate must be > 0");
}

void GaussianProcessSurrogate::fit(std::span<const Observation> observations) {
  auto s = detail::fit_tabular<State>(observations, m_options, "gp surrogate", train);
  if (s->posterior_rows.empty()) throw invalid_argument_error("gp surrogate: no successful observation to learn from");
  m_state = std::move(s);
}

void GaussianProcessSurrogate::update(std::span<const Observation> observations) {
  if (!m_state) return fit(observations);
  if (observations.empty()) return;
  m_state = detail::refit_tabular(*m_state, observations, m_options, train);
}

std::vector<double> GaussianProcessSurrogate::length_scales() const {
  if (!m_state) return {};
  std::vector<double> out;
  for (Eigen::Index j = 0; j < m_state->log_length.size(); ++j) out.push_back(std::exp(m_state->log_length[j]));
  return out;
}
double GaussianProcessSurrogate::signal_variance() const { return m_state ? std::exp(m_state->log_signal) : 0.0; }
double GaussianProcessSurrogate::noise_variance() const { return m_state ? std::exp(m_state->log_noise) : 0.0; }

std::vector<Forecast> GaussianProcessSurrogate::predict(std::span<const Candidate> candidates) const {
  if (!m_state) throw invalid_argument_error("gp surrogate: predict() before fit()");
  const State& s = *m_state;
  const std::size_t d = s.input.columns.size();
  const auto x = s.base.encoder.encode(candidates);
  const std::vector<double> z = s.input.apply(x.data(), candidates.size(), s.base.encoder.dimension());
  RowMatrix q = to_matrix(z, candidates.size(), d);
  q.array().rowwise() /= s.log_length.array().exp().transpose();
  const double signal = std::exp(s.log_signal);
  std::vector<RowPrediction> rows(candidates.size());
  constexpr Eigen::Index block = 512;
  for (Eigen::Index b0 = 0; b0 < q.rows(); b0 += block) {
    const Eigen::Index m = std::min(block, q.rows() - b0);
    const RowMatrix k = squared_distances(q.middleRows(b0, m), s.points, s.norms).array().sqrt().unaryExpr([](double r) {
      return matern(r);
    });
    const Eigen::VectorXd mu = (k * s.alpha) * signal;
    for (Eigen::Index i = 0; i < m; ++i) {
      const double v = s.mean + mu[i];
      const std::size_t c = static_cast<std::size_t>(b0 + i);
      rows[c] = {v, v + s.lower, v + s.upper, s.failure.predict(z.data() + c * d, d)};
    }
  }
  return detail::to_forecasts(candidates, s.base.norm, rows);
}

void GaussianProcessSurrogate::save(ArchiveWriter& w) const {
  if (!m_state) throw invalid_argument_error("gp surrogate: save() before fit()");
  const State& s = *m_state;
  detail::write_tag(w, "gp", 1);
  w.u64(m_options.max_points);
  w.u64(m_options.hyper_points);
  w.u64(static_cast<std::uint64_t>(m_options.iterations));
  w.f64(m_options.learning_rate);
  w.u64(m_options.seed);
  w.u64(m_options.encoder.max_one_hot);
  detail::save_base(w, s.base);
  s.input.save(w);
  w.f64s(std::vector<double>(s.log_length.data(), s.log_length.data() + s.log_length.size()));
  w.f64(s.log_signal);
  w.f64(s.log_noise);
  w.f64(s.mean);
  w.f64(s.lower);
  w.f64(s.upper);
  std::vector<double> posterior(s.posterior_rows.begin(), s.posterior_rows.end());
  w.f64s(posterior);
  s.failure.save(w);
}

GaussianProcessSurrogate GaussianProcessSurrogate::load(ArchiveReader& r) {
  detail::expect_tag(r, "gp", 1);
  GaussianProcessOptions o;
  o.max_points = r.u64();
  o.hyper_points = r.u64();
  o.iterations = static_cast<int>(r.u64());
  o.learning_rate = r.f64();
  o.seed = r.u64();
  o.encoder.max_one_hot = r.u64();
  if (o.max_points < 1 || !(o.learning_rate > 0)) r.fail("gp: implausible options");
  GaussianProcessSurrogate out(o);
  auto s = std::make_shared<State>();
  s->base = detail::load_base(r);
  s->input = detail::Standardiser::load(r);
  for (auto c : s->input.columns)
    if (c >= s->base.encoder.dimension()) r.fail("gp: input column out of range");
  const auto lengths = r.f64s();
  if (lengths.size() != s->input.columns.size()) r.fail("gp: one length scale per input column expected");
  s->log_length = Eigen::Map<const Eigen::VectorXd>(lengths.data(), static_cast<Eigen::Index>(lengths.size()));
  s->log_signal = r.f64();
  s->log_noise = r.f64();
  s->mean = r.f64();
  s->lower = r.f64();
  s->upper = r.f64();
  for (double v : r.f64s()) {
    if (!(v >= 0) || v >= static_cast<double>(s->base.rows.rows()) || !s->base.rows.ok(static_cast<std::size_t>(v)))
      r.fail("gp: posterior row out of range or not a successful observation");
    s->posterior_rows.push_back(static_cast<std::size_t>(v));
  }
  if (s->posterior_rows.empty()) r.fail("gp: no posterior rows");
  s->failure = detail::Logistic::load(r, s->input.columns.size());
  for (double v : lengths)
    if (!std::isfinite(v)) r.fail("gp: length scale is not finite");
  if (!std::isfinite(s->log_signal) || !std::isfinite(s->log_noise)) r.fail("gp: variance is not finite");
  try {
    prepare(*s);
  } catch (const std::exception& e) {
    r.fail(e.what());
  }
  out.m_state = std::move(s);
  return out;
}

}  // namespace gpuforecast
