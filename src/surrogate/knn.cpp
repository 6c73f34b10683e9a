#include "surrogate/knn.hpp"

#include <Eigen/Dense>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "gpuforecast/core/error.hpp"
#include "tabular.hpp"

namespace gpuforecast {

using detail::RowPrediction;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct KnnSurrogate::State {
  detail::TabularBase base;
  detail::Standardiser input;
  RowMatrix points;             // standardised rows (all, failed included)
  Eigen::VectorXd norms;        // squared norms of points
  std::vector<double> target;   // normalised log-runtime, NaN when failed
  std::vector<std::size_t> ok;  // indices of ok rows
  int k = 5;
  double v0 = 0.01;             // variance floor added to the neighbours' spread
  double z05 = -1.645, z95 = 1.645;
};

namespace {

constexpr double kEps = 1e-3;

struct Neighbourhood {
  double mean = 0, var = 0, p_fail = 0;
};

// Queries in blocks: squared distances by one matrix product, then partial selection.
void neighbourhoods(const KnnSurrogate::State& s, const RowMatrix& q, std::size_t exclude_self_offset,
                    const std::vector<std::size_t>* self_index, std::vector<Neighbourhood>& out) {
  const Eigen::Index n = s.points.rows();
  const std::size_t k_ok = std::min<std::size_t>(static_cast<std::size_t>(s.k), s.ok.size());
  const std::size_t k_all = std::min<std::size_t>(static_cast<std::size_t>(std::max(s.k, 5)), static_cast<std::size_t>(n));
  constexpr Eigen::Index block = 512;
  std::vector<std::size_t> idx_ok(s.ok.size()), idx_all(static_cast<std::size_t>(n));
  for (Eigen::Index b0 = 0; b0 < q.rows(); b0 += block) {
    const Eigen::Index m = std::min(block, q.rows() - b0);
    const auto qb = q.middleRows(b0, m);
    RowMatrix d2 = -2.0 * (qb * s.points.transpose());
    d2.colwise() += qb.rowwise().squaredNorm();
    d2.rowwise() += s.norms.transpose();
    for (Eigen::Index i = 0; i < m; ++i) {
      const double* row = d2.row(i).data();
      const std::size_t self = self_index ? (*self_index)[static_cast<std::size_t>(b0 + i) + exclude_self_offset]
                                          : static_cast<std::size_t>(-1);
      auto dist = [&](std::size_t j) { return j == self ? std::numeric_limits<double>::infinity() : std::max(row[j], 0.0); };
      auto closer = [&](std::size_t a, std::size_t b) { return dist(a) < dist(b) || (dist(a) == dist(b) && a < b); };
      Neighbourhood nb;
      std::copy(s.ok.begin(), s.ok.end(), idx_ok.begin());
      const std::size_t kk = std::min(k_ok, self_index ? s.ok.size() - 1 : s.ok.size());
      std::nth_element(idx_ok.begin(), idx_ok.begin() + static_cast<std::ptrdiff_t>(kk - 1), idx_ok.end(), closer);
      double wsum = 0, mean = 0;
      for (std::size_t t = 0; t < kk; ++t) {
        const double w = 1.0 / (std::sqrt(dist(idx_ok[t])) + kEps);
        wsum += w;
        mean += w * s.target[idx_ok[t]];
      }
      mean /= wsum;
      double var = 0;
      for (std::size_t t = 0; t < kk; ++t) {
        const double w = 1.0 / (std::sqrt(dist(idx_ok[t])) + kEps);
        var += w * (s.target[idx_ok[t]] - mean) * (s.target[idx_ok[t]] - mean);
      }
      nb.mean = mean;
      nb.var = var / wsum;
      if (s.ok.size() == static_cast<std::size_t>(n)) {
        nb.p_fail = 0.5 / (static_cast<double>(k_all) + 1.0);
      } else {
        std::iota(idx_all.begin(), idx_all.end(), 0);
        const std::size_t ka = std::min(k_all, self_index ? idx_all.size() - 1 : idx_all.size());
        std::nth_element(idx_all.begin(), idx_all.begin() + static_cast<std::ptrdiff_t>(ka - 1), idx_all.end(), closer);
        double wf = 0, wa = 0;
        for (std::size_t t = 0; t < ka; ++t) {
          const double w = 1.0 / (std::sqrt(dist(idx_all[t])) + kEps);
          wa += w;
          wf += (s.target[idx_all[t]] == s.target[idx_all[t]]) ? 0.0 : w;
        }
        // Shrunk towards the base rate so one failed neighbour does not mean certain failure.
        const double prior = 1.0;
        nb.p_fail = (wf / wa * static_cast<double>(ka) + prior * detail::base_failure_rate(s.base.rows)) /
                    (static_cast<double>(ka) + prior);
      }
      out[static_cast<std::size_t>(b0 + i)] = nb;
    }
  }
}

RowMatrix to_matrix(const std::vector<double>& z, std::size_t rows, std::size_t cols) {
  RowMatrix m(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  std::copy(z.begin(), z.end(), m.data());
  return m;
}

void prepare(KnnSurrogate::State& s) {
  const auto& rows = s.base.rows;
  s.points = to_matrix(s.input.apply(rows.x.data(), rows.rows(), rows.dim), rows.rows(), s.input.columns.size());
  s.norms = s.points.rowwise().squaredNorm();
  s.target = s.base.norm.targets(rows);
  s.ok = detail::ok_rows(rows);
}

void train_knn(KnnSurrogate::State& s, const KnnOptions& o) {
  const auto& enc = s.base.encoder;
  s.input.fit(s.base.rows, enc.columns({FeatureRole::device, FeatureRole::problem, FeatureRole::kernel,
                                        FeatureRole::parameter_log, FeatureRole::parameter_category, FeatureRole::feature}));
  // The device's numbers move together (a device is one thing, not eleven): all of them count
  // as much as one parameter in distances, or the same configuration on another device would
  // always look farther than any configuration of the same device.
  std::size_t device_columns = 0;
  for (std::size_t j = 0; j < s.input.columns.size(); ++j)
    if (enc.roles()[s.input.columns[j]] == FeatureRole::device && s.input.scale[j] > 0) ++device_columns;
  if (device_columns > 1)
    for (std::size_t j = 0; j < s.input.columns.size(); ++j)
      if (enc.roles()[s.input.columns[j]] == FeatureRole::device)
        s.input.scale[j] /= std::sqrt(static_cast<double>(device_columns));
  prepare(s);
  // Choose k and calibrate the interval on leave-one-out neighbourhoods of a sample of ok rows.
  std::vector<std::size_t> sample = s.ok;
  std::mt19937_64 rng(o.seed);
  std::shuffle(sample.begin(), sample.end(), rng);
  sample.resize(std::min(sample.size(), o.selection_rows));
  if (sample.size() < 3 || s.ok.size() < 3) {
    s.k = std::min<int>(static_cast<int>(s.ok.size()), o.ks.front());
    return;
  }
  RowMatrix q(static_cast<Eigen::Index>(sample.size()), s.points.cols());
  for (std::size_t i = 0; i < sample.size(); ++i) q.row(static_cast<Eigen::Index>(i)) = s.points.row(static_cast<Eigen::Index>(sample[i]));
  double best = std::numeric_limits<double>::infinity();
  std::vector<Neighbourhood> nb(sample.size()), best_nb;
  int best_k = o.ks.front();
  for (int k : o.ks) {
    if (k < 1 || static_cast<std::size_t>(k) >= s.ok.size()) continue;
    s.k = k;
    neighbourhoods(s, q, 0, &sample, nb);
    double sse = 0;
    for (std::size_t i = 0; i < sample.size(); ++i) sse += std::pow(nb[i].mean - s.target[sample[i]], 2);
    if (sse < best) {
      best = sse;
      best_k = k;
      best_nb = nb;
    }
  }
  s.k = best_k;
  if (best_nb.empty()) return;
  std::vector<double> vars;
  for (const auto& n : best_nb) vars.push_back(n.var);
  s.v0 = std::max(detail::quantile(vars, 0.5), 1e-4);
  std::vector<double> z;
  for (std::size_t i = 0; i < sample.size(); ++i)
    z.push_back((s.target[sample[i]] - best_nb[i].mean) / std::sqrt(best_nb[i].var + s.v0));
  s.z05 = detail::quantile(z, 0.05);
  s.z95 = detail::quantile(z, 0.95);
}

}  // namespace

KnnSurrogate::KnnSurrogate(KnnOptions options) : m_options(std::move(options)) {
  if (m_options.ks.empty()) throw invalid_argument_error("KnnOptions::ks is empty");
}

void KnnSurrogate::fit(std::span<const Observation> observations) {
  m_state = detail::fit_tabular<State>(observations, m_options, "knn surrogate", train_knn);
}

void KnnSurrogate::update(std::span<const Observation> observations) {
  if (!m_state) return fit(observations);
  if (observations.empty()) return;
  m_state = detail::refit_tabular(*m_state, observations, m_options, train_knn);
}

int KnnSurrogate::chosen_k() const { return m_state ? m_state->k : 0; }

std::vector<Forecast> KnnSurrogate::predict(std::span<const Candidate> candidates) const {
  if (!m_state) throw invalid_argument_error("knn surrogate: predict() before fit()");
  const State& s = *m_state;
  const auto x = s.base.encoder.encode(candidates);
  const RowMatrix q = to_matrix(s.input.apply(x.data(), candidates.size(), s.base.encoder.dimension()), candidates.size(),
                                s.input.columns.size());
  std::vector<Neighbourhood> nb(candidates.size());
  neighbourhoods(s, q, 0, nullptr, nb);
  std::vector<RowPrediction> rows(candidates.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double sd = std::sqrt(nb[i].var + s.v0);
    rows[i] = {nb[i].mean, nb[i].mean + s.z05 * sd, nb[i].mean + s.z95 * sd, nb[i].p_fail};
  }
  return detail::to_forecasts(candidates, s.base.norm, rows);
}

void KnnSurrogate::save(ArchiveWriter& w) const {
  if (!m_state) throw invalid_argument_error("knn surrogate: save() before fit()");
  const State& s = *m_state;
  detail::write_tag(w, "knn", 1);
  w.f64s(std::vector<double>(m_options.ks.begin(), m_options.ks.end()));
  w.u64(m_options.selection_rows);
  w.u64(m_options.seed);
  w.u64(m_options.encoder.max_one_hot);
  detail::save_base(w, s.base);
  s.input.save(w);
  w.u32(static_cast<std::uint32_t>(s.k));
  w.f64(s.v0);
  w.f64(s.z05);
  w.f64(s.z95);
}

KnnSurrogate KnnSurrogate::load(ArchiveReader& r) {
  detail::expect_tag(r, "knn", 1);
  KnnOptions o;
  o.ks.clear();
  for (double v : r.f64s()) o.ks.push_back(static_cast<int>(v));
  if (o.ks.empty()) r.fail("knn: no neighbour counts stored");
  o.selection_rows = r.u64();
  o.seed = r.u64();
  o.encoder.max_one_hot = r.u64();
  KnnSurrogate out(o);
  auto s = std::make_shared<State>();
  s->base = detail::load_base(r);
  s->input = detail::Standardiser::load(r);
  for (auto c : s->input.columns)
    if (c >= s->base.encoder.dimension()) r.fail("knn: input column out of range");
  s->k = static_cast<int>(r.u32());
  if (s->k < 1) r.fail("knn: k must be positive");
  s->v0 = r.f64();
  s->z05 = r.f64();
  s->z95 = r.f64();
  prepare(*s);
  out.m_state = std::move(s);
  return out;
}

}  // namespace gpuforecast
