#pragma once
// What a running command shows to the outside: one MonitorHub per command gathers what every
// run's observer (MonitorHub::observer) sees, as Prometheus metrics (metrics_text, the text
// exposition format written by prometheus-cpp) and as the dashboard's state (state_json, the
// series the page draws). Thread-safe: runs searched side by side report into the same hub
// while a server thread reads it.
#include <cstddef>
#include <memory>
#include <string>

#include "calibration/selective_calibrator.hpp"
#include "gpuforecast/search/observer.hpp"

namespace gpuforecast::detail::monitor {

struct MonitorOptions {
  std::string title = "gpuforecast search";
  // The loss whose realised rate among answered forecasts is reported against risk_alpha, and
  // the interval level reported against the interval miss rate: the model's own calibration
  // options when a calibrated model is searched with, the defaults otherwise.
  CalibrationOptions calibration;
};

class RunObserver;

class MonitorHub {
 public:
  explicit MonitorHub(MonitorOptions options = {});
  MonitorHub(const MonitorHub&) = delete;
  MonitorHub& operator=(const MonitorHub&) = delete;
  ~MonitorHub();

  // The observer of one run (add it to the run's SearchContext); `run` labels its series.
  [[nodiscard]] RunObserver observer(std::string run);

  // Prometheus' text exposition format (version 0.0.4), every metric of every run.
  [[nodiscard]] std::string metrics_text() const;
  // The dashboard's data as JSON (schema: docs/monitoring.md, "The dashboard").
  [[nodiscard]] std::string state_json() const;
  // Marks the command finished: the page stops polling and says so.
  void finish();

  struct Impl;

 private:
  std::shared_ptr<Impl> m_impl;
};

// A search observer feeding one run's events into its hub.
class RunObserver {
 public:
  void on_begin(const SearchBegin& e);
  void on_forecasted(const SearchForecasted& e);
  void on_screened(const SearchScreened& e);
  void on_measured(const SearchMeasured& e);
  void on_round(const SearchRound& e);
  void on_end(const SearchEnd& e);
  // An anomaly reported to the run (its AnomalyMonitor's flags, the device's health through NVML).
  void on_anomaly(const SearchAnomaly& a);
  void on_worker_lost(const SearchWorkerLost& e);

 private:
  friend class MonitorHub;
  RunObserver(std::shared_ptr<MonitorHub::Impl> hub, std::size_t run) : m_hub(std::move(hub)), m_run(run) {}
  std::shared_ptr<MonitorHub::Impl> m_hub;
  std::size_t m_run;
};

}  // namespace gpuforecast::detail::monitor
