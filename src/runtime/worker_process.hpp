#pragma once
// A DeviceExecutor in a child process, so that a kernel that hangs or takes the process down
// costs one candidate, not the caller. The parent is the watchdog: the child reports progress
// after every kernel run; no progress for `timeout_s` and the child is killed (SIGKILL) and the
// job reported as timeout; a child that dies is reported runtime_failed. The next job starts a
// fresh child (a fresh CUDA context).
//
// The child is forked from the caller. The caller must not have initialised CUDA itself (a
// forked child cannot use its parent's CUDA state), which is why the benchmarker never touches
// the driver in the parent when isolation is on: device records come from a probe child too.
#include <sys/types.h>

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/runtime/driver_api.hpp"
#include "runtime/device_executor.hpp"

namespace gpuforecast::detail {

class WorkerProcess {
 public:
  // The child resolves the driver itself (driver::driver(); a test's fake table is inherited).
  explicit WorkerProcess(int ordinal);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Forks the child now if there is none (the benchmarker does this before it starts compile
  // threads, so the first fork happens from a process with no threads of ours).
  void ensure_started() {
    if (m_pid <= 0) start();
  }
  // Runs the job in the child (starting one if needed). Never throws for candidate faults.
  Measurement run(const Job& job, double timeout_s);
  // Reference sets this child holds (forgotten when the child is replaced).
  [[nodiscard]] bool has_reference(const std::string& set) const { return m_references.count(set) > 0; }
  [[nodiscard]] int restarts() const noexcept { return m_restarts; }
  [[nodiscard]] pid_t pid() const noexcept { return m_pid; }

 private:
  void start();
  void stop(bool kill_now);
  int m_ordinal;
  pid_t m_pid = -1;
  int m_fd = -1;
  int m_restarts = -1;
  std::set<std::string> m_references;
};

// Runs `fn` in a forked child and returns what it returns (as bytes), or nullopt with `why`
// when the child fails or exceeds `timeout_s`. Used to enumerate devices without initialising
// CUDA in the caller.
std::optional<std::string> run_in_child(const std::function<std::string()>& fn, double timeout_s, std::string* why);

}  // namespace gpuforecast::detail
