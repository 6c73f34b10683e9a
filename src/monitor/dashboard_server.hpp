#pragma once
// Serves a MonitorHub over HTTP (cpp-httplib) while a command runs, on its own thread:
//   /             the live dashboard (dashboard_page.hpp), which polls /api/state
//   /metrics      Prometheus' text exposition format
//   /api/state    the dashboard's data as JSON
// Bound to 127.0.0.1 unless told otherwise: what a search decides is nobody else's business.
#include <memory>
#include <string>

#include "monitor/monitor_hub.hpp"

namespace gpuforecast::detail::monitor {

class DashboardServer {
 public:
  // Binds host:port (port 0: a free port the system picks) and starts serving; throws
  // gpuforecast::error naming the address when it cannot bind.
  DashboardServer(const MonitorHub& hub, const std::string& host, int port);
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;
  ~DashboardServer();  // stops serving and joins the thread

  [[nodiscard]] int port() const noexcept;
  [[nodiscard]] std::string url() const;  // http://host:port/

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace gpuforecast::detail::monitor
