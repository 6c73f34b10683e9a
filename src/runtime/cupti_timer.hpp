#pragma once
// Kernel-only durations from CUPTI activity records (CONCURRENT_KERNEL). One per process;
// unavailable (nullptr, with the reason) when CUPTI cannot enable activity collection, e.g.
// without a GPU, where measurement falls back to CUDA events.
#include <string>
#include <vector>

namespace gpuforecast::detail {

class CuptiKernelTimes {
 public:
  // Enables collection on first call. Must be called before the context is created.
  static CuptiKernelTimes* instance(std::string* why = nullptr);
  // Flushes CUPTI's buffers and returns kernel durations (ms) completed since the last call.
  std::vector<double> take_ms();
};

}  // namespace gpuforecast::detail
