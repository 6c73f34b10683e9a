#pragma once
// A DeviceExecutor in a child process, so that a kernel that hangs or takes the process down
// costs one candidate, not the caller. The parent is the watchdog: the child reports progress
// after every kernel run; no progress for `timeout_s` and the child is killed (SIGKILL) and the
// job reported as timeout; a child that dies is reported runtime_failed. The next job starts a
// fresh child (a fresh CUDA context).
//
// CUDA's state does not survive fork, and NVRTC (since CUDA 13) initialises the driver in the
// process that compiles. So children are forked by a spawner process, itself forked before
// this process first compiled or touched CUDA (start_worker_spawner). Only with a test driver
// table installed are children forked directly, so that they inherit the table.
#include <sys/types.h>

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "gpuforecast/core/measurement.hpp"
#include "runtime/detail/driver_api.hpp"
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
  pid_t wait_child(int& status, bool no_hang);
  int m_ordinal;
  pid_t m_pid = -1;
  int m_fd = -1;
  int m_restarts = -1;
  bool m_spawned = false;  // a child of the spawner, reaped through it
  std::set<std::string> m_references;
};

// Runs `fn` in a forked child and returns what it returns (as bytes), or nullopt with `why`
// when the child fails or exceeds `timeout_s`. Used to enumerate devices without initialising
// CUDA in the caller.
std::optional<std::string> run_in_child(std::string (*fn)(), double timeout_s, std::string* why);

// Forks the spawner now if it is not running. Called before anything in this process compiles
// with NVRTC or initialises CUDA: NvrtcCompiler's and CudaBenchmarker's constructors and
// enumerate_cuda_devices().
void start_worker_spawner();

}  // namespace gpuforecast::detail
