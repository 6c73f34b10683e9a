#include "run_stacked_views.hpp"

#include <algorithm>
#include <cmath>

#include "compose/model_impl.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast::detail::compose {

namespace {
bool positive(double x) { return x > 0 && std::isfinite(x); }
}  // namespace

RunStackedViews::RunStackedViews(Model base, RunStackedViewsOptions options)
    : m_base(std::move(base)), m_options(options) {
  if (!has_views(m_base)) throw invalid_argument_error("run-stacked views: the model holds no views");
  m_options.min_measurements = std::max<std::size_t>(m_options.min_measurements, 3);
}

bool RunStackedViews::has_views(const Model& m) { return m.impl().views && !m.impl().views->models.empty(); }

void RunStackedViews::choose_views_from(std::span<const Observation> o) {
  if (m_chosen) return;
  for (const auto& x : o) {
    if (!x.measurement.ok() || !positive(x.measurement.median_ms)) continue;
    const Candidate& c = x.candidate;
    m_chosen = true;
    m_kernel = c.kernel;
    m_device = c.device ? c.device->name : std::string();
    const std::string vendor = c.device ? c.device->vendor : std::string();
    m_views = m_base.impl().views->of(m_kernel, vendor, m_device);
    return;
  }
}

std::vector<std::string> RunStackedViews::view_devices() const {
  std::vector<std::string> out;
  for (const ViewModel* v : m_views) out.push_back(v->device);
  return out;
}

bool RunStackedViews::is_run_candidate(const Candidate& c) const {
  return c.kernel == m_kernel && (c.device ? c.device->name : std::string()) == m_device;
}

bool RunStackedViews::applies_to(std::span<const Candidate> c) const {
  return m_stacking && !c.empty() && std::all_of(c.begin(), c.end(), [&](const Candidate& x) { return is_run_candidate(x); });
}

std::vector<ViewForecasts> RunStackedViews::view_forecasts(std::span<const Candidate> c) const {
  return forecast_views(m_views, c);
}

std::vector<std::optional<Forecast>> RunStackedViews::stack(std::span<const ViewForecasts> views) const {
  std::vector<std::optional<Forecast>> out(views.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    bool usable = true;
    for (std::size_t v = 0; v < views[i].size(); ++v)
      if (m_stacking->weights[v] > 0 && !positive(views[i][v].median_ms)) usable = false;
    if (usable) out[i] = m_stacking->apply(views[i]);
  }
  return out;
}

std::optional<std::vector<std::optional<Forecast>>> RunStackedViews::predict(std::span<const Candidate> c) const {
  if (!applies_to(c)) return std::nullopt;
  return stack(view_forecasts(c));
}

std::optional<std::vector<std::optional<Forecast>>> RunStackedViews::predict(std::span<const Candidate> c,
                                                                            std::span<const ViewForecasts> views) const {
  if (views.size() != c.size()) throw invalid_argument_error("run-stacked views: one view forecast per candidate expected");
  if (!applies_to(c)) return std::nullopt;
  return stack(views);
}

bool RunStackedViews::records(const Observation& o) const {
  return o.measurement.ok() && positive(o.measurement.median_ms) && is_run_candidate(o.candidate);
}

std::vector<ViewForecasts> RunStackedViews::view_forecasts_of(std::span<const Observation> o) {
  choose_views_from(o);
  std::vector<Candidate> ok;
  for (const auto& x : o)
    if (x.measurement.ok()) ok.push_back(x.candidate);
  const auto taken = ok.empty() ? std::vector<ViewForecasts>{} : view_forecasts(ok);
  std::vector<ViewForecasts> out(o.size());
  for (std::size_t i = 0, j = 0; i < o.size(); ++i)
    if (o[i].measurement.ok()) out[i] = taken[j++];
  return out;
}

void RunStackedViews::update(std::span<const Observation> o) { update(o, view_forecasts_of(o)); }

void RunStackedViews::update(std::span<const Observation> o, std::span<const ViewForecasts> views) {
  if (views.size() != o.size())
    throw invalid_argument_error("run-stacked views: one view forecast per observation expected");
  choose_views_from(o);
  if (m_views.empty()) return;
  bool added = false;
  for (std::size_t i = 0; i < o.size(); ++i) {
    if (!records(o[i])) continue;
    if (views[i].size() != m_views.size())
      throw invalid_argument_error("run-stacked views: an observation's view forecasts do not match the run's views");
    // A point some view cannot forecast (no positive time) tells the weights nothing.
    if (!std::all_of(views[i].begin(), views[i].end(), [](const Forecast& f) { return positive(f.median_ms); })) continue;
    m_measured_views.push_back(views[i]);
    m_measured_ms.push_back(o[i].measurement.median_ms);
    added = true;
  }
  if (!added || m_measured_ms.size() < m_options.min_measurements) return;
  ViewStacking s = fit_view_stacking(m_measured_views, m_measured_ms);
  const bool some_view = std::any_of(s.weights.begin(), s.weights.end(), [](double w) { return w > 0; });
  if (some_view) m_stacking = std::move(s);
  else m_stacking.reset();
}

}  // namespace gpuforecast::detail::compose
