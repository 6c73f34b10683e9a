#pragma once
// A search observer that writes what happens as it happens, one JSON object per line (JSON
// Lines; schema in docs/events.md, version event_log_version): the beginning, each ranked
// round's forecasts, each screening, each measurement (with the forecast made before it and its
// realised error), each fault (a compile error, a crash, a hang), each anomaly reported to the
// run (run/'s AnomalyMonitor, the GPU's health), each farm rank lost, each round and the end
// (with the reason when the search was stopped). Every line is written whole and flushed when
// its event happens, so a killed search leaves every event up to the kill; readers skip a last
// line cut short and say so.
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>

#include "gpuforecast/search/observer.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// 2: "fault", "resumed" and "rank_lost" lines; the end line's "reason".
inline constexpr int event_log_version = 2;

struct EventLogOptions {
  std::string run;             // a label written into every line ("surrogate seed 3"), "" for none
  bool all_decisions = false;  // one "decision" line per proposed candidate: thousands per round
  // Why a search stopped before its budget ("interrupted by SIGTERM"), asked when it ends
  // stopped: the end line's reason. Unset: "stopped by an observer".
  std::function<std::string()> stop_reason;
  // A run continued from the cache of an earlier one (search/resume.hpp): that file, and the
  // configurations it serves (Config::key()). A "resumed" line follows "begin", and the measured
  // lines of served configurations say "resumed": true.
  std::string resumed_from;
  std::shared_ptr<const std::unordered_set<std::string>> resumed_configs;
};

class EventLog {
 public:
  // Creates (or replaces) `path` when the search begins; gpuforecast::error naming it if it cannot.
  explicit EventLog(std::string path, EventLogOptions options = {});
  EventLog(EventLog&&) noexcept;
  EventLog& operator=(EventLog&&) noexcept;
  ~EventLog();

  void on_begin(const SearchBegin& e);
  void on_forecasted(const SearchForecasted& e);
  void on_screened(const SearchScreened& e);
  void on_measured(const SearchMeasured& e);
  void on_round(const SearchRound& e);
  void on_end(const SearchEnd& e);
  // An anomaly reported to the run (its AnomalyMonitor's flags, the device's health read through
  // NVML): written as an "anomaly" line.
  void on_anomaly(const SearchAnomaly& a);
  // A farm's rank given up on: a "rank_lost" line (which, why, what it held, where that went).
  void on_worker_lost(const SearchWorkerLost& e);

  [[nodiscard]] const std::string& path() const noexcept { return m_path; }

 private:
  struct State;
  std::string m_path;
  EventLogOptions m_options;
  std::unique_ptr<State> m_state;
};

}  // namespace gpuforecast
