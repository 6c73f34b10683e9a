#include "runtime/cupti_timer.hpp"

#include <cupti.h>
#include <fmt/core.h>

#include <cstdlib>
#include <mutex>

namespace gpuforecast::detail {

namespace {
std::mutex g_mutex;
std::vector<double> g_durations_ms;
constexpr std::size_t kBufferBytes = 1 << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  CUpti_Activity* record = nullptr;
  std::lock_guard lock(g_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      if (k->end > k->start) g_durations_ms.push_back(static_cast<double>(k->end - k->start) / 1e6);
    }
  }
  std::free(buffer);
}
}  // namespace

CuptiKernelTimes* CuptiKernelTimes::instance(std::string* why) {
  static CuptiKernelTimes timer;
  static std::string failure;
  static const bool ok = [] {
    if (std::getenv("GPUFORECAST_NO_CUPTI")) {
      failure = "CUPTI disabled by GPUFORECAST_NO_CUPTI";
      return false;
    }
    if (auto r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS) {
      const char* s = nullptr;
      cuptiGetResultString(r, &s);
      failure = fmt::format("cuptiActivityRegisterCallbacks: {}", s ? s : "?");
      return false;
    }
    if (auto r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); r != CUPTI_SUCCESS) {
      const char* s = nullptr;
      cuptiGetResultString(r, &s);
      failure = fmt::format("cuptiActivityEnable: {}", s ? s : "?");
      return false;
    }
    return true;
  }();
  if (!ok) {
    if (why) *why = failure;
    return nullptr;
  }
  return &timer;
}

std::vector<double> CuptiKernelTimes::take_ms() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(g_mutex);
  std::vector<double> out;
  out.swap(g_durations_ms);
  return out;
}

}  // namespace gpuforecast::detail
