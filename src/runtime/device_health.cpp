// NVML through dlopen: the few entry points and types a health reading needs are declared here
// from NVML's API reference (its header is not part of the toolkit this builds with), so the
// library builds and starts everywhere and a machine without NVML is told so.
#include "runtime/device_health.hpp"

#include <dlfcn.h>
#include <fmt/core.h>

#include <cmath>
#include <limits>

namespace gpuforecast {

std::string throttle_reason_names(std::uint64_t mask) {
  static constexpr std::pair<std::uint64_t, const char*> names[] = {
      {throttle::gpu_idle, "gpu_idle"},         {throttle::applications_clocks, "applications_clocks"},
      {throttle::sw_power_cap, "sw_power_cap"}, {throttle::hw_slowdown, "hw_slowdown"},
      {throttle::sync_boost, "sync_boost"},     {throttle::sw_thermal, "sw_thermal"},
      {throttle::hw_thermal, "hw_thermal"},     {throttle::hw_power_brake, "hw_power_brake"},
      {throttle::display_clocks, "display_clocks"}};
  std::string out;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : names) {
    known |= bit;
    if (mask & bit) out += (out.empty() ? "" : ",") + std::string(name);
  }
  if (const std::uint64_t rest = mask & ~known) out += fmt::format("{}0x{:x}", out.empty() ? "" : ",", rest);
  return out;
}

std::vector<DeviceHealthEvent> health_events(const GpuSample& before, const GpuSample& now,
                                             const DeviceHealthOptions& options) {
  std::vector<DeviceHealthEvent> out;
  const std::uint64_t active = now.throttle_reasons & ~options.ignored_throttle;
  const std::uint64_t newly = active & ~(before.throttle_reasons & ~options.ignored_throttle);
  if (newly)
    out.push_back({"gpu_throttle", static_cast<double>(active),
                   fmt::format("clocks held back by {} (SM clock {:.0f} MHz)", throttle_reason_names(newly),
                               now.sm_clock_mhz)});
  if (std::isfinite(now.temperature_c) && now.temperature_c >= options.temperature_limit_c &&
      !(std::isfinite(before.temperature_c) && before.temperature_c >= options.temperature_limit_c))
    out.push_back({"gpu_hot", now.temperature_c,
                   fmt::format("{:.0f} C, at or above {:.0f} C", now.temperature_c, options.temperature_limit_c)});
  if (now.ecc_uncorrected > before.ecc_uncorrected)
    out.push_back({"gpu_ecc", static_cast<double>(now.ecc_uncorrected - before.ecc_uncorrected),
                   fmt::format("{} new uncorrected ECC errors ({} since the driver loaded): results may be wrong",
                               now.ecc_uncorrected - before.ecc_uncorrected, now.ecc_uncorrected)});
  for (const std::uint64_t xid : now.xids)
    out.push_back({"gpu_xid", static_cast<double>(xid),
                   fmt::format("Xid {} reported by the driver (see NVIDIA's Xid catalogue)", xid)});
  return out;
}

namespace {

using nvmlReturn = int;
using nvmlDevice = void*;
using nvmlEventSet = void*;
constexpr nvmlReturn nvml_success = 0;
constexpr int nvml_clock_sm = 1, nvml_clock_mem = 2;
constexpr int nvml_temperature_gpu = 0;
constexpr int nvml_memory_error_uncorrected = 1, nvml_volatile_ecc = 0;
constexpr unsigned long long nvml_event_xid_critical = 0x8;

// nvmlEventData_t of NVML 11 and later (nvmlEventSetWait_v2).
struct NvmlEventData {
  nvmlDevice device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

struct NvmlApi {
  void* library = nullptr;
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn) = nullptr;
  nvmlReturn (*device_count)(unsigned*) = nullptr;
  nvmlReturn (*device_by_index)(unsigned, nvmlDevice*) = nullptr;
  nvmlReturn (*device_name)(nvmlDevice, char*, unsigned) = nullptr;
  nvmlReturn (*clock)(nvmlDevice, int, unsigned*) = nullptr;
  nvmlReturn (*temperature)(nvmlDevice, int, unsigned*) = nullptr;
  nvmlReturn (*power)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*throttle_reasons)(nvmlDevice, unsigned long long*) = nullptr;
  nvmlReturn (*ecc_errors)(nvmlDevice, int, int, unsigned long long*) = nullptr;
  nvmlReturn (*event_set_create)(nvmlEventSet*) = nullptr;
  nvmlReturn (*register_events)(nvmlDevice, unsigned long long, nvmlEventSet) = nullptr;
  nvmlReturn (*event_set_wait)(nvmlEventSet, NvmlEventData*, unsigned) = nullptr;
  nvmlReturn (*event_set_free)(nvmlEventSet) = nullptr;

  [[nodiscard]] std::string error(nvmlReturn r) const {
    const char* s = error_string ? error_string(r) : nullptr;
    return s ? fmt::format("{} (NVML error {})", s, r) : fmt::format("NVML error {}", r);
  }
};

template <class F>
bool bind(void* library, const char* name, F& slot) {
  slot = reinterpret_cast<F>(dlsym(library, name));
  return slot != nullptr;
}

// Loaded once; the entry points a reading cannot do without are required, the others optional.
std::optional<NvmlApi> load_nvml(std::string* why) {
  NvmlApi a;
  a.library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!a.library) {
    const char* e = dlerror();
    if (why) *why = fmt::format("no NVML found: dlopen(\"libnvidia-ml.so.1\") failed: {}", e ? e : "unknown error");
    return std::nullopt;
  }
  const bool required = bind(a.library, "nvmlInit_v2", a.init) && bind(a.library, "nvmlShutdown", a.shutdown) &&
                        bind(a.library, "nvmlDeviceGetCount_v2", a.device_count) &&
                        bind(a.library, "nvmlDeviceGetHandleByIndex_v2", a.device_by_index) &&
                        bind(a.library, "nvmlDeviceGetName", a.device_name) &&
                        bind(a.library, "nvmlDeviceGetClockInfo", a.clock);
  if (!required) {
    if (why) *why = "libnvidia-ml.so.1 lacks nvmlInit_v2 and the device queries (an NVML older than driver 410?)";
    dlclose(a.library);
    return std::nullopt;
  }
  bind(a.library, "nvmlErrorString", a.error_string);
  bind(a.library, "nvmlDeviceGetTemperature", a.temperature);
  bind(a.library, "nvmlDeviceGetPowerUsage", a.power);
  // Renamed "clocks event reasons" in NVML 12.2; the old name is still exported.
  if (!bind(a.library, "nvmlDeviceGetCurrentClocksEventReasons", a.throttle_reasons))
    bind(a.library, "nvmlDeviceGetCurrentClocksThrottleReasons", a.throttle_reasons);
  bind(a.library, "nvmlDeviceGetTotalEccErrors", a.ecc_errors);
  bind(a.library, "nvmlEventSetCreate", a.event_set_create);
  bind(a.library, "nvmlDeviceRegisterEvents", a.register_events);
  bind(a.library, "nvmlEventSetWait_v2", a.event_set_wait);
  bind(a.library, "nvmlEventSetFree", a.event_set_free);
  return a;
}

}  // namespace

struct NvmlDevice::Impl {
  NvmlApi api;
  nvmlDevice device = nullptr;
  nvmlEventSet events = nullptr;
  std::string name;

  ~Impl() {
    if (events && api.event_set_free) api.event_set_free(events);
    if (api.shutdown) api.shutdown();
    // The library stays loaded: NVML's own threads may still be winding down.
  }
};

NvmlDevice::NvmlDevice(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
NvmlDevice::NvmlDevice(NvmlDevice&&) noexcept = default;
NvmlDevice& NvmlDevice::operator=(NvmlDevice&&) noexcept = default;
NvmlDevice::~NvmlDevice() = default;

std::optional<NvmlDevice> NvmlDevice::open(unsigned index, std::string* why) {
  auto api = load_nvml(why);
  if (!api) return std::nullopt;
  if (const nvmlReturn r = api->init(); r != nvml_success) {
    if (why) *why = fmt::format("NVML did not start: {}", api->error(r));
    return std::nullopt;
  }
  auto impl = std::make_unique<Impl>();
  impl->api = *api;
  unsigned count = 0;
  if (const nvmlReturn r = impl->api.device_count(&count); r != nvml_success || index >= count) {
    if (why)
      *why = r != nvml_success ? fmt::format("NVML cannot count GPUs: {}", impl->api.error(r))
                               : fmt::format("NVML sees {} GPUs, so there is no GPU {}", count, index);
    return std::nullopt;
  }
  if (const nvmlReturn r = impl->api.device_by_index(index, &impl->device); r != nvml_success) {
    if (why) *why = fmt::format("NVML cannot open GPU {}: {}", index, impl->api.error(r));
    return std::nullopt;
  }
  char name[96] = {};
  if (impl->api.device_name(impl->device, name, sizeof name) == nvml_success) impl->name = name;
  // Xid errors arrive as events; without the event API (or permission) they are not reported.
  if (impl->api.event_set_create && impl->api.register_events && impl->api.event_set_wait &&
      impl->api.event_set_create(&impl->events) == nvml_success &&
      impl->api.register_events(impl->device, nvml_event_xid_critical, impl->events) != nvml_success) {
    if (impl->api.event_set_free) impl->api.event_set_free(impl->events);
    impl->events = nullptr;
  }
  return NvmlDevice(std::move(impl));
}

const std::string& NvmlDevice::name() const noexcept { return m_impl->name; }

GpuSample NvmlDevice::sample() {
  const NvmlApi& a = m_impl->api;
  const nvmlDevice d = m_impl->device;
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  GpuSample s{nan, nan, nan, nan, 0, 0, {}};
  unsigned v = 0;
  if (a.clock(d, nvml_clock_sm, &v) == nvml_success) s.sm_clock_mhz = v;
  if (a.clock(d, nvml_clock_mem, &v) == nvml_success) s.memory_clock_mhz = v;
  if (a.temperature && a.temperature(d, nvml_temperature_gpu, &v) == nvml_success) s.temperature_c = v;
  if (a.power && a.power(d, &v) == nvml_success) s.power_w = v / 1000.0;
  unsigned long long bits = 0;
  if (a.throttle_reasons && a.throttle_reasons(d, &bits) == nvml_success) s.throttle_reasons = bits;
  if (a.ecc_errors && a.ecc_errors(d, nvml_memory_error_uncorrected, nvml_volatile_ecc, &bits) == nvml_success)
    s.ecc_uncorrected = bits;
  if (m_impl->events) {
    NvmlEventData e{};
    // Timeout 0: collect what has arrived, never wait.
    while (a.event_set_wait(m_impl->events, &e, 0) == nvml_success)
      if (e.event_type & nvml_event_xid_critical) s.xids.push_back(e.event_data);
  }
  return s;
}

}  // namespace gpuforecast
