#pragma once
// A GPU described by numbers. A built-in table covers common GPUs (public spec sheets);
// users register more from JSON; a live GPU is described by the driver (runtime/).
#include <memory>
#include <string>
#include <string_view>
#include <vector>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct Device {
  std::string name;          // canonical, e.g. "A100-PCIE-40GB"
  std::string vendor;        // "NVIDIA" or "AMD"
  std::string architecture;  // "ampere", "hopper", "cdna2", ...
  int compute_capability_major = 0;  // NVIDIA only; 0 for AMD
  int compute_capability_minor = 0;
  int sm_count = 0;                      // SMs (NVIDIA) or compute units (AMD)
  double core_clock_mhz = 0;             // boost clock
  double memory_bandwidth_gbs = 0;       // GB/s
  double memory_gib = 0;                 // device memory
  double l2_cache_mib = 0;               // last-level cache on the die (L2, or Infinity Cache)
  double shared_memory_per_sm_kib = 0;   // shared memory / LDS per SM or CU
  int registers_per_sm = 0;              // 32-bit registers
  int max_threads_per_block = 1024;
  int warp_size = 32;                    // 64 on CDNA wavefronts
  double peak_fp32_tflops = 0;
  std::vector<std::string> aliases;      // names used in dataset files, matched case-insensitively

  // A device the registry does not know (a file from the wild): its name as written, the
  // vendor when the name starts with one ("NVIDIA", "Tesla", "AMD", ...), and no numbers, so
  // that surrogates treat its numbers as missing (0, as for a candidate without a device).
  [[nodiscard]] static Device unknown(std::string name);
  // False for an unknown() device: nothing is known about it but its name.
  [[nodiscard]] bool has_numbers() const noexcept;
  // "sm_80" etc. for NVIDIA devices; empty for others.
  [[nodiscard]] std::string sm_arch() const;
  // The numbers above in a fixed order (for surrogates); names in `numeric_feature_names()`.
  [[nodiscard]] std::vector<double> numeric_features() const;
  [[nodiscard]] static const std::vector<std::string>& numeric_feature_names();
};

// The built-in table plus what users added. Lookups normalise case, spaces, '-' and '_',
// and drop a leading vendor word ("NVIDIA RTX A4000" finds "RTX A4000"). A name that matches
// no device that way is matched by its family, without form factor and memory words
// ("Tesla V100-PCIE-32GB", "A100 80GB PCIe"): the device of that family whose form factor,
// then memory size, agree (see docs/devices.md).
class DeviceRegistry {
 public:
  // The process-wide registry, initialised with the built-in table.
  static DeviceRegistry& global();
  DeviceRegistry();  // built-in table only

  // Throws unknown_device_error listing close names.
  [[nodiscard]] std::shared_ptr<const Device> find(std::string_view name) const;
  [[nodiscard]] std::shared_ptr<const Device> try_find(std::string_view name) const noexcept;
  [[nodiscard]] std::vector<std::shared_ptr<const Device>> all() const;

  // Adds or replaces (by name) a device.
  void add(Device device);
  // Adds every device of a JSON file: {"devices": [{"name": ..., "vendor": ..., ...}]};
  // throws input_error naming the file and entry.
  void add_from_json(const std::string& path);

 private:
  [[nodiscard]] std::shared_ptr<const Device> find_by_family(std::string_view name) const;
  std::vector<std::shared_ptr<const Device>> m_devices;
};

// Shorthand for DeviceRegistry::global().find(name).
[[nodiscard]] std::shared_ptr<const Device> find_device(std::string_view name);

}  // namespace gpuforecast
