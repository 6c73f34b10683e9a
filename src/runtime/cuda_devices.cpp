#include "runtime/cuda_devices.hpp"

#include <cuda.h>
#include <fmt/core.h>

#include "gpuforecast/core/error.hpp"
#include "runtime/detail/driver_api.hpp"
#include "gpuforecast/core/archive.hpp"
#include "runtime/worker_process.hpp"

namespace gpuforecast {

std::string nvidia_architecture(int major, int minor) {
  switch (major) {
    case 5: return "maxwell";
    case 6: return "pascal";
    case 7: return minor >= 5 ? "turing" : "volta";
    case 8: return minor == 9 ? "ada" : "ampere";
    case 9: return "hopper";
    case 10: case 11: case 12: return "blackwell";
    default: return major > 12 ? "unknown-newer" : "unknown";
  }
}

namespace {
int fp32_lanes_per_sm(int major, int minor) {
  if (major == 7) return 64;
  if (major == 8) return minor == 0 ? 64 : 128;
  if (major == 9) return 128;
  if (major >= 10) return 128;
  if (major == 6) return minor == 0 ? 64 : 128;
  return 128;
}
}  // namespace

std::vector<Device> enumerate_cuda_devices(const driver::DriverApi& api) {
  auto check = [&](driver::Result r, const char* what) {
    if (r != driver::success) throw cuda_error(fmt::format("{}: {}", what, driver::describe_result(api, r)));
  };
  int count = 0;
  const driver::Result rc = api.device_get_count(&count);
  if (rc == driver::error_no_device) return {};
  check(rc, "cuDeviceGetCount");
  std::vector<Device> out;
  for (int i = 0; i < count; ++i) {
    driver::DeviceHandle dev = 0;
    check(api.device_get(&dev, i), "cuDeviceGet");
    char name[256] = {};
    check(api.device_get_name(name, sizeof name, dev), "cuDeviceGetName");
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      check(api.device_get_attribute(&v, static_cast<int>(a), dev), "cuDeviceGetAttribute");
      return v;
    };
    Device d;
    std::string full = name;
    d.vendor = "NVIDIA";
    d.name = full.rfind("NVIDIA ", 0) == 0 ? full.substr(7) : full;
    if (d.name != full) d.aliases.push_back(full);
    d.compute_capability_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d.compute_capability_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d.architecture = nvidia_architecture(d.compute_capability_major, d.compute_capability_minor);
    d.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d.core_clock_mhz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000.0;
    const double mem_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    const double bus_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    d.memory_bandwidth_gbs = 2.0 * mem_clock_khz * 1e3 * bus_bits / 8.0 / 1e9;  // DDR: two transfers per clock
    std::size_t bytes = 0;
    check(api.device_total_mem(&bytes, dev), "cuDeviceTotalMem");
    d.memory_gib = static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
    d.l2_cache_mib = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE) / (1024.0 * 1024.0);
    d.shared_memory_per_sm_kib = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR) / 1024.0;
    d.registers_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    d.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    d.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    d.peak_fp32_tflops = 2.0 * d.sm_count * fp32_lanes_per_sm(d.compute_capability_major, d.compute_capability_minor) *
                         d.core_clock_mhz * 1e6 / 1e12;
    // The table knows marketing facts the driver does not (e.g. HBM bandwidth when the memory
    // clock attribute is reported as 0): fill only what the driver left empty.
    if (auto known = DeviceRegistry::global().try_find(d.name)) {
      if (d.memory_bandwidth_gbs <= 0) d.memory_bandwidth_gbs = known->memory_bandwidth_gbs;
      if (d.core_clock_mhz <= 0) d.core_clock_mhz = known->core_clock_mhz;
      if (d.peak_fp32_tflops <= 0) d.peak_fp32_tflops = known->peak_fp32_tflops;
      for (const auto& a : known->aliases) d.aliases.push_back(a);
      if (known->name != d.name) d.aliases.push_back(known->name);
    }
    out.push_back(std::move(d));
  }
  return out;
}

namespace {
std::string serialize_devices(const std::vector<Device>& devices) {
  ArchiveWriter w;
  w.u64(devices.size());
  for (const auto& d : devices) {
    w.str(d.name), w.str(d.vendor), w.str(d.architecture);
    w.i64(d.compute_capability_major), w.i64(d.compute_capability_minor), w.i64(d.sm_count);
    w.f64(d.core_clock_mhz), w.f64(d.memory_bandwidth_gbs), w.f64(d.memory_gib), w.f64(d.l2_cache_mib);
    w.f64(d.shared_memory_per_sm_kib), w.i64(d.registers_per_sm), w.i64(d.max_threads_per_block), w.i64(d.warp_size);
    w.f64(d.peak_fp32_tflops);
    w.u64(d.aliases.size());
    for (const auto& a : d.aliases) w.str(a);
  }
  return w.release();
}

std::vector<Device> deserialize_devices(const std::string& bytes) {
  ArchiveReader r(bytes, "device list message");
  std::vector<Device> out(r.u64());
  for (auto& d : out) {
    d.name = r.str(), d.vendor = r.str(), d.architecture = r.str();
    d.compute_capability_major = static_cast<int>(r.i64()), d.compute_capability_minor = static_cast<int>(r.i64());
    d.sm_count = static_cast<int>(r.i64());
    d.core_clock_mhz = r.f64(), d.memory_bandwidth_gbs = r.f64(), d.memory_gib = r.f64(), d.l2_cache_mib = r.f64();
    d.shared_memory_per_sm_kib = r.f64(), d.registers_per_sm = static_cast<int>(r.i64());
    d.max_threads_per_block = static_cast<int>(r.i64()), d.warp_size = static_cast<int>(r.i64());
    d.peak_fp32_tflops = r.f64();
    d.aliases.resize(r.u64());
    for (auto& a : d.aliases) a = r.str();
  }
  return out;
}
}  // namespace

std::vector<Device> enumerate_cuda_devices() {
  detail::start_worker_spawner();
  if (driver::test_driver_installed() || driver::initialised_in_this_process()) {
    std::string why;
    const driver::DriverApi* api = driver::driver(&why);
    if (!api) throw cuda_error(why);
    return enumerate_cuda_devices(*api);
  }
  // A short-lived child asks the driver, so that listing the GPUs does not initialise CUDA here.
  std::string why;
  auto bytes = detail::run_in_child(
      [] {
        std::string child_why;
        const driver::DriverApi* api = driver::driver(&child_why);
        if (!api) throw cuda_error(child_why);
        return serialize_devices(enumerate_cuda_devices(*api));
      },
      60, &why);
  if (!bytes) throw cuda_error(why.find("no CUDA driver") != std::string::npos ? why : "no usable CUDA driver: " + why);
  return deserialize_devices(*bytes);
}

}  // namespace gpuforecast
