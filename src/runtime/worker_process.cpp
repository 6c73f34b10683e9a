#include "runtime/worker_process.hpp"

#include <fmt/core.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast::detail {

namespace {
// Framing: 8-byte little-endian length, then a 1-byte tag and the payload.
constexpr char kProgress = 'P', kResult = 'R';

bool write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool send_message(int fd, char tag, const std::string& payload) {
  const std::uint64_t n = payload.size() + 1;
  return write_all(fd, &n, sizeof n) && write_all(fd, &tag, 1) && write_all(fd, payload.data(), payload.size());
}

bool receive_message(int fd, char& tag, std::string& payload) {
  std::uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n) || n == 0 || n > (std::uint64_t{1} << 36)) return false;
  if (!read_all(fd, &tag, 1)) return false;
  payload.resize(n - 1);
  return read_all(fd, payload.data(), payload.size());
}

// Waits until fd is readable; false on timeout.
bool wait_readable(int fd, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const auto left = std::chrono::duration<double, std::milli>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min(left, 1e9)) + 1);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return true;  // let the read report the error
  }
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "ended";
}

[[noreturn]] void child_main(int fd, int ordinal) {
  // The host program's crash handlers (test frameworks, loggers) must not run for a kernel
  // that takes the worker down: the parent reports it.
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT}) ::signal(sig, SIG_DFL);
  {
    std::string why;
    const driver::DriverApi* api = driver::driver(&why);
    std::unique_ptr<DeviceExecutor> executor;
    if (api) executor = std::make_unique<DeviceExecutor>(*api, ordinal, [fd] { send_message(fd, kProgress, {}); });
    char tag = 0;
    std::string payload;
    while (receive_message(fd, tag, payload)) {
      Measurement m;
      try {
        if (!executor) throw cuda_error(why);
        m = executor->run(deserialize_job(payload));
      } catch (const std::exception& e) {
        m.status = Status::runtime_failed;
        m.log = std::string("worker: ") + e.what();
      }
      if (!send_message(fd, kResult, serialize(m))) break;
    }
  }
  ::_exit(0);  // never run the parent's atexit handlers or static destructors
}
}  // namespace

WorkerProcess::WorkerProcess(int ordinal) : m_ordinal(ordinal) {}

WorkerProcess::~WorkerProcess() { stop(false); }

void WorkerProcess::start() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw cuda_error(fmt::format("socketpair: {}", std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]), ::close(fds[1]);
    throw cuda_error(fmt::format("fork: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], m_ordinal);
  }
  ::close(fds[1]);
  m_pid = pid;
  m_fd = fds[0];
  ++m_restarts;
  m_references.clear();
}

void WorkerProcess::stop(bool kill_now) {
  if (m_pid <= 0) return;
  if (m_fd >= 0) ::close(m_fd);  // a healthy child sees EOF and exits
  m_fd = -1;
  int status = 0;
  if (kill_now) {
    ::kill(m_pid, SIGKILL);
    ::waitpid(m_pid, &status, 0);
  } else {
    // Give it a moment to release the GPU cleanly, then insist.
    for (int i = 0; i < 200; ++i) {
      if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
        m_pid = -1;
        return;
      }
      ::usleep(10000);
    }
    ::kill(m_pid, SIGKILL);
    ::waitpid(m_pid, &status, 0);
  }
  m_pid = -1;
}

Measurement WorkerProcess::run(const Job& job, double timeout_s) {
  if (m_pid <= 0) start();
  Measurement m;
  if (!send_message(m_fd, 'J', serialize(job))) {
    stop(true);
    m.status = Status::runtime_failed;
    m.log = "worker process is gone before the job could be sent; restarted";
    m.reason = "runtime_failed";
    return m;
  }
  for (;;) {
    if (!wait_readable(m_fd, timeout_s)) {
      const pid_t pid = m_pid;
      stop(true);
      m.status = Status::timeout;
      m.reason = "timeout";
      m.log = fmt::format("no kernel finished within {} s: worker {} killed, a new one takes the next job", timeout_s, pid);
      return m;
    }
    char tag = 0;
    std::string payload;
    if (!receive_message(m_fd, tag, payload)) {
      ::close(m_fd);
      m_fd = -1;
      int status = 0;
      ::waitpid(m_pid, &status, 0);
      m.status = Status::runtime_failed;
      m.reason = "runtime_failed";
      m.log = fmt::format("worker {} {} while running the candidate; restarted", m_pid, describe_exit(status));
      m_pid = -1;
      return m;
    }
    if (tag == kProgress) continue;
    m = deserialize_measurement(payload);
    if (job.kind == Job::Kind::reference && m.status == Status::ok) m_references.insert(job.argument_set);
    // A sticky error was handled in the child by rebuilding its context; references are host
    // copies and survive that.
    return m;
  }
}

std::optional<std::string> run_in_child(const std::function<std::string()>& fn, double timeout_s, std::string* why) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    if (why) *why = std::strerror(errno);
    return std::nullopt;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    if (why) *why = std::strerror(errno);
    ::close(fds[0]), ::close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    char tag = kResult;
    try {
      out = fn();
    } catch (const std::exception& e) {
      out = e.what();
      tag = 'E';
    }
    send_message(fds[1], tag, out);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::optional<std::string> result;
  char tag = 0;
  std::string payload;
  if (!wait_readable(fds[0], timeout_s)) {
    if (why) *why = fmt::format("probe process did not answer within {} s", timeout_s);
    ::kill(pid, SIGKILL);
  } else if (!receive_message(fds[0], tag, payload)) {
    if (why) *why = "probe process died";
  } else if (tag == 'E') {
    if (why) *why = payload;
  } else {
    result = std::move(payload);
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return result;
}

}  // namespace gpuforecast::detail
