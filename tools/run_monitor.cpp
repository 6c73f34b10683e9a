#include "run_monitor.hpp"

#include <fmt/core.h>

#include <chrono>
#include <thread>

#include "calibration/model_bundle.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "monitor/dashboard_page.hpp"
#include "monitor/dashboard_server.hpp"
#include "numeric_options.hpp"

namespace gpuforecast::cli {

using detail::monitor::DashboardServer;
using detail::monitor::MonitorHub;

struct RunMonitor::Impl {
  MonitorHub hub;
  std::unique_ptr<DashboardServer> server;
  explicit Impl(detail::monitor::MonitorOptions o) : hub(std::move(o)) {}
};

void add_monitor_options(CLI::App& cmd, MonitorArgs& args) {
  cmd.add_option("--metrics-port", args.metrics_port,
                 "serve Prometheus metrics (/metrics) and a live dashboard (/) on this port while the run lasts "
                 "(0: a free port, printed on stderr)")
      ->check(CLI::Range(0, 65535));
  cmd.add_option("--metrics-host", args.metrics_host, "address the metrics and dashboard are served on")
      ->capture_default_str();
  cmd.add_option("--metrics-linger", args.metrics_linger,
                 "keep serving this many seconds after the run has ended (a last scrape)")
      ->capture_default_str();
  cmd.add_option("--report", args.report, "write the dashboard with the final state to this HTML file (opens without a server)");
}

RunMonitor::RunMonitor(const MonitorArgs& args, std::string title, const CalibrationOptions& calibration)
    : m_args(args) {
  if (!args.wanted()) return;
  detail::monitor::MonitorOptions o;
  o.title = std::move(title);
  o.calibration = calibration;
  m_impl = std::make_unique<Impl>(std::move(o));
  if (args.metrics_port) {
    m_impl->server = std::make_unique<DashboardServer>(m_impl->hub, args.metrics_host, *args.metrics_port);
    // One line a script can wait for and parse (tests/monitor/dashboard_browser_test.sh does).
    fmt::print(stderr, "gpuforecast: dashboard at {} (Prometheus metrics at {}metrics)\n", m_impl->server->url(),
               m_impl->server->url());
    std::fflush(stderr);
  }
}

RunMonitor::~RunMonitor() = default;

MonitorHub* RunMonitor::hub() noexcept { return m_impl ? &m_impl->hub : nullptr; }

void RunMonitor::finish() {
  if (!m_impl) return;
  m_impl->hub.finish();
  if (!m_args.report.empty()) detail::monitor::write_static_report(m_args.report, m_impl->hub.state_json());
  if (m_impl->server && m_args.metrics_linger > 0)
    std::this_thread::sleep_for(std::chrono::duration<double>(m_args.metrics_linger));
  m_impl->server.reset();
}

CalibrationOptions calibration_of_model(const std::string& model_path) {
  if (model_path.empty()) return {};
  // The calibration section alone: the dashboard states its alpha and delta, and needs no surrogate.
  const auto calibrator = calibration_from(read_model_file(model_path), model_path);
  return calibrator && calibrator->fitted() ? calibrator->options() : CalibrationOptions{};
}

}  // namespace gpuforecast::cli
