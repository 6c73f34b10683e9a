#include "surrogate/ensemble.hpp"

#include <fmt/core.h>

#include <cmath>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "tabular.hpp"

namespace gpuforecast {

std::vector<Forecast> combine_forecasts(std::span<const std::vector<Forecast>> members, std::span<const double> weights) {
  if (members.empty()) throw invalid_argument_error("combine_forecasts: no members");
  const std::size_t n = members.front().size();
  for (const auto& m : members)
    if (m.size() != n) throw invalid_argument_error("combine_forecasts: members forecast different numbers of candidates");
  const std::vector<double> w = detail::normalised_weights(weights, members.size());
  std::vector<Forecast> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    double mu = 0, lo = 0, hi = 0, pf = 0, own = 0;
    for (std::size_t m = 0; m < members.size(); ++m) {
      const Forecast& f = members[m][i];
      mu += w[m] * std::log(f.median_ms);
      lo += w[m] * std::log(std::max(f.lower_ms, 1e-300));
      hi += w[m] * std::log(std::max(f.upper_ms, 1e-300));
      pf += w[m] * f.p_fail;
      own += w[m] * f.spread * f.spread;
    }
    double var = 0;
    for (std::size_t m = 0; m < members.size(); ++m) var += w[m] * std::pow(std::log(members[m][i].median_ms) - mu, 2);
    const double disagreement = std::sqrt(var);
    Forecast& f = out[i];
    f.median_ms = std::exp(mu);
    f.lower_ms = std::exp(std::min(lo, mu) - disagreement);
    f.upper_ms = std::exp(std::max(hi, mu) + disagreement);
    f.p_fail = pf;
    f.spread = std::sqrt(own + var);
  }
  return out;
}

namespace detail {
std::vector<double> normalised_weights(std::span<const double> weights, std::size_t members) {
  if (weights.empty()) return std::vector<double>(members, 1.0 / static_cast<double>(members));
  if (weights.size() != members)
    throw invalid_argument_error(fmt::format("ensemble: {} weights for {} members", weights.size(), members));
  double sum = 0;
  for (double w : weights) {
    if (!(w >= 0) || !std::isfinite(w))
      throw invalid_argument_error(fmt::format("ensemble: member weight {} is not a finite number >= 0", w));
    sum += w;
  }
  if (!(sum > 0)) throw invalid_argument_error("ensemble: member weights sum to 0");
  std::vector<double> out(weights.begin(), weights.end());
  for (double& w : out) w /= sum;
  return out;
}

void write_ensemble_header(ArchiveWriter& w, std::size_t members) {
  write_tag(w, "ensemble", 1);
  w.u64(members);
}
std::size_t read_ensemble_header(ArchiveReader& r) {
  expect_tag(r, "ensemble", 1);
  const auto n = r.u64();
  if (n == 0 || n > 64) r.fail(fmt::format("ensemble: implausible member count {}", n));
  return n;
}
void write_member(ArchiveWriter& w, const std::string& kind, const std::string& blob) {
  w.str(kind);
  w.bytes(blob);
}
std::string read_member(ArchiveReader& r, const std::string& expected_kind) {
  const auto kind = r.str();
  if (!expected_kind.empty() && kind != expected_kind)
    r.fail(fmt::format("ensemble: member is a \"{}\" where a \"{}\" was expected", kind, expected_kind));
  return r.bytes();
}
}  // namespace detail

AnyEnsemble::AnyEnsemble(std::vector<AnySurrogate> members, std::vector<double> weights)
    : m_members(std::move(members)) {
  if (m_members.empty()) throw invalid_argument_error("AnyEnsemble needs at least one member");
  for (const auto& m : m_members)
    if (m.empty()) throw invalid_argument_error("AnyEnsemble: a member is empty");
  m_weights = detail::normalised_weights(weights, m_members.size());
}

void AnyEnsemble::fit(std::span<const Observation> o) {
  for (auto& m : m_members) m.fit(o);
}
void AnyEnsemble::update(std::span<const Observation> o) {
  for (auto& m : m_members) m.update(o);
}
std::vector<Forecast> AnyEnsemble::predict(std::span<const Candidate> c) const {
  if (m_members.empty()) throw invalid_argument_error("AnyEnsemble: predict() on an empty ensemble");
  std::vector<std::vector<Forecast>> f;
  f.reserve(m_members.size());
  for (const auto& m : m_members) f.push_back(m.predict(c));
  return combine_forecasts(f, m_weights);
}
void AnyEnsemble::save(ArchiveWriter& w) const {
  detail::write_ensemble_header(w, m_members.size());
  for (const auto& m : m_members) {
    ArchiveWriter inner;
    m.save(inner);
    detail::write_member(w, m.kind(), inner.data());
  }
  detail::write_tag(w, "ensemble-weights", 1);
  w.f64s(m_weights);
}
AnyEnsemble AnyEnsemble::load(ArchiveReader& r) {
  const auto n = detail::read_ensemble_header(r);
  std::vector<AnySurrogate> members;
  for (std::size_t i = 0; i < n; ++i) {
    const auto kind = r.str();
    const auto blob = r.bytes();
    ArchiveReader inner(blob, r.origin() + " (ensemble member " + kind + ")");
    members.push_back(load_surrogate_archive(kind, inner));
  }
  // Files written before member weights existed end here: equal weights.
  std::vector<double> weights;
  if (!r.at_end()) {
    detail::expect_tag(r, "ensemble-weights", 1);
    weights = r.f64s();
    if (weights.size() != n) r.fail(fmt::format("ensemble: {} weights for {} members", weights.size(), n));
  }
  try {
    return AnyEnsemble(std::move(members), std::move(weights));
  } catch (const invalid_argument_error& e) {
    r.fail(e.what());
  }
}

}  // namespace gpuforecast
