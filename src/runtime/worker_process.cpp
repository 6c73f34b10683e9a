#include "runtime/worker_process.hpp"

#include <fmt/core.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast::detail {

namespace {
// Framing: 8-byte little-endian length, then a 1-byte tag and the payload.
constexpr char kProgress = 'P', kResult = 'R', kResultThenExit = 'X';

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
      // After a sticky error a real driver refuses a new context in this process (seen on the
      // H200: cuDevicePrimaryCtxRetain keeps failing with CUDA_ERROR_ILLEGAL_ADDRESS), so the
      // worker ends and the next job gets a fresh process.
      if (executor && executor->context_rebuilt()) {
        send_message(fd, kResultThenExit, serialize(m));
        break;
      }
      if (!send_message(fd, kResult, serialize(m))) break;
    }
  }
  ::_exit(0);  // never run the parent's atexit handlers or static destructors
}

// A function run in a child process: its result (or exception text) goes back as one message.
[[noreturn]] void probe_main(int fd, std::string (*fn)()) {
  std::string out;
  char tag = kResult;
  try {
    out = fn();
  } catch (const std::exception& e) {
    out = e.what();
    tag = 'E';
  }
  send_message(fd, tag, out);
  ::_exit(0);
}

// ---- The clean spawner ------------------------------------------------------------------
// CUDA's state does not survive fork, and since CUDA 13 NVRTC initialises the driver in the
// process that compiles. So workers are not forked from this process, which compiles ahead of
// measuring, but from a spawner forked before this process first compiled or touched CUDA.
// The spawner is the workers' parent: it forks them, hands back their socket (SCM_RIGHTS) and
// reaps them on request. It exits when this process closes its socket (on exit, at the latest).

// One byte of data with room for one descriptor: the message both ends of SCM_RIGHTS agree on.
// It points into itself, so it stays where it was made.
struct FdMessage {
  explicit FdMessage(char b) : byte(b) {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;
  char byte;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
};

bool send_fd(int socket, int fd, const std::string& payload) {
  std::uint64_t n = payload.size();
  if (!write_all(socket, &n, sizeof n)) return false;
  FdMessage m('F');
  msghdr& msg = m.msg;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  ssize_t r;
  do r = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  return r == 1 && write_all(socket, payload.data(), payload.size());
}

bool receive_fd(int socket, int& fd, std::string& payload) {
  std::uint64_t n = 0;
  if (!read_all(socket, &n, sizeof n) || n > 4096) return false;
  FdMessage m(0);
  msghdr& msg = m.msg;
  ssize_t r;
  do r = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (r != 1 || !c || c->cmsg_type != SCM_RIGHTS) return false;
  std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  payload.resize(n);
  return read_all(socket, payload.data(), n);
}

std::string pack(std::int64_t a, std::int64_t b) {
  std::string out(16, '\0');
  std::memcpy(out.data(), &a, 8);
  std::memcpy(out.data() + 8, &b, 8);
  return out;
}

std::pair<std::int64_t, std::int64_t> unpack(const std::string& in) {
  std::int64_t a = 0, b = 0;
  if (in.size() == 16) std::memcpy(&a, in.data(), 8), std::memcpy(&b, in.data() + 8, 8);
  return {a, b};
}

// Requests: 'W' worker for ordinal a; 'F' run function pointer a (the spawner is a fork of this
// process, so the address is valid there); 'R' reap pid a, b = 1 for WNOHANG.
[[noreturn]] void spawner_main(int fd) {
  // Only callers without a test driver table use the spawner (use_spawner), whatever was
  // installed when it was forked.
  driver::set_driver_for_testing(nullptr);
  for (;;) {
    char tag = 0;
    std::string payload;
    if (!receive_message(fd, tag, payload)) ::_exit(0);
    const auto [a, b] = unpack(payload);
    if (tag == 'R') {
      int status = 0;
      const pid_t r = ::waitpid(static_cast<pid_t>(a), &status, b ? WNOHANG : 0);
      if (!send_message(fd, 'R', pack(r, status))) ::_exit(0);
      continue;
    }
    int sp[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
      if (!send_message(fd, 'E', std::string("socketpair: ") + std::strerror(errno))) ::_exit(0);
      continue;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fd);
      ::close(sp[0]);
      if (tag == 'W') child_main(sp[1], static_cast<int>(a));
      probe_main(sp[1], reinterpret_cast<std::string (*)()>(static_cast<std::uintptr_t>(a)));
    }
    ::close(sp[1]);
    bool ok = true;
    if (pid < 0)
      ok = send_message(fd, 'E', std::string("fork: ") + std::strerror(errno));
    else
      ok = send_message(fd, 'S', {}) && send_fd(fd, sp[0], pack(pid, 0));
    ::close(sp[0]);
    if (!ok) ::_exit(0);
  }
}

class Spawner {
 public:
  static Spawner& instance() {
    static Spawner s;
    return s;
  }
  [[nodiscard]] bool running() const noexcept { return m_fd >= 0; }

  // A child of the spawner running child_main(ordinal) or fn; its socket in `fd`.
  pid_t spawn(char tag, std::int64_t arg, int& fd) {
    std::lock_guard lock(m_mutex);
    for (int attempt = 0;; ++attempt) {
      char reply = 0;
      std::string payload;
      if (send_message(m_fd, tag, pack(arg, 0)) && receive_message(m_fd, reply, payload)) {
        if (reply == 'E') throw cuda_error("the worker spawner could not start a worker: " + payload);
        if (receive_fd(m_fd, fd, payload)) return static_cast<pid_t>(unpack(payload).first);
      }
      // Killed from outside (OOM killer, a user): start another. It is forked from this process
      // as it is now; if that has initialised CUDA, its workers say so when they start.
      if (attempt > 0 || !restart()) throw cuda_error("the worker spawner process is gone and could not be restarted");
    }
  }

  // waitpid through the spawner (the workers are its children).
  pid_t reap(pid_t pid, int* status, bool no_hang) {
    std::lock_guard lock(m_mutex);
    char reply = 0;
    std::string payload;
    if (!send_message(m_fd, 'R', pack(pid, no_hang ? 1 : 0)) || !receive_message(m_fd, reply, payload)) return -1;
    const auto [r, st] = unpack(payload);
    *status = static_cast<int>(st);
    return static_cast<pid_t>(r);
  }

 private:
  Spawner() { start(); }

  void start() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT}) ::signal(sig, SIG_DFL);
      spawner_main(fds[1]);
    }
    ::close(fds[1]);
    if (pid < 0) {
      ::close(fds[0]);
      return;
    }
    m_fd = fds[0];
    m_pid = pid;
  }

  bool restart() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    if (m_pid > 0) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);  // it is this process's child
    }
    m_pid = -1;
    start();
    return m_fd >= 0;
  }

  std::mutex m_mutex;
  int m_fd = -1;
  pid_t m_pid = -1;
};

// A test's driver table lives in this process's memory: only a direct fork inherits it.
bool use_spawner() { return !driver::test_driver_installed() && Spawner::instance().running(); }
}  // namespace

void start_worker_spawner() { (void)Spawner::instance(); }

WorkerProcess::WorkerProcess(int ordinal) : m_ordinal(ordinal) {}

WorkerProcess::~WorkerProcess() { stop(false); }

void WorkerProcess::start() {
  if (use_spawner()) {
    int fd = -1;
    m_pid = Spawner::instance().spawn('W', m_ordinal, fd);
    m_fd = fd;
    m_spawned = true;
    ++m_restarts;
    m_references.clear();
    return;
  }
  m_spawned = false;
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
  m_references.clear();  // they die with the process: the next one must run the reference again
  if (m_pid <= 0) return;
  if (m_fd >= 0) ::close(m_fd);  // a healthy child sees EOF and exits
  m_fd = -1;
  int status = 0;
  if (kill_now) {
    ::kill(m_pid, SIGKILL);
    wait_child(status, false);
  } else {
    // Give it a moment to release the GPU cleanly, then insist.
    for (int i = 0; i < 200; ++i) {
      if (wait_child(status, true) == m_pid) {
        m_pid = -1;
        return;
      }
      ::usleep(10000);
    }
    ::kill(m_pid, SIGKILL);
    wait_child(status, false);
  }
  m_pid = -1;
}

pid_t WorkerProcess::wait_child(int& status, bool no_hang) {
  if (m_spawned) return Spawner::instance().reap(m_pid, &status, no_hang);
  return ::waitpid(m_pid, &status, no_hang ? WNOHANG : 0);
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
      wait_child(status, false);
      m.status = Status::runtime_failed;
      m.reason = "runtime_failed";
      m.log = fmt::format("worker {} {} while running the candidate; restarted", m_pid, describe_exit(status));
      m_pid = -1;
      m_references.clear();
      return m;
    }
    if (tag == kProgress) continue;
    m = deserialize_measurement(payload);
    if (tag == kResultThenExit) {
      stop(false);
      m.log += "worker process ended after the sticky error; a new one takes the next job\n";
      return m;
    }
    if (job.kind == Job::Kind::reference && m.status == Status::ok) m_references.insert(job.argument_set);
    // A sticky error was handled in the child by rebuilding its context; references are host
    // copies and survive that.
    return m;
  }
}

std::optional<std::string> run_in_child(std::string (*fn)(), double timeout_s, std::string* why) {
  if (use_spawner()) {
    int fd = -1;
    pid_t pid = -1;
    try {
      pid = Spawner::instance().spawn('F', static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(fn)), fd);
    } catch (const std::exception& e) {
      if (why) *why = e.what();
      return std::nullopt;
    }
    std::optional<std::string> result;
    char tag = 0;
    std::string payload;
    if (!wait_readable(fd, timeout_s)) {
      if (why) *why = fmt::format("probe process did not answer within {} s", timeout_s);
      ::kill(pid, SIGKILL);
    } else if (!receive_message(fd, tag, payload)) {
      if (why) *why = "probe process died";
    } else if (tag == 'E') {
      if (why) *why = payload;
    } else {
      result = std::move(payload);
    }
    ::close(fd);
    int status = 0;
    Spawner::instance().reap(pid, &status, false);
    return result;
  }
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
    probe_main(fds[1], fn);
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
