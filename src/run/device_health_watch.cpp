#include "run/device_health_watch.hpp"

namespace gpuforecast::detail {

DeviceHealthWatch::DeviceHealthWatch(NvmlDevice device, std::vector<Sink> sinks, DeviceHealthOptions options)
    : m_device(std::move(device)), m_sinks(std::move(sinks)), m_options(options) {}

void DeviceHealthWatch::report(std::size_t index, const Config& config, const GpuSample& now) {
  for (const auto& event : health_events(m_last, now, m_options)) {
    const SearchAnomaly a{index, event.kind, config, event.value, 1.0, event.detail};
    for (const auto& sink : m_sinks) sink(a);
  }
  m_last = now;
}

// What the device already shows when the search starts (a GPU throttled from the outset) is
// reported at measurement 0, against no configuration.
void DeviceHealthWatch::on_begin(const SearchBegin&) { report(0, Config{}, m_device.sample()); }

void DeviceHealthWatch::on_measured(const SearchMeasured& e) { report(e.index, e.config, m_device.sample()); }

}  // namespace gpuforecast::detail
