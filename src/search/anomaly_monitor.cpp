#include "search/anomaly_monitor.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace gpuforecast {

AnomalyMonitor::AnomalyMonitor(AnomalyMonitorOptions options, std::function<void(const SearchAnomaly&)> on_anomaly)
    : m_options(options),
      m_on_anomaly(std::move(on_anomaly)),
      m_outliers(options.outlier_level),
      m_slow_device(options.slow_device_level),
      m_repeats(options.repeat_level, options.repeat_min_rise),
      m_drift(options.drift),
      m_device_drift(options.drift) {
  if (options.repeat_run_length > 0) m_rise_run.emplace(options.repeat_level, options.repeat_run_length);
}

void AnomalyMonitor::on_forecasted(const SearchForecasted& e) {
  for (std::size_t i = 0; i < e.proposed.size() && i < e.decisions.size(); ++i)
    if (e.decisions[i].forecast.median_ms > 0 && std::isfinite(e.decisions[i].forecast.median_ms))
      m_forecast_ms[e.proposed[i].key()] = e.decisions[i].forecast.median_ms;
}

void AnomalyMonitor::on_round(const SearchRound&) { m_forecast_ms.clear(); }

void AnomalyMonitor::judge_device(const SearchMeasured& e) {
  const auto& s = e.measurement.sentinel_ms;
  m_seen_sentinel = true;
  const double p = m_slow_device.p_value(s);
  std::vector<double> sorted(s.begin(), s.end());
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  const bool slow = m_slow_device.flags(p);
  if (slow)
    raise({e.index, "slow_device", e.config, std::log(sorted.front()), p,
           fmt::format("the sentinel ran at {:.4g} ms (fastest of {} repeats), slower than all but a share {:.3g} of its "
                       "{} earlier repeats: the device was slow at this measurement",
                       sorted.front(), s.size(), p, m_slow_device.history())});
  if (m_device_drift.observe(std::log(median))) {
    raise({e.index, "step_drift", e.config, m_options.drift.h, 1.0,
           fmt::format("the sentinel's median ({:.4g} ms) shifted up for several measurements (CUSUM above {} MADs of "
                       "its earlier medians): the device became slower",
                       median, m_options.drift.h)});
    // The new level is the reference from here on, for both tests: otherwise every later
    // measurement would be flagged again against the old one.
    m_slow_device.reset();
    m_slow_device.learn(s);
    m_device_drift.reset();
    (void)m_device_drift.observe(std::log(median));
  } else if (!slow) {
    m_slow_device.learn(s);
  }
}

void AnomalyMonitor::raise(SearchAnomaly a) {
  if (m_on_anomaly) m_on_anomaly(a);
  m_anomalies.push_back(std::move(a));
}

void AnomalyMonitor::judge_repeats(const SearchMeasured& e) {
  const double rise = repeat_rise(e.measurement.samples_ms);
  if (!std::isfinite(rise)) return;  // too few repeats to tell
  const double p = m_repeats.p_value(rise);
  const bool flagged = m_repeats.flags(rise, p);
  const std::size_t history = m_repeats.history();
  m_repeats.learn(rise, flagged);
  SearchAnomaly a{e.index, "repeat_rise", e.config, rise, p,
                  fmt::format("the repeats rose {:.1f}% while the measurement ran (medians before and after), more "
                              "than all but a share {:.3g} of the {} earlier measurements' rises",
                              100 * (std::exp(rise) - 1), p, history)};
  if (flagged) raise(a);
  if (m_rise_run) judge_rise_run(std::move(a), flagged);
}

// Each measurement of a run is named once, with its own index, when the run is complete: the
// first ones were judged before anyone could know a run had begun.
void AnomalyMonitor::judge_rise_run(SearchAnomaly a, bool flagged_alone) {
  const bool unusual = a.p_value <= m_rise_run->threshold() && a.statistic >= m_options.repeat_min_rise;
  m_recent_rises.push_back({std::move(a), flagged_alone});
  if (m_recent_rises.size() > m_rise_run->length()) m_recent_rises.pop_front();
  if (!m_rise_run->observe(unusual)) return;
  for (auto& [r, raised] : m_recent_rises) {
    if (raised) continue;
    SearchAnomaly in_run = r;
    in_run.detail = fmt::format("{}; one of {} measurements in a row whose rises were each above all but a share "
                                "{:.3g} of the earlier ones (a lasting slowdown, not the device's single steps)",
                                r.detail, m_rise_run->length(), m_rise_run->threshold());
    raise(std::move(in_run));
    raised = true;
  }
}

void AnomalyMonitor::on_measured(const SearchMeasured& e) {
  const Measurement& m = e.measurement;
  const bool sentinel = !m.sentinel_ms.empty();
  // The sentinel ran after every measurement that reached the GPU, failed ones too: a slow
  // device shows there whatever became of the kernel.
  if (sentinel) judge_device(e);
  if (!m.ok() || !(m.median_ms > 0)) return;
  judge_repeats(e);
  const auto it = m_forecast_ms.find(e.config.key());
  if (it == m_forecast_ms.end()) return;  // measured without a forecast: nothing to compare
  const double ratio = std::log(m.median_ms / it->second);
  const double p = m_outliers.p_value_then_learn(ratio);
  if (m_outliers.flags(p))
    raise({e.index, "slow_outlier", e.config, ratio, p,
           fmt::format("measured {:.4g} ms, {:.2f}x the forecast {:.4g} ms (conformal p = {:.3g} against {} earlier "
                       "measurements)",
                       m.median_ms, std::exp(ratio), it->second, p, m_outliers.history() - 1)});
  if (!sentinel && !m_seen_sentinel && m_drift.observe(ratio))
    raise({e.index, "step_drift", e.config, m_options.drift.h, 1.0,
           fmt::format("measured against forecast shifted up for several measurements (CUSUM above {} MADs of the "
                       "earlier ratios): a slower device?",
                       m_options.drift.h)});
}

}  // namespace gpuforecast
