// libcuda.so.1 through dlopen: every binary starts on machines without a GPU, and the driver
// version in use is whatever the machine has, not what we were built against.
#include <cuda.h>
#include <dlfcn.h>
#include <fmt/core.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "runtime/detail/driver_api.hpp"

namespace gpuforecast::driver {

static_assert(success == CUDA_SUCCESS && error_illegal_address == CUDA_ERROR_ILLEGAL_ADDRESS &&
              error_launch_out_of_resources == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES &&
              error_launch_failed == CUDA_ERROR_LAUNCH_FAILED && error_not_ready == CUDA_ERROR_NOT_READY &&
              error_no_device == CUDA_ERROR_NO_DEVICE && error_invalid_value == CUDA_ERROR_INVALID_VALUE &&
              error_out_of_memory == CUDA_ERROR_OUT_OF_MEMORY && error_invalid_image == CUDA_ERROR_INVALID_IMAGE &&
              error_no_binary_for_gpu == CUDA_ERROR_NO_BINARY_FOR_GPU &&
              error_unsupported_ptx_version == CUDA_ERROR_UNSUPPORTED_PTX_VERSION &&
              error_invalid_ptx == CUDA_ERROR_INVALID_PTX && error_launch_timeout == CUDA_ERROR_LAUNCH_TIMEOUT &&
              error_not_initialized == CUDA_ERROR_NOT_INITIALIZED);
static_assert(sizeof(DevicePtr) == sizeof(CUdeviceptr) && sizeof(DeviceHandle) == sizeof(CUdevice));

namespace {
std::atomic<const DriverApi*> g_override{nullptr};
std::atomic<const DriverApi*> g_real_table{nullptr};
std::atomic<pid_t> g_initialised_by{-1};

struct Loaded {
  DriverApi api;
  bool ok = false;
  std::string why;
  pid_t initialised_by = -1;  // CUDA's state does not survive fork: a child must not use it
};

using GetProcAddressV2 = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
using GetProcAddressV1 = CUresult (*)(const char*, void**, int, cuuint64_t);

const Loaded& load() {
  static const Loaded loaded = [] {
    Loaded l;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      l.why = fmt::format("no CUDA driver found: dlopen(\"libcuda.so.1\") failed: {}", e ? e : "unknown error");
      return l;
    }
    auto v2 = reinterpret_cast<GetProcAddressV2>(dlsym(lib, "cuGetProcAddress_v2"));
    auto v1 = reinterpret_cast<GetProcAddressV1>(dlsym(lib, "cuGetProcAddress"));
    if (!v2 && !v1) {
      l.why = "no CUDA driver found: libcuda.so.1 has no cuGetProcAddress (driver older than CUDA 11.3)";
      return l;
    }
    // Ask for the ABI of CUDA 12.0: the signatures in DriverApi are those.
    constexpr int kApiVersion = 12000;
    std::string missing;
    auto get = [&](const char* name, auto& slot) {
      void* p = nullptr;
      CUresult r;
      if (v2) {
        CUdriverProcAddressQueryResult status{};
        r = v2(name, &p, kApiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status);
      } else {
        r = v1(name, &p, kApiVersion, CU_GET_PROC_ADDRESS_DEFAULT);
      }
      if (r != CUDA_SUCCESS || !p) missing += std::string(missing.empty() ? "" : ", ") + name;
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(p);
    };
    DriverApi& a = l.api;
    get("cuInit", a.init);
    get("cuDriverGetVersion", a.driver_get_version);
    get("cuDeviceGetCount", a.device_get_count);
    get("cuDeviceGet", a.device_get);
    get("cuDeviceGetName", a.device_get_name);
    get("cuDeviceGetAttribute", a.device_get_attribute);
    get("cuDeviceTotalMem", a.device_total_mem);
    get("cuDevicePrimaryCtxRetain", a.primary_ctx_retain);
    get("cuDevicePrimaryCtxRelease", a.primary_ctx_release);
    get("cuDevicePrimaryCtxReset", a.primary_ctx_reset);
    get("cuCtxSetCurrent", a.ctx_set_current);
    get("cuCtxSynchronize", a.ctx_synchronize);
    get("cuModuleLoadData", a.module_load_data);
    get("cuModuleUnload", a.module_unload);
    get("cuModuleGetFunction", a.module_get_function);
    get("cuModuleGetGlobal", a.module_get_global);
    get("cuFuncSetAttribute", a.func_set_attribute);
    get("cuMemAlloc", a.mem_alloc);
    get("cuMemFree", a.mem_free);
    get("cuMemcpyHtoD", a.memcpy_htod);
    get("cuMemcpyDtoH", a.memcpy_dtoh);
    get("cuMemsetD8Async", a.memset_d8_async);
    get("cuLaunchKernel", a.launch_kernel);
    get("cuStreamCreate", a.stream_create);
    get("cuStreamDestroy", a.stream_destroy);
    get("cuStreamSynchronize", a.stream_synchronize);
    get("cuEventCreate", a.event_create);
    get("cuEventDestroy", a.event_destroy);
    get("cuEventRecord", a.event_record);
    get("cuEventSynchronize", a.event_synchronize);
    get("cuEventElapsedTime", a.event_elapsed_time);
    get("cuGetErrorName", a.get_error_name);
    get("cuGetErrorString", a.get_error_string);
    if (!missing.empty()) {
      l.why = "CUDA driver too old: libcuda.so.1 lacks " + missing;
      return l;
    }
    if (CUresult r = static_cast<CUresult>(a.init(0)); r != CUDA_SUCCESS) {
      const char* name = nullptr;
      a.get_error_name(r, &name);
      l.why = fmt::format("CUDA driver found but cuInit failed: {} ({})", name ? name : "?", static_cast<int>(r));
      if (r == CUDA_ERROR_NOT_INITIALIZED)
        l.why += ": this process was forked from one that had already initialised CUDA (directly, or through "
                 "NVRTC or CUPTI), and CUDA does not survive fork";
      return l;
    }
    l.ok = true;
    l.initialised_by = ::getpid();
    g_initialised_by.store(l.initialised_by);
    return l;
  }();
  return loaded;
}
}  // namespace

const DriverApi* driver(std::string* why) {
  if (const DriverApi* o = g_override.load()) return o;
  const Loaded& l = load();
  if (!l.ok) {
    if (why) *why = l.why;
    return nullptr;
  }
  if (l.initialised_by != ::getpid()) {
    // Every call would fail with CUDA_ERROR_NOT_INITIALIZED; say why instead.
    if (why)
      *why = fmt::format(
          "CUDA cannot be used in this process: it was forked from process {}, which had already initialised "
          "CUDA, and CUDA does not survive fork",
          l.initialised_by);
    return nullptr;
  }
  g_real_table.store(&l.api);
  return &l.api;
}

// Neither asks the loader: asking must not initialise CUDA.
bool initialised_in_this_process() { return g_initialised_by.load() == ::getpid(); }

bool test_driver_installed() { return g_override.load() != nullptr; }

bool is_real_driver(const DriverApi& api) { return &api == g_real_table.load(); }

void set_driver_for_testing(const DriverApi* api) { g_override.store(api); }

std::string describe_result(const DriverApi& api, Result r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.get_error_name) api.get_error_name(r, &name);
  if (api.get_error_string) api.get_error_string(r, &text);
  return fmt::format("{} ({})", name ? name : fmt::format("CUresult {}", r), text ? text : "no description");
}

bool is_sticky(Result r) noexcept {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return true;
    default:
      return false;
  }
}

}  // namespace gpuforecast::driver
