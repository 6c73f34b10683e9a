#pragma once
// Rank 0 of a measurement farm as an AsyncBenchmarker (core/async_benchmarker.hpp): a
// SearchContext built on it lets the strategy submit a candidate whenever a worker rank is free,
// and hands results back as they stream in. It is a plain Benchmarker too (measure() hands a
// batch out and gathers it). Strategies do not know that their measurements ran on other nodes.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/async_benchmarker.hpp"
#include "gpuforecast/core/config.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct FarmCoordinatorOptions {
  // A worker that holds a candidate and sends nothing (no heartbeat, no result) for this long is
  // taken as lost: it gets no more work and its candidate goes to another rank.
  double heartbeat_timeout_s = 10;
  // Ranks a candidate is tried on before it is reported failed with the reasons.
  std::size_t max_attempts = 2;
  // Candidates per rank an asynchronous strategy may keep waiting on rank 0, beyond the one
  // each rank measures (workers() = ranks x (1 + this)): rank 0's MPI thread hands one to a
  // rank the moment it finishes, even while the strategy is busy choosing. 0: choose only when
  // a rank is free (fresher choices, idle ranks while rank 0 thinks).
  std::size_t queued_per_rank = 1;
};

// What happened to the ranks, for reports and tests.
struct FarmRankReport {
  int rank = 0;
  std::string device;       // what the rank said it measures on
  std::size_t measured = 0;  // results it returned
  bool lost = false;
  std::string reason;  // why it was lost or refused
};

// A rank given up on while the farm ran: which, what it was measuring and where that went.
struct FarmRankLost {
  FarmRankReport rank;
  std::optional<Config> held;  // the candidate it held, if any
  std::string went;            // "requeued" (to another rank), "failed" (lost on max_attempts ranks), ""
};

class FarmCoordinator {
 public:
  // Needs a FarmSession on rank 0. Waits for every worker's hello; a worker whose device is not
  // `device` (when both are named) says so and takes no work, as does one that refused
  // (refuse_farm: no CUDA driver, no GPU). With `device` empty the target is the device of the
  // lowest rank that named one. Throws error naming each rank's reason when no rank can measure.
  explicit FarmCoordinator(std::string device = {}, FarmCoordinatorOptions options = {});

  // Measures every candidate on the worker ranks, in any order, and returns the results in the
  // candidates' order. A candidate whose ranks were all lost comes back failed
  // (runtime_failed) with the reason; with no worker left, the rest come back so too.
  [[nodiscard]] std::vector<Measurement> measure(std::span<const Candidate> candidates);

  // Asynchronous use: workers() is the ranks that take work now (lost and refusing ones do
  // not count) times 1 + queued_per_rank; submit() queues a candidate for the next free rank; wait_any() returns the
  // results that have come back (a candidate lost on max_attempts ranks, or left when no rank
  // remains, comes back failed with the reasons).
  [[nodiscard]] std::size_t workers() const;
  [[nodiscard]] std::uint64_t submit(const Candidate& candidate);
  [[nodiscard]] std::vector<Landed> wait_any();

  // Called on this rank with each result as it lands, before measure() or wait_any() hands it
  // over: a cache written from it holds every result that came back even when the job is
  // aborted. Where MPI allows threads it runs on the coordinator's MPI thread: what it shares
  // with the caller's thread (the cache the search's observer also writes) needs a lock.
  using ResultHook = std::function<void(const Candidate&, const Measurement&)>;
  void on_result(ResultHook hook);
  // Called with each rank given up on, as it is (on the coordinator's MPI thread where there is
  // one, like on_result); the lost rank's line on stderr is printed either way.
  using LostHook = std::function<void(const FarmRankLost&)>;
  void on_rank_lost(LostHook hook);

  // The device the search runs on (given, or taken from the ranks).
  [[nodiscard]] std::string device() const;

  // Tells the workers that still answer to end. The last copy's destruction does it too.
  void stop();

  [[nodiscard]] std::vector<FarmRankReport> ranks() const;
  [[nodiscard]] std::size_t live_workers() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> m_impl;  // copies share it: a SearchContext holds one, the caller reads the other
};

static_assert(Benchmarker<FarmCoordinator>);
static_assert(AsyncBenchmarker<FarmCoordinator>);

}  // namespace gpuforecast
