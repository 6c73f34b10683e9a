#pragma once
// Faults a worker rank injects into itself, so that tests can kill or hang a rank of a real
// mpirun job (`gpuforecast search --mpi --farm-fault`). Not installed: the public
// serve_farm() never injects any.
#include <cstddef>
#include <string>

#include "gpuforecast/farm.hpp"

namespace gpuforecast::detail::farm {

struct WorkerFaults {
  // After this many results (0: never) the rank kills itself (SIGKILL), or takes its next
  // candidate and stops answering for hang_seconds.
  std::size_t die_after = 0;
  std::size_t hang_after = 0;
  double hang_seconds = 3600;
};

// --farm-fault RANK:die:N or RANK:hang:N, as the rank `rank` takes it: the faults it injects
// (none when the fault is another rank's). Every rank parses it, so that a malformed one stops
// rank 0 too; throws invalid_argument_error naming the text.
[[nodiscard]] WorkerFaults parse_worker_faults(const std::string& spec, int rank);

void serve_farm(const FarmMeasureFunction& measure, const Candidate& prototype, const FarmWorkerOptions& options,
                const WorkerFaults& faults);

}  // namespace gpuforecast::detail::farm
