#include "logistic.hpp"

#include <Eigen/Dense>

#include <cmath>

namespace gpuforecast::detail {

void Logistic::fit(const std::vector<double>& x, std::size_t dim, const std::vector<double>& y, double lambda) {
  const std::size_t n = y.size();
  double failed = 0;
  for (double v : y) failed += v;
  rate = (failed + 0.5) / (static_cast<double>(n) + 1.0);
  w.clear();
  if (failed < 3 || static_cast<double>(n) - failed < 3) return;  // nothing to separate
  const Eigen::Index p = static_cast<Eigen::Index>(dim) + 1;
  Eigen::MatrixXd X(static_cast<Eigen::Index>(n), p);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < dim; ++j) X(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = x[i * dim + j];
    X(static_cast<Eigen::Index>(i), p - 1) = 1.0;
  }
  Eigen::VectorXd Y = Eigen::Map<const Eigen::VectorXd>(y.data(), static_cast<Eigen::Index>(n));
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(p);
  beta(p - 1) = std::log(rate / (1 - rate));
  Eigen::VectorXd reg = Eigen::VectorXd::Constant(p, lambda);
  reg(p - 1) = 0;
  for (int it = 0; it < 30; ++it) {
    const Eigen::VectorXd eta = X * beta;
    const Eigen::VectorXd mu = eta.unaryExpr([](double e) { return 1.0 / (1.0 + std::exp(-e)); });
    const Eigen::VectorXd wv = mu.array() * (1.0 - mu.array()) + 1e-9;
    const Eigen::VectorXd grad = X.transpose() * (mu - Y) + reg.cwiseProduct(beta);
    Eigen::MatrixXd H = X.transpose() * wv.asDiagonal() * X;
    H.diagonal() += reg + Eigen::VectorXd::Constant(p, 1e-8);
    const Eigen::VectorXd step = H.ldlt().solve(grad);
    beta -= step;
    if (step.cwiseAbs().maxCoeff() < 1e-7) break;
  }
  w.assign(beta.data(), beta.data() + p);
}

double Logistic::predict(const double* row, std::size_t dim) const {
  if (w.empty()) return rate;
  double e = w.back();
  for (std::size_t j = 0; j < dim; ++j) e += w[j] * row[j];
  return 1.0 / (1.0 + std::exp(-e));
}

void Logistic::save(ArchiveWriter& wr) const {
  wr.f64(rate);
  wr.f64s(w);
}

Logistic Logistic::load(ArchiveReader& r, std::size_t dim) {
  Logistic l;
  l.rate = r.f64();
  l.w = r.f64s();
  if (!l.w.empty() && l.w.size() != dim + 1) r.fail("failure classifier width does not match the features");
  return l;
}

}  // namespace gpuforecast::detail
