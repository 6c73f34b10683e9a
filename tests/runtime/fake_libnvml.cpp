// A fake NVML as libnvidia-ml.so.1, beside the fake driver (fake_libcuda.cpp), for the tests that
// run a live search on a machine without a GPU: one GPU, "NVIDIA H200", steady at 1980 MHz and
// 60 C for its first N readings (GPUFORECAST_FAKE_NVML_THROTTLE_AFTER,
// default 5), from which on it is thermally throttled (sw_thermal | hw_thermal) at 90 C and
// 1410 MHz. Xid events are not offered (the event API is absent), as on a machine without the
// permission.
#include <cstdlib>
#include <cstring>

namespace {
using nvmlReturn = int;
using nvmlDevice = void*;
int g_device_tag = 0;
unsigned long long g_readings = 0;

bool throttled() {
  static const unsigned long long after = [] {
    const char* v = std::getenv("GPUFORECAST_FAKE_NVML_THROTTLE_AFTER");
    return v ? std::strtoull(v, nullptr, 10) : 5ULL;
  }();
  return g_readings > after;
}
}  // namespace

#define FAKE_NVML extern "C" __attribute__((visibility("default")))

FAKE_NVML nvmlReturn nvmlInit_v2() { return 0; }
FAKE_NVML nvmlReturn nvmlShutdown() { return 0; }
FAKE_NVML const char* nvmlErrorString(nvmlReturn) { return "fake NVML error"; }
FAKE_NVML nvmlReturn nvmlDeviceGetCount_v2(unsigned* n) {
  *n = 1;
  return 0;
}
FAKE_NVML nvmlReturn nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice* d) {
  if (i != 0) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *d = &g_device_tag;
  return 0;
}
FAKE_NVML nvmlReturn nvmlDeviceGetName(nvmlDevice, char* name, unsigned length) {
  std::strncpy(name, "NVIDIA H200", length);
  return 0;
}
// A reading starts with the SM clock (NvmlDevice::sample): that is where one is counted.
FAKE_NVML nvmlReturn nvmlDeviceGetClockInfo(nvmlDevice, int clock, unsigned* mhz) {
  if (clock == 1) ++g_readings;
  *mhz = throttled() ? 1410 : 1980;
  return 0;
}
FAKE_NVML nvmlReturn nvmlDeviceGetTemperature(nvmlDevice, int, unsigned* c) {
  *c = throttled() ? 90 : 60;
  return 0;
}
FAKE_NVML nvmlReturn nvmlDeviceGetPowerUsage(nvmlDevice, unsigned* mw) {
  *mw = 400000;
  return 0;
}
FAKE_NVML nvmlReturn nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice, unsigned long long* bits) {
  *bits = throttled() ? 0x20ULL | 0x40ULL : 0ULL;
  return 0;
}
FAKE_NVML nvmlReturn nvmlDeviceGetTotalEccErrors(nvmlDevice, int, int, unsigned long long* count) {
  *count = 0;
  return 0;
}
