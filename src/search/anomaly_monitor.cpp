#include "gpuforecast/search/anomaly_monitor.hpp"

#include <fmt/core.h>

#include <cmath>

namespace gpuforecast {

AnomalyMonitor::AnomalyMonitor(AnomalyMonitorOptions options, std::function<void(const SearchAnomaly&)> on_anomaly)
    : m_options(options),
      m_on_anomaly(std::move(on_anomaly)),
      m_outliers(options.outlier_level),
      m_drift(options.drift) {}

void AnomalyMonitor::on_forecasted(const SearchForecasted& e) {
  for (std::size_t i = 0; i < e.proposed.size() && i < e.decisions.size(); ++i)
    if (e.decisions[i].forecast.median_ms > 0 && std::isfinite(e.decisions[i].forecast.median_ms))
      m_forecast_ms[e.proposed[i].key()] = e.decisions[i].forecast.median_ms;
}

void AnomalyMonitor::on_round(const SearchRound&) { m_forecast_ms.clear(); }

void AnomalyMonitor::raise(SearchAnomaly a) {
  if (m_on_anomaly) m_on_anomaly(a);
  m_anomalies.push_back(std::move(a));
}

void AnomalyMonitor::on_measured(const SearchMeasured& e) {
  const Measurement& m = e.measurement;
  if (!m.ok() || !(m.median_ms > 0)) return;
  if (const auto r = repeat_anomaly(m.samples_ms, m_options.repeats))
    raise({e.index, "repeat_" + r->kind, e.config, r->statistic, r->p_value, r->detail});
  const auto it = m_forecast_ms.find(e.config.key());
  if (it == m_forecast_ms.end()) return;  // measured without a forecast: nothing to compare
  const double ratio = std::log(m.median_ms / it->second);
  const double p = m_outliers.p_value_then_learn(ratio);
  if (m_outliers.flags(p))
    raise({e.index, "slow_outlier", e.config, ratio, p,
           fmt::format("measured {:.4g} ms, {:.2f}x the forecast {:.4g} ms (conformal p = {:.3g} against {} earlier "
                       "measurements)",
                       m.median_ms, std::exp(ratio), it->second, p, m_outliers.history() - 1)});
  if (m_drift.observe(ratio))
    raise({e.index, "step_drift", e.config, m_options.drift.h, 1.0,
           fmt::format("measured against forecast shifted up for several measurements (CUSUM above {} MADs of the "
                       "earlier ratios): a slower device?",
                       m_options.drift.h)});
}

}  // namespace gpuforecast
