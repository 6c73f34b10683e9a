#include "monitor/dashboard_server.hpp"

#include <fmt/core.h>
#include <httplib.h>

#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "gpuforecast/core/error.hpp"
#include "monitor/dashboard_page.hpp"

namespace gpuforecast::detail::monitor {

struct DashboardServer::Impl {
  httplib::Server server;
  std::thread thread;
  std::string host;
  int port = 0;
};

DashboardServer::DashboardServer(const MonitorHub& hub, const std::string& host, int port)
    : m_impl(std::make_unique<Impl>()) {
  if (port < 0 || port > 65535) throw invalid_argument_error(fmt::format("metrics port must lie in 0..65535, not {}", port));
  auto& s = m_impl->server;
  s.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(dashboard_page()), "text/html; charset=utf-8");
  });
  s.Get("/metrics", [&hub](const httplib::Request&, httplib::Response& res) {
    res.set_content(hub.metrics_text(), "text/plain; version=0.0.4; charset=utf-8");
  });
  s.Get("/api/state", [&hub](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(hub.state_json(), "application/json");
  });
  // cpp-httplib's default also sets SO_REUSEPORT, with which a second server binds the same port
  // and the kernel shares the connections between the two: a second search would answer for
  // the first. SO_REUSEADDR alone still lets a port in TIME_WAIT be bound again.
  s.set_socket_options([](socket_t sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  m_impl->host = host;
  if (port == 0) {
    m_impl->port = s.bind_to_any_port(host);
    if (m_impl->port < 0) throw error(fmt::format("cannot serve metrics on {}: no free port could be bound", host));
  } else {
    if (!s.bind_to_port(host, port))
      throw error(fmt::format("cannot serve metrics on {}:{}: the address is in use or not this machine's", host, port));
    m_impl->port = port;
  }
  m_impl->thread = std::thread([this] { m_impl->server.listen_after_bind(); });
  // stop() before the loop has started would be missed and the loop run on (cpp-httplib 0.11):
  // the constructor returns once the server is running, so the destructor can always stop it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!s.is_running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      s.stop();
      m_impl->thread.detach();
      throw error(fmt::format("the metrics server on {}:{} did not start within 10 s", host, m_impl->port));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

DashboardServer::~DashboardServer() {
  m_impl->server.stop();
  if (m_impl->thread.joinable()) m_impl->thread.join();
}

int DashboardServer::port() const noexcept { return m_impl->port; }

std::string DashboardServer::url() const { return fmt::format("http://{}:{}/", m_impl->host, m_impl->port); }

}  // namespace gpuforecast::detail::monitor
