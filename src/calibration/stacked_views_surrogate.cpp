#include "calibration/stacked_views_surrogate.hpp"

#include <fmt/core.h>

#include <cmath>

#include "gpuforecast/core/error.hpp"
#include "surrogate/ratio_correction.hpp"

namespace gpuforecast {

StackedViewsSurrogate::StackedViewsSurrogate(std::vector<const ViewModel*> views, AnySurrogate ratio)
    : m_views(std::move(views)), m_ratio(std::move(ratio)) {
  if (m_views.empty()) throw invalid_argument_error("stacked views: no view to stack");
  if (m_ratio.empty()) throw invalid_argument_error("stacked views: no ratio surrogate");
}

StackedViewsSurrogate StackedViewsSurrogate::restored(std::vector<const ViewModel*> views, ViewStacking stacking,
                                                      AnySurrogate ratio) {
  if (stacking.weights.size() != views.size())
    throw invalid_argument_error(fmt::format("stacked views: {} weights for {} views", stacking.weights.size(), views.size()));
  StackedViewsSurrogate s(std::move(views), std::move(ratio));
  s.m_stacking = std::move(stacking);
  return s;
}

void StackedViewsSurrogate::fit(std::span<const Observation> o) {
  m_seen.assign(o.begin(), o.end());
  m_stacking.reset();
  update({});
}

void StackedViewsSurrogate::update(std::span<const Observation> o) {
  m_seen.insert(m_seen.end(), o.begin(), o.end());
  const auto [cands, times] = successful_runs(m_seen);
  if (cands.size() < 3)
    throw invalid_argument_error(fmt::format(
        "stacked views: {} successful measurements of {}; the stacking needs at least 3", cands.size(), m_seen.size()));
  const auto views = forecast_views(m_views, cands);
  m_stacking = fit_view_stacking(views, times);
  std::vector<Observation> rows;
  rows.reserve(m_seen.size());
  for (std::size_t i = 0, j = 0; i < m_seen.size(); ++i) {
    const bool ok = m_seen[i].measurement.ok() && m_seen[i].measurement.median_ms > 0;
    rows.push_back(ok ? detail::ratio_observation(m_seen[i], m_stacking->apply(views[j++]).median_ms) : m_seen[i]);
  }
  m_ratio.fit(rows);
}

std::vector<Forecast> StackedViewsSurrogate::predict(std::span<const Candidate> c) const {
  if (!m_stacking) throw invalid_argument_error("stacked views: predict before fit");
  const auto views = forecast_views(m_views, c);
  const auto ratio = m_ratio.predict(c);
  std::vector<Forecast> out;
  out.reserve(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    const Forecast stacked = m_stacking->apply(views[i]);
    // A view with no positive time for a configuration leaves its stacked forecast undefined.
    if (!(stacked.median_ms > 0 && std::isfinite(stacked.median_ms)))
      throw error(fmt::format("stacked views: candidate {} ({} on {}) has no positive stacked forecast ({} ms)", i,
                              c[i].kernel, c[i].device ? c[i].device->name : "no device", stacked.median_ms));
    out.push_back(detail::corrected_by_ratio(stacked, ratio[i]));
  }
  return out;
}

std::string StackedViewsSurrogate::kind() const { return "stacked views x " + m_ratio.kind(); }

}  // namespace gpuforecast
