#include "runtime/compile_pool.hpp"

#include <algorithm>

namespace gpuforecast {

CompilePool::CompilePool(NvrtcCompiler& compiler, std::size_t threads) : m_compiler(compiler) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (std::size_t i = 0; i < threads; ++i) m_threads.emplace_back([this] { work(); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_cv.notify_all();
  for (auto& t : m_threads) t.join();
}

std::shared_future<std::shared_ptr<const CompiledKernel>> CompilePool::submit(std::shared_ptr<const KernelSpec> spec,
                                                                                 Config config, std::string target) {
  auto task = std::make_shared<std::packaged_task<std::shared_ptr<const CompiledKernel>()>>(
      [this, spec = std::move(spec), config = std::move(config), target = std::move(target)] {
        return m_compiler.compile(*spec, config, target);
      });
  std::shared_future<std::shared_ptr<const CompiledKernel>> future = task->get_future().share();
  {
    std::lock_guard lock(m_mutex);
    m_jobs.emplace_back([task] { (*task)(); });
  }
  m_cv.notify_one();
  return future;
}

void CompilePool::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(m_mutex);
      m_cv.wait(lock, [this] { return m_stop || !m_jobs.empty(); });
      if (m_jobs.empty()) return;
      job = std::move(m_jobs.front());
      m_jobs.pop_front();
    }
    job();
  }
}

}  // namespace gpuforecast
