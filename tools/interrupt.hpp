#pragma once
// Ctrl-C (SIGINT) or SIGTERM during a search stops it as its budget would: the measurements in
// flight land, caches, traces, the event log and the report are written, the summary is printed,
// and the program exits with 128 + the signal's number, as a shell expects of an interrupted
// command. A second signal is not caught: it ends the program at once.
#include <csignal>
#include <string>

#include "gpuforecast/search/observer.hpp"

namespace gpuforecast::cli {

// Catches SIGINT and SIGTERM while it lives (the handlers before it are restored after).
class InterruptScope {
 public:
  InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
  ~InterruptScope();

 private:
  struct sigaction m_old_int {};
  struct sigaction m_old_term {};
};

// The signal that interrupted the program, 0 if none did.
[[nodiscard]] int interrupted_by() noexcept;
// "interrupted by SIGTERM (signal 15)", or "stopped by an observer" when no signal came: the
// reason an event log's end line gives.
[[nodiscard]] std::string interruption_reason();

// A search observer that asks the search to stop once a signal came.
struct StopOnInterrupt {
  bool on_measured(const SearchMeasured&) const noexcept { return interrupted_by() != 0; }
  bool on_round(const SearchRound&) const noexcept { return interrupted_by() != 0; }
};

}  // namespace gpuforecast::cli
