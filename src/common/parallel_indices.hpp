#pragma once
// Independent jobs 0..n-1 on several threads, failing as one thread would: the first exception
// in index order is rethrown once every started job has finished. Jobs are handed out in index
// order and none starts after a failure, so every job before a failed one has run.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace gpuforecast::detail {

// Threads for n independent jobs: `requested` (0: one per hardware thread), at most n, at least 1.
inline unsigned parallel_threads(std::size_t n, unsigned requested) {
  const unsigned wanted = requested == 0 ? std::max(1u, std::thread::hardware_concurrency()) : requested;
  return static_cast<unsigned>(std::clamp<std::size_t>(n, 1, wanted));
}

// job(i) for every i in [0, n), on `threads` threads (one: on the calling thread).
template <class Job>
void parallel_for_each_index(std::size_t n, unsigned threads, Job&& job) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        job(i);
      } catch (...) {
        errors[i] = std::current_exception();
        next = n;
      }
    }
  };
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace gpuforecast::detail
