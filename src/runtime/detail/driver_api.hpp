#pragma once
// Not installed: the runtime's own seam to the driver, and tests' way in (see the install rules).
// The CUDA driver entry points the runtime uses, as a table of function pointers. The real
// table is filled from libcuda.so.1, opened with dlopen and resolved through cuGetProcAddress
// (the driver is never linked). Tests install a fake table to exercise failure paths on
// machines without a GPU. Types mirror the driver ABI without its headers: results and
// devices are ints, handles are opaque pointers, device pointers are 64-bit integers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpuforecast/core/device.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {
namespace driver {

using Result = int;             // CUresult; 0 is success
using DeviceHandle = int;       // CUdevice
using Context = void*;          // CUcontext
using Module = void*;           // CUmodule
using Function = void*;         // CUfunction
using Stream = void*;           // CUstream
using Event = void*;            // CUevent
using DevicePtr = std::uint64_t;  // CUdeviceptr

// CUresult values the runtime reacts to (values from cuda.h; checked there by a static_assert).
inline constexpr Result success = 0;
inline constexpr Result error_invalid_value = 1;
inline constexpr Result error_out_of_memory = 2;
inline constexpr Result error_not_initialized = 3;
inline constexpr Result error_no_device = 100;
inline constexpr Result error_invalid_image = 200;
inline constexpr Result error_no_binary_for_gpu = 209;
inline constexpr Result error_unsupported_ptx_version = 222;
inline constexpr Result error_invalid_ptx = 218;
inline constexpr Result error_not_ready = 600;
inline constexpr Result error_illegal_address = 700;
inline constexpr Result error_launch_out_of_resources = 701;
inline constexpr Result error_launch_timeout = 702;
inline constexpr Result error_launch_failed = 719;

struct DriverApi {
  Result (*init)(unsigned flags) = nullptr;
  Result (*driver_get_version)(int* version) = nullptr;
  Result (*device_get_count)(int* count) = nullptr;
  Result (*device_get)(DeviceHandle* device, int ordinal) = nullptr;
  Result (*device_get_name)(char* name, int length, DeviceHandle device) = nullptr;
  Result (*device_get_attribute)(int* value, int attribute, DeviceHandle device) = nullptr;
  Result (*device_total_mem)(std::size_t* bytes, DeviceHandle device) = nullptr;
  Result (*primary_ctx_retain)(Context* ctx, DeviceHandle device) = nullptr;
  Result (*primary_ctx_release)(DeviceHandle device) = nullptr;
  Result (*primary_ctx_reset)(DeviceHandle device) = nullptr;
  Result (*ctx_set_current)(Context ctx) = nullptr;
  Result (*ctx_synchronize)() = nullptr;
  Result (*module_load_data)(Module* module, const void* image) = nullptr;
  Result (*module_unload)(Module module) = nullptr;
  Result (*module_get_function)(Function* function, Module module, const char* name) = nullptr;
  Result (*module_get_global)(DevicePtr* ptr, std::size_t* bytes, Module module, const char* name) = nullptr;
  Result (*func_set_attribute)(Function function, int attribute, int value) = nullptr;
  Result (*mem_alloc)(DevicePtr* ptr, std::size_t bytes) = nullptr;
  Result (*mem_free)(DevicePtr ptr) = nullptr;
  Result (*memcpy_htod)(DevicePtr dst, const void* src, std::size_t bytes) = nullptr;
  Result (*memcpy_dtoh)(void* dst, DevicePtr src, std::size_t bytes) = nullptr;
  Result (*memset_d8_async)(DevicePtr dst, unsigned char value, std::size_t bytes, Stream stream) = nullptr;
  Result (*launch_kernel)(Function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned shared_bytes, Stream stream, void** params, void** extra) = nullptr;
  Result (*stream_create)(Stream* stream, unsigned flags) = nullptr;
  Result (*stream_destroy)(Stream stream) = nullptr;
  Result (*stream_synchronize)(Stream stream) = nullptr;
  Result (*event_create)(Event* event, unsigned flags) = nullptr;
  Result (*event_destroy)(Event event) = nullptr;
  Result (*event_record)(Event event, Stream stream) = nullptr;
  Result (*event_synchronize)(Event event) = nullptr;
  Result (*event_elapsed_time)(float* ms, Event start, Event end) = nullptr;
  Result (*get_error_name)(Result error, const char** name) = nullptr;
  Result (*get_error_string)(Result error, const char** text) = nullptr;
};

// The process-wide driver table: the one installed by set_driver_for_testing, else the real
// driver loaded on first use. nullptr when there is no usable driver; `why` then says
// "no CUDA driver found: ..." with the loader's message.
[[nodiscard]] const DriverApi* driver(std::string* why = nullptr);

// Replaces the table for this process (nullptr restores the real one). For tests.
void set_driver_for_testing(const DriverApi* api);
[[nodiscard]] bool test_driver_installed();

// True when this process (not a parent it was forked from) has initialised the real driver.
// A process that has cannot fork workers that use CUDA: CUDA's state does not survive fork.
[[nodiscard]] bool initialised_in_this_process();

// True for the real driver's table, false for a test table. Only the real driver's kernels
// reach CUPTI.
[[nodiscard]] bool is_real_driver(const DriverApi& api);

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
[[nodiscard]] std::string describe_result(const DriverApi& api, Result r);

// True for errors after which the context is unusable (illegal address, launch failure...).
[[nodiscard]] bool is_sticky(Result r) noexcept;

}  // namespace driver
}  // namespace gpuforecast

namespace gpuforecast GPUFORECAST_API {

// enumerate_cuda_devices() read through a given table (a fake one in tests). Device i of the
// result is driver ordinal i. Throws cuda_error when a query fails.
[[nodiscard]] std::vector<Device> enumerate_cuda_devices(const driver::DriverApi& api);

}  // namespace gpuforecast
