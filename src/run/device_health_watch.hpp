#pragma once
// A search's observer of the GPU's own signals (CallerBackend::watch_gpu): NVML is sampled when
// the search begins and after each measurement, and what changed (runtime/device_health.hpp: a throttle reason newly
// active, the temperature limit reached, new uncorrected ECC errors, an Xid) is handed to its
// sinks as a SearchAnomaly (the event log's on_anomaly, the monitor's), never dropped.
#include <functional>
#include <optional>
#include <vector>

#include "runtime/device_health.hpp"
#include "search/anomaly_monitor.hpp"
#include "gpuforecast/search/observer.hpp"

namespace gpuforecast::detail {

class DeviceHealthWatch {
 public:
  using Sink = std::function<void(const SearchAnomaly&)>;
  DeviceHealthWatch(NvmlDevice device, std::vector<Sink> sinks, DeviceHealthOptions options = {});

  void on_begin(const SearchBegin& e);
  void on_measured(const SearchMeasured& e);

 private:
  void report(std::size_t index, const Config& config, const GpuSample& now);
  NvmlDevice m_device;
  std::vector<Sink> m_sinks;
  DeviceHealthOptions m_options;
  GpuSample m_last;
};

}  // namespace gpuforecast::detail
