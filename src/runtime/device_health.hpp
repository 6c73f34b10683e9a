#pragma once
// The GPU's own account of itself, read through NVML (libnvidia-ml.so.1, opened with dlopen at
// run time like the driver: nothing links it, and a machine without it says so): clocks,
// throttle reasons, temperature, power, uncorrected ECC errors and Xid errors. A search samples
// it after each measurement and health_events() names what changed: the typed events that the
// event log and the metrics report beside the anomaly tests (docs/monitoring.md).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// NVML's clock-event (throttle) reason bits, as its API reference defines them.
namespace throttle {
inline constexpr std::uint64_t gpu_idle = 0x1;
inline constexpr std::uint64_t applications_clocks = 0x2;
inline constexpr std::uint64_t sw_power_cap = 0x4;
inline constexpr std::uint64_t hw_slowdown = 0x8;
inline constexpr std::uint64_t sync_boost = 0x10;
inline constexpr std::uint64_t sw_thermal = 0x20;
inline constexpr std::uint64_t hw_thermal = 0x40;
inline constexpr std::uint64_t hw_power_brake = 0x80;
inline constexpr std::uint64_t display_clocks = 0x100;
}  // namespace throttle

// "sw_power_cap,hw_thermal" for a mask; "" for none. Unknown bits are named by value.
[[nodiscard]] std::string throttle_reason_names(std::uint64_t mask);

// One reading. A quantity NVML could not give (not supported on this GPU) is NaN, or 0 bits.
struct GpuSample {
  double sm_clock_mhz = 0;
  double memory_clock_mhz = 0;
  double temperature_c = 0;
  double power_w = 0;
  std::uint64_t throttle_reasons = 0;
  std::uint64_t ecc_uncorrected = 0;  // volatile count since the driver loaded
  std::vector<std::uint64_t> xids;    // Xid errors reported since the previous sample
};

struct DeviceHealthOptions {
  double temperature_limit_c = 85;  // a reading at or above it is a `gpu_hot` event
  // Reasons that are no fault of the device and are not reported: idle, an application clock
  // the user set, a display.
  std::uint64_t ignored_throttle = throttle::gpu_idle | throttle::applications_clocks | throttle::display_clocks;
};

struct DeviceHealthEvent {
  // "gpu_throttle" (a throttle reason newly active: power cap, thermal, hardware slowdown, power
  // brake), "gpu_hot", "gpu_ecc" (new uncorrected ECC errors), "gpu_xid" (an Xid error).
  std::string kind;
  double value = 0;  // the reason mask, the temperature, the ECC count added, the Xid
  std::string detail;
};

// What `now` shows that `before` did not (the first sample of a run: before = {}).
[[nodiscard]] std::vector<DeviceHealthEvent> health_events(const GpuSample& before, const GpuSample& now,
                                                           const DeviceHealthOptions& options = {});

// One GPU through NVML.
class NvmlDevice {
 public:
  // The GPU with NVML index `index` (NVML counts in PCI order; CUDA_DEVICE_ORDER=PCI_BUS_ID makes
  // CUDA's order the same). std::nullopt and `why` when NVML or the GPU is not there.
  static std::optional<NvmlDevice> open(unsigned index, std::string* why);
  NvmlDevice(NvmlDevice&&) noexcept;
  NvmlDevice& operator=(NvmlDevice&&) noexcept;
  ~NvmlDevice();

  [[nodiscard]] const std::string& name() const noexcept;
  // Reads every quantity; Xid errors are those NVML reported since the previous call.
  [[nodiscard]] GpuSample sample();

 private:
  struct Impl;
  explicit NvmlDevice(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

}  // namespace gpuforecast
