#pragma once
// Threads that compile ahead of measurement, so that compiling candidate i+1.. overlaps
// measuring candidate i. Jobs run in submission order.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/nvrtc_compiler.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class CompilePool {
 public:
  // threads == 0: std::thread::hardware_concurrency().
  CompilePool(NvrtcCompiler& compiler, std::size_t threads = 0);
  ~CompilePool();  // finishes queued jobs
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  // The spec is copied into the job; the future holds the kernel or the exception.
  [[nodiscard]] std::shared_future<std::shared_ptr<const CompiledKernel>> submit(
      std::shared_ptr<const KernelSpec> spec, Config config, std::string target);
  [[nodiscard]] std::size_t threads() const noexcept { return m_threads.size(); }

 private:
  void work();
  NvrtcCompiler& m_compiler;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<std::function<void()>> m_jobs;
  bool m_stop = false;
  std::vector<std::thread> m_threads;
};

}  // namespace gpuforecast
