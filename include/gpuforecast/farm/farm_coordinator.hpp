#pragma once
// Rank 0 of a measurement farm as a Benchmarker: a SearchContext built on it hands every batch
// the strategy asks for to the worker ranks as they become free, and gathers the results as
// they stream back. Strategies do not know that their measurements ran on other nodes.
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct FarmCoordinatorOptions {
  // A worker that holds a candidate and sends nothing (no heartbeat, no result) for this long is
  // taken as lost: it gets no more work and its candidate goes to another rank.
  double heartbeat_timeout_s = 10;
  // Ranks a candidate is tried on before it is reported failed with the reasons.
  std::size_t max_attempts = 2;
};

// What happened to the ranks, for reports and tests.
struct FarmRankReport {
  int rank = 0;
  std::string device;       // what the rank said it measures on
  std::size_t measured = 0;  // results it returned
  bool lost = false;
  std::string reason;  // why it was lost or refused
};

class FarmCoordinator {
 public:
  // Needs a FarmSession on rank 0. Waits for every worker's hello; a worker whose device is not
  // `device` (when both are named) says so and takes no work.
  explicit FarmCoordinator(std::string device = {}, FarmCoordinatorOptions options = {});

  // Measures every candidate on the worker ranks, in any order, and returns the results in the
  // candidates' order. A candidate whose ranks were all lost comes back failed
  // (runtime_failed) with the reason; with no worker left, the rest come back so too.
  [[nodiscard]] std::vector<Measurement> measure(std::span<const Candidate> candidates);

  // Called on this rank with each result as it lands, before measure() returns: a cache written
  // from it holds every result that came back even when the job is aborted mid-batch.
  using ResultHook = std::function<void(const Candidate&, const Measurement&)>;
  void on_result(ResultHook hook);

  // Tells the workers that still answer to end. The last copy's destruction does it too.
  void stop();

  [[nodiscard]] std::vector<FarmRankReport> ranks() const;
  [[nodiscard]] std::size_t live_workers() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> m_impl;  // copies share it: a SearchContext holds one, the caller reads the other
};

static_assert(Benchmarker<FarmCoordinator>);

}  // namespace gpuforecast
