#pragma once
// The MPI measurement farm (gpuforecast::farm): one search spread over the GPUs of many nodes.
// mpi.h stays in src/farm/, so that programs including this header need no MPI include path.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/config.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// The MPI environment of a measurement farm: one per process, alive for as long as any farm
// object is. Rank 0 coordinates (runs the strategy), every other rank measures.
class FarmSession {
 public:
  // Initialises MPI (serialised threads: rank 0's coordinator does its MPI on a thread of its
  // own; never two threads at once).
  FarmSession();
  // Finalises MPI, unless a rank was lost: then MPI's finalise would wait on it forever, so the
  // process leaves without it and mpirun ends the job with a non-zero status (the results have
  // been printed and cached by then).
  ~FarmSession();
  FarmSession(const FarmSession&) = delete;
  FarmSession& operator=(const FarmSession&) = delete;

  [[nodiscard]] int rank() const noexcept { return m_rank; }
  [[nodiscard]] int size() const noexcept { return m_size; }
  [[nodiscard]] bool coordinator() const noexcept { return m_rank == 0; }
  [[nodiscard]] std::size_t workers() const noexcept { return static_cast<std::size_t>(m_size - 1); }

 private:
  int m_rank = 0;
  int m_size = 1;
};

// Rank 0 of a measurement farm as an AsyncBenchmarker (core/concepts.hpp): a
// SearchContext built on it lets the strategy submit a candidate whenever a worker rank is free,
// and hands results back as they stream in. It is a plain Benchmarker too (measure() hands a
// batch out and gathers it). Strategies do not know that their measurements ran on other nodes.
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
  HeldWork went = HeldWork::none;  // requeued (to another rank), failed (lost on max_attempts ranks)
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

// A worker rank of a measurement farm: it measures the candidates rank 0 sends, one at a time,
// with whatever Benchmarker it owns (the CUDA benchmarker of its node, or a replay), sends a
// heartbeat while a measurement runs, and returns when rank 0 says stop.
struct FarmWorkerOptions {
  double heartbeat_interval_s = 0.25;
  std::string device;  // what this rank measures on, told to rank 0
};

using FarmMeasureFunction = std::function<std::vector<Measurement>(std::span<const Candidate>)>;

// `prototype` gives kernel, device, problem size and spec; rank 0 sends only configurations.
void serve_farm(const FarmMeasureFunction& measure, const Candidate& prototype, const FarmWorkerOptions& options = {});

// A worker rank that cannot measure (no CUDA driver, no GPU) tells rank 0 why instead of saying
// hello, and takes no work; rank 0 reports the reason.
void refuse_farm(const std::string& reason);

template <Benchmarker B>
void serve_farm(B& benchmarker, const Candidate& prototype, const FarmWorkerOptions& options = {}) {
  serve_farm([&benchmarker](std::span<const Candidate> c) { return benchmarker.measure(c); }, prototype, options);
}

}  // namespace gpuforecast
