#pragma once
// A fake CUDA driver behind the DriverApi table: device memory is host memory, kernels do
// nothing, and a kernel's name decides its fault: "crash" -> illegal address (sticky until the
// context is reset), "abort" -> the process dies (as a driver crash would), "hang" -> never
// finishes, "toolarge" -> launch refused for resources, "wrong" -> writes garbage into its
// first buffer. Event times are deterministic. Used to test the benchmarker's failure paths on
// machines without a GPU; forked workers inherit it.
#include <cuda.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <memory>
#include <string>
#include <vector>
#include <thread>

#include "runtime/detail/driver_api.hpp"

namespace gpuforecast::test::fake {

struct FakeFunction {
  std::string name;
};

struct State {
  int device_count = 2;
  bool sticky = false;
  std::string last_function;
  std::map<driver::DevicePtr, std::size_t> allocations;
  int launches = 0;
  int context_resets = 0;
  float event_ms = 0.25f;
  std::mutex mutex;
  // Function handles stay valid for the life of the fake, as a driver's do for its context.
  std::vector<std::unique_ptr<FakeFunction>> functions;
};

inline State& state() {
  static State s;
  return s;
}

namespace impl {
using driver::Result;
inline Result sticky_or(Result r) { return state().sticky ? driver::error_illegal_address : r; }
inline bool named(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }
inline Result sync() {
  if (named(state().last_function, "hang"))
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  if (named(state().last_function, "crash")) {
    state().sticky = true;  // delivered once, as a real fault is; the error stays until a reset
    state().last_function.clear();
  }
  return sticky_or(driver::success);
}
inline Result init(unsigned) { return 0; }
inline Result version(int* v) { *v = 13000; return 0; }
inline Result count(int* n) { *n = state().device_count; return 0; }
inline Result get(driver::DeviceHandle* d, int i) { *d = i; return i < state().device_count ? 0 : driver::error_invalid_value; }
inline Result name(char* n, int len, driver::DeviceHandle) { std::strncpy(n, "NVIDIA H200", static_cast<std::size_t>(len)); return 0; }
inline Result attribute(int* v, int a, driver::DeviceHandle) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 4 << 20; break;  // small: the flush buffer is host memory
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 233472; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    default: return driver::error_invalid_value;
  }
  return 0;
}
inline Result total_mem(std::size_t* b, driver::DeviceHandle) { *b = std::size_t{141} << 30; return 0; }
inline Result retain(driver::Context* c, driver::DeviceHandle) { *c = &state(); return 0; }
inline Result release(driver::DeviceHandle) { return 0; }
inline Result reset(driver::DeviceHandle) {
  state().sticky = false;
  state().last_function.clear();
  ++state().context_resets;
  return 0;
}
inline Result set_current(driver::Context) { return 0; }
inline Result ctx_sync() { return sync(); }
inline Result load(driver::Module* m, const void* image) { *m = const_cast<void*>(image); return sticky_or(0); }
inline Result unload(driver::Module) { return 0; }
inline Result function(driver::Function* f, driver::Module, const char* n) {
  auto owned = std::make_unique<FakeFunction>(FakeFunction{n});
  *f = owned.get();
  {
    std::lock_guard lock(state().mutex);
    state().functions.push_back(std::move(owned));
  }
  return sticky_or(0);
}
inline Result global(driver::DevicePtr* p, std::size_t* bytes, driver::Module, const char*) {
  static std::byte constant_bank[65536];
  *p = reinterpret_cast<driver::DevicePtr>(constant_bank);
  *bytes = sizeof constant_bank;
  return sticky_or(0);
}
inline Result func_attr(driver::Function, int, int) { return sticky_or(0); }
inline Result alloc(driver::DevicePtr* p, std::size_t n) {
  if (state().sticky) return driver::error_illegal_address;
  void* m = std::calloc(n, 1);
  if (!m) return driver::error_out_of_memory;
  *p = reinterpret_cast<driver::DevicePtr>(m);
  state().allocations[*p] = n;
  return 0;
}
inline Result mem_free(driver::DevicePtr p) {
  state().allocations.erase(p);
  std::free(reinterpret_cast<void*>(p));
  return 0;
}
inline Result htod(driver::DevicePtr d, const void* s, std::size_t n) {
  if (state().sticky) return driver::error_illegal_address;
  std::memcpy(reinterpret_cast<void*>(d), s, n);
  return 0;
}
inline Result dtoh(void* d, driver::DevicePtr s, std::size_t n) {
  if (state().sticky) return driver::error_illegal_address;
  std::memcpy(d, reinterpret_cast<const void*>(s), n);
  return 0;
}
// Only the L2 flush uses memset, and nothing reads what it writes; writing it here would cost
// the tests host time in proportion to the flush, which grows with the measured enqueue time.
inline Result memset_async(driver::DevicePtr, unsigned char, std::size_t, driver::Stream) {
  return sticky_or(0);
}
inline Result launch(driver::Function f, unsigned, unsigned, unsigned, unsigned bx, unsigned by, unsigned bz, unsigned,
                     driver::Stream, void** params, void**) {
  if (state().sticky) return driver::error_illegal_address;
  const std::string& n = static_cast<FakeFunction*>(f)->name;
  state().last_function = n;
  ++state().launches;
  if (named(n, "toolarge") || bx * by * bz > 1024) return driver::error_launch_out_of_resources;
  if (named(n, "abort")) std::abort();
  if (named(n, "wrong")) {
    const auto p = *static_cast<driver::DevicePtr*>(params[0]);
    if (auto it = state().allocations.find(p); it != state().allocations.end())
      std::memset(reinterpret_cast<void*>(p), 0x7f, it->second);
  }
  return 0;
}
inline Result stream_create(driver::Stream* s, unsigned) { *s = &state(); return 0; }
inline Result stream_destroy(driver::Stream) { return 0; }
inline Result stream_sync(driver::Stream) { return sync(); }
inline Result event_create(driver::Event* e, unsigned) { *e = new int(0); return 0; }
inline Result event_destroy(driver::Event e) { delete static_cast<int*>(e); return 0; }
inline Result event_record(driver::Event, driver::Stream) { return sticky_or(0); }
inline Result event_sync(driver::Event) { return sync(); }
inline Result elapsed(float* ms, driver::Event, driver::Event) {
  *ms = state().event_ms;
  return sticky_or(0);
}
inline Result error_name(Result r, const char** s) {
  *s = r == driver::error_illegal_address ? "CUDA_ERROR_ILLEGAL_ADDRESS"
       : r == driver::error_launch_out_of_resources ? "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
                                                     : "CUDA_ERROR_FAKE";
  return 0;
}
inline Result error_string(Result, const char** s) { *s = "fake driver error"; return 0; }
}  // namespace impl

inline const driver::DriverApi& api() {
  static const driver::DriverApi a = [] {
    driver::DriverApi t;
    t.init = impl::init;
    t.driver_get_version = impl::version;
    t.device_get_count = impl::count;
    t.device_get = impl::get;
    t.device_get_name = impl::name;
    t.device_get_attribute = impl::attribute;
    t.device_total_mem = impl::total_mem;
    t.primary_ctx_retain = impl::retain;
    t.primary_ctx_release = impl::release;
    t.primary_ctx_reset = impl::reset;
    t.ctx_set_current = impl::set_current;
    t.ctx_synchronize = impl::ctx_sync;
    t.module_load_data = impl::load;
    t.module_unload = impl::unload;
    t.module_get_function = impl::function;
    t.module_get_global = impl::global;
    t.func_set_attribute = impl::func_attr;
    t.mem_alloc = impl::alloc;
    t.mem_free = impl::mem_free;
    t.memcpy_htod = impl::htod;
    t.memcpy_dtoh = impl::dtoh;
    t.memset_d8_async = impl::memset_async;
    t.launch_kernel = impl::launch;
    t.stream_create = impl::stream_create;
    t.stream_destroy = impl::stream_destroy;
    t.stream_synchronize = impl::stream_sync;
    t.event_create = impl::event_create;
    t.event_destroy = impl::event_destroy;
    t.event_record = impl::event_record;
    t.event_synchronize = impl::event_sync;
    t.event_elapsed_time = impl::elapsed;
    t.get_error_name = impl::error_name;
    t.get_error_string = impl::error_string;
    return t;
  }();
  return a;
}

// Installs the fake for the scope of a test.
struct Installed {
  Installed() { driver::set_driver_for_testing(&api()); }
  ~Installed() { driver::set_driver_for_testing(nullptr); }
};

}  // namespace gpuforecast::test::fake
