#pragma once
// A fake OpenAI-compatible server on 127.0.0.1 for the LLM tests (fake_llm_server.py), started
// here and stopped by its pid; and a port nobody listens on.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

extern char** environ;

namespace gpuforecast::test {

namespace fs = std::filesystem;

class FakeServer {
 public:
  FakeServer() {
    m_dir = fs::temp_directory_path() / fmt_dir();
    fs::create_directories(m_dir);
    const auto port_file = m_dir / "port";
    const std::string script = std::string(GPUFORECAST_SOURCE_DIR) + "/tests/llm/fake_llm_server.py";
    std::string python = "python3", pf = port_file.string();
    char* argv[] = {python.data(), const_cast<char*>(script.c_str()), pf.data(), nullptr};
    REQUIRE(posix_spawnp(&m_pid, "python3", nullptr, nullptr, argv, environ) == 0);
    for (int i = 0; i < 200 && !fs::exists(port_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    INFO("the fake server did not write its port to " << port_file);
    REQUIRE(fs::exists(port_file));
    std::ifstream(port_file) >> m_port;
  }
  ~FakeServer() {
    stop();
    fs::remove_all(m_dir);
  }
  void stop() {
    if (m_pid > 0) {
      kill(m_pid, SIGKILL);
      waitpid(m_pid, nullptr, 0);
      m_pid = 0;
    }
  }
  [[nodiscard]] int port() const { return m_port; }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  [[nodiscard]] fs::path dir() const { return m_dir; }

 private:
  static std::string fmt_dir() { return "gpuforecast-llm-test-" + std::to_string(getpid()); }
  pid_t m_pid = 0;
  int m_port = 0;
  fs::path m_dir;
};

// A port nobody listens on: bound, read, closed.
inline int closed_port() {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

// The body of GET `path` from 127.0.0.1:port (HTTP/1.0, for the fake server's queries).
inline std::string http_get(int port, const std::string& path) {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  REQUIRE(connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  REQUIRE(write(s, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = read(s, buffer, sizeof buffer)) > 0;) response.append(buffer, static_cast<std::size_t>(n));
  close(s);
  const auto body = response.find("\r\n\r\n");
  return body == std::string::npos ? std::string() : response.substr(body + 4);
}

}  // namespace gpuforecast::test
