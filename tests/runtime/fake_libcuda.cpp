// The fake driver (fake_driver.hpp) as a shared library named libcuda.so.1, for tests that run
// the command-line tool itself on a machine without a GPU: put its folder first in
// LD_LIBRARY_PATH and `gpuforecast measure` or a live `search --kernel` see two fake H200s,
// whose kernels fail as their names say (crash, abort, hang, toolarge, wrong). The runtime
// opens the driver with dlopen and takes every entry point through cuGetProcAddress, so that
// is all this library needs to export.
// GPUFORECAST_FAKE_CUDA_SLOW_AFTER=N: after N kernel launches in a process, every kernel (the
// sentinel too) times 1.5x slower: a device that slowed down, for the anomaly tests.
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "fake_driver.hpp"

namespace {
namespace fake = gpuforecast::test::fake;

gpuforecast::driver::Result elapsed_maybe_slower(float* ms, gpuforecast::driver::Event a, gpuforecast::driver::Event b) {
  static const long slow_after = [] {
    const char* v = std::getenv("GPUFORECAST_FAKE_CUDA_SLOW_AFTER");
    return v ? std::atol(v) : -1;
  }();
  const auto r = fake::impl::elapsed(ms, a, b);
  if (slow_after >= 0 && fake::state().launches > slow_after) *ms *= 1.5f;
  return r;
}

void* entry_point(std::string_view name) {
  const auto& a = fake::api();
  struct Named {
    std::string_view name;
    void* fn;
  };
  const Named table[] = {
      {"cuInit", reinterpret_cast<void*>(a.init)},
      {"cuDriverGetVersion", reinterpret_cast<void*>(a.driver_get_version)},
      {"cuDeviceGetCount", reinterpret_cast<void*>(a.device_get_count)},
      {"cuDeviceGet", reinterpret_cast<void*>(a.device_get)},
      {"cuDeviceGetName", reinterpret_cast<void*>(a.device_get_name)},
      {"cuDeviceGetAttribute", reinterpret_cast<void*>(a.device_get_attribute)},
      {"cuDeviceTotalMem", reinterpret_cast<void*>(a.device_total_mem)},
      {"cuDevicePrimaryCtxRetain", reinterpret_cast<void*>(a.primary_ctx_retain)},
      {"cuDevicePrimaryCtxRelease", reinterpret_cast<void*>(a.primary_ctx_release)},
      {"cuDevicePrimaryCtxReset", reinterpret_cast<void*>(a.primary_ctx_reset)},
      {"cuCtxSetCurrent", reinterpret_cast<void*>(a.ctx_set_current)},
      {"cuCtxSynchronize", reinterpret_cast<void*>(a.ctx_synchronize)},
      {"cuModuleLoadData", reinterpret_cast<void*>(a.module_load_data)},
      {"cuModuleUnload", reinterpret_cast<void*>(a.module_unload)},
      {"cuModuleGetFunction", reinterpret_cast<void*>(a.module_get_function)},
      {"cuModuleGetGlobal", reinterpret_cast<void*>(a.module_get_global)},
      {"cuFuncSetAttribute", reinterpret_cast<void*>(a.func_set_attribute)},
      {"cuMemAlloc", reinterpret_cast<void*>(a.mem_alloc)},
      {"cuMemFree", reinterpret_cast<void*>(a.mem_free)},
      {"cuMemcpyHtoD", reinterpret_cast<void*>(a.memcpy_htod)},
      {"cuMemcpyDtoH", reinterpret_cast<void*>(a.memcpy_dtoh)},
      {"cuMemsetD8Async", reinterpret_cast<void*>(a.memset_d8_async)},
      {"cuLaunchKernel", reinterpret_cast<void*>(a.launch_kernel)},
      {"cuStreamCreate", reinterpret_cast<void*>(a.stream_create)},
      {"cuStreamDestroy", reinterpret_cast<void*>(a.stream_destroy)},
      {"cuStreamSynchronize", reinterpret_cast<void*>(a.stream_synchronize)},
      {"cuEventCreate", reinterpret_cast<void*>(a.event_create)},
      {"cuEventDestroy", reinterpret_cast<void*>(a.event_destroy)},
      {"cuEventRecord", reinterpret_cast<void*>(a.event_record)},
      {"cuEventSynchronize", reinterpret_cast<void*>(a.event_synchronize)},
      {"cuEventElapsedTime", reinterpret_cast<void*>(&elapsed_maybe_slower)},
      {"cuGetErrorName", reinterpret_cast<void*>(a.get_error_name)},
      {"cuGetErrorString", reinterpret_cast<void*>(a.get_error_string)},
  };
  for (const auto& e : table)
    if (e.name == name) return e.fn;
  return nullptr;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int,
                                                                                cuuint64_t,
                                                                                CUdriverProcAddressQueryResult* status) {
  *pfn = symbol ? entry_point(symbol) : nullptr;
  if (status) *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
