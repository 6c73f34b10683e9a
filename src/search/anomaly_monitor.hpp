#pragma once
// A search observer that flags odd GPU behaviour as the measurements land (the tests and their
// error rates: stats/anomaly_tests.hpp): a measurement much slower than the forecast the
// model made of it before it was measured; when the benchmarker times a sentinel with each
// measurement (Measurement::sentinel_ms), a device slower than before at that measurement and a
// lasting step of the sentinel; without one, a lasting shift of measured against forecast; and
// repeats that rose while one measurement ran, or in several measurements in a row. A flag
// never drops or changes a measurement: it is reported beside it (EventLog writes it as an
// "anomaly" line).
#include <cstddef>
#include <deque>
#include <optional>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "stats/anomaly_tests.hpp"
#include "gpuforecast/core/config.hpp"
#include "gpuforecast/search/observer.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct AnomalyMonitorOptions {
  double outlier_level = 0.01;  // SlowOutlierTest's level: the false-flag rate held on exchangeable data
  double slow_device_level = 0.005;  // SlowDeviceTest's level, on measurements that carry sentinel repeats
  StepDriftOptions drift;
  double repeat_level = 0.01;     // RepeatRiseTest's level
  double repeat_min_rise = 0.05;  // and the least rise it flags, in log runtime (~5%)
  // Rises in this many measurements in a row, each at least repeat_min_rise and unusual at
  // RunTest's threshold for repeat_level, flag every one of them (0: no run test).
  std::size_t repeat_run_length = 3;
};

class AnomalyMonitor {
 public:
  explicit AnomalyMonitor(AnomalyMonitorOptions options = {},
                          std::function<void(const SearchAnomaly&)> on_anomaly = {});

  void on_forecasted(const SearchForecasted& e);
  void on_measured(const SearchMeasured& e);
  void on_round(const SearchRound& e);

  [[nodiscard]] const std::vector<SearchAnomaly>& anomalies() const noexcept { return m_anomalies; }

 private:
  void raise(SearchAnomaly a);
  void judge_device(const SearchMeasured& e);
  void judge_repeats(const SearchMeasured& e);
  void judge_rise_run(SearchAnomaly a, bool flagged_alone);
  AnomalyMonitorOptions m_options;
  std::function<void(const SearchAnomaly&)> m_on_anomaly;
  SlowOutlierTest m_outliers;
  SlowDeviceTest m_slow_device;
  RepeatRiseTest m_repeats;
  std::optional<RunTest> m_rise_run;
  struct JudgedRise {
    SearchAnomaly anomaly;  // as a run would raise it
    bool raised = false;
  };
  std::deque<JudgedRise> m_recent_rises;  // the last run-length measurements judged for rises
  StepDrift m_drift;         // on measured against forecast, while no sentinel is seen
  StepDrift m_device_drift;  // on the sentinel's median, once measurements carry one
  bool m_seen_sentinel = false;
  std::unordered_map<std::string, double> m_forecast_ms;  // this round's forecasts, by Config::key()
  std::vector<SearchAnomaly> m_anomalies;
};

}  // namespace gpuforecast
