#pragma once
// A farm of N virtual workers on a virtual clock, for planning and for measuring the price of
// parallel search without a cluster: each candidate is measured at once by a plain Benchmarker
// (a replay of a dataset, typically), then held on a virtual worker for the seconds the
// measurement charged (Measurement::cost_s: the stored compile + benchmark time of a replay).
// Results land in virtual-time order, so a search sees exactly what it would see on N real
// workers measuring that fast, and the same seed gives the same trace, with no waiting.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class SimulatedFarm {
 public:
  using MeasureFunction = std::function<std::vector<Measurement>(std::span<const Candidate>)>;

  // Throws invalid_argument_error for 0 workers or an empty function.
  SimulatedFarm(std::size_t workers, MeasureFunction measure);
  template <Benchmarker B>
  SimulatedFarm(std::size_t workers, B benchmarker)
      : SimulatedFarm(workers, MeasureFunction([b = std::make_shared<B>(std::move(benchmarker))](
                                                   std::span<const Candidate> c) { return b->measure(c); })) {}

  [[nodiscard]] std::size_t workers() const noexcept;
  // Starts `candidate` on the worker that frees up first (at the current virtual time, or when
  // that worker is done: a queue in submission order).
  [[nodiscard]] std::uint64_t submit(const Candidate& candidate);
  // Advances the virtual clock to the next finish and returns that one result (ties: the
  // earlier ticket first); empty when nothing is outstanding.
  [[nodiscard]] std::vector<Landed> wait_any();

  // Virtual seconds since the first submit: the wall time N real workers would have taken.
  [[nodiscard]] double clock_s() const noexcept;
  // Virtual seconds the workers spent measuring, summed (utilisation = busy / (workers x clock)).
  [[nodiscard]] double busy_s() const noexcept;

 private:
  struct State;
  std::shared_ptr<State> m_state;  // copies share it: a SearchContext holds one, the caller reads the other
};

static_assert(AsyncBenchmarker<SimulatedFarm>);

}  // namespace gpuforecast
