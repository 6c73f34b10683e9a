#pragma once
// The options every long-running subcommand shares for being watched from outside:
//   --metrics-port N     serve Prometheus metrics and the live dashboard on 127.0.0.1:N (0: any)
//   --metrics-host H     bind another address instead (say 0.0.0.0, at your own risk)
//   --metrics-linger S   keep serving S seconds after the end, for a last scrape
//   --report FILE        write the dashboard with the final state as one static HTML file
// RunMonitor holds the hub, the server and the report for one command.
#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>

#include "calibration/selective_calibrator.hpp"
#include "monitor/monitor_hub.hpp"

namespace gpuforecast::cli {

struct MonitorArgs {
  std::optional<int> metrics_port;
  std::string metrics_host = "127.0.0.1";
  double metrics_linger = 0;
  std::string report;

  [[nodiscard]] bool wanted() const { return metrics_port.has_value() || !report.empty(); }
};

void add_monitor_options(CLI::App& cmd, MonitorArgs& args);

class RunMonitor {
 public:
  // Nothing happens unless args.wanted(). `calibration`: the loss and levels the realised risk
  // and interval misses are reported against (the searched model's, or the defaults).
  // Prints the dashboard's address on stderr once it is served.
  RunMonitor(const MonitorArgs& args, std::string title, const CalibrationOptions& calibration);
  RunMonitor(const RunMonitor&) = delete;
  RunMonitor& operator=(const RunMonitor&) = delete;
  ~RunMonitor();

  // Adds an observer of run `label` to a search context; nothing when not asked for.
  template <class Context>
  void watch(Context& ctx, std::string label) {
    if (detail::monitor::MonitorHub* h = hub()) ctx.add_observer(h->observer(std::move(label)));
  }
  [[nodiscard]] detail::monitor::MonitorHub* hub() noexcept;
  // The end of the command: the page says finished, the report is written, and the server
  // lingers as asked before it stops.
  void finish();

  struct Impl;

 private:
  std::unique_ptr<Impl> m_impl;
  MonitorArgs m_args;
};

// The calibration options of a model file (defaults for an empty path or an uncalibrated model).
[[nodiscard]] CalibrationOptions calibration_of_model(const std::string& model_path);

}  // namespace gpuforecast::cli
