#pragma once
// Runs jobs on one GPU: load the module, set up arguments, verify against the reference
// outputs, warm up, time until the stopping criterion says stop. Lives in a worker process
// (worker_process.hpp) so that a hung or crashing kernel can be killed without killing the
// caller; the same code runs in-process when isolation is off.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpuforecast/core/measurement.hpp"
#include "runtime/detail/driver_api.hpp"
#include "runtime/kernel_arguments.hpp"
#include "runtime/launch_geometry.hpp"
#include "runtime/stopping_criterion.hpp"

namespace gpuforecast::detail {

struct ArgumentDescriptor {
  std::string name, type, memory_type, mem_type, fill_type;
  double fill_value = 0;
  bool output = false;
  std::uint64_t count = 1;
};

struct Job {
  enum class Kind : std::uint64_t { measure = 0, reference = 1 };
  Kind kind = Kind::measure;
  std::string image;
  std::string lowered_name;
  LaunchGeometry geometry;
  std::string argument_set;  // buffers and reference outputs are shared by jobs of one set
  std::vector<ArgumentDescriptor> arguments;
  std::uint64_t seed = 0;
  bool verify = true;
  double atol = 1e-6, rtol = 1e-4;
  std::string criterion = "adaptive";
  CriterionParams criterion_params;
  std::int64_t warmup = 2;
  bool flush_l2 = true;
};

std::string serialize(const Job& job);
Job deserialize_job(const std::string& bytes);
std::string serialize(const Measurement& m);
Measurement deserialize_measurement(const std::string& bytes);

class DeviceExecutor {
 public:
  // `progress` is called after every kernel run (the watchdog's heartbeat).
  DeviceExecutor(const driver::DriverApi& api, int ordinal, std::function<void()> progress = {});
  ~DeviceExecutor();
  DeviceExecutor(const DeviceExecutor&) = delete;
  DeviceExecutor& operator=(const DeviceExecutor&) = delete;

  // Never throws for faults of the candidate: they are the returned status.
  Measurement run(const Job& job);
  // Whether this set's reference outputs are held (after a reference job).
  [[nodiscard]] bool has_reference(const std::string& argument_set) const;
  // Set when a sticky error forced a context rebuild during the last run.
  [[nodiscard]] bool context_rebuilt() const noexcept { return m_context_rebuilt; }

  struct State;  // context, stream, events, buffers (device_executor.cpp)

 private:
  void ensure_context();
  void release_context(bool reset);
  const driver::DriverApi& m_api;
  int m_ordinal;
  std::function<void()> m_progress;
  std::unique_ptr<State> m_state;
  std::map<std::string, std::vector<HostArgument>> m_references;  // host copies: survive rebuilds
  std::map<std::string, std::string> m_reference_failures;
  bool m_context_rebuilt = false;
};

}  // namespace gpuforecast::detail
