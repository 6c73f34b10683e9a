#pragma once
// A Benchmarker that measures several candidates at once and hands results back as they finish
// (a farm of worker ranks, a simulated farm on a virtual clock). A SearchContext built on one
// lets a strategy choose the next candidate while others are still running (search_context.hpp:
// free_workers(), submit(), wait_any()). A plain Benchmarker is one worker: the context adapts it.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// One finished measurement: the ticket submit() gave, and its result.
struct Landed {
  std::uint64_t ticket = 0;
  Measurement measurement;
};

// workers(): measurements that can run at once now (it may shrink as workers are lost; 0: none
//            left, and submitted candidates come back failed with the reason).
// submit(c): starts measuring c, or queues it when every worker is busy; returns its ticket.
// wait_any(): blocks until at least one submitted candidate has finished and returns those that
//            have, each exactly once; empty only when nothing is outstanding.
template <class B>
concept AsyncBenchmarker = requires(B b, const Candidate& c) {
  { b.workers() } -> std::convertible_to<std::size_t>;
  { b.submit(c) } -> std::same_as<std::uint64_t>;
  { b.wait_any() } -> std::same_as<std::vector<Landed>>;
};

}  // namespace gpuforecast
