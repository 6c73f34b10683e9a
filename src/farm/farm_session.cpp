#include "gpuforecast/farm.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "farm/lost_ranks.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

FarmSession::FarmSession() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) throw invalid_argument_error("FarmSession: MPI is initialised already (one session per process)");
  int provided = 0;
  // Serialised: rank 0's coordinator does its MPI on a thread of its own while the strategy
  // thinks (one thread at a time; with less it pumps on the caller's thread).
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m_size);
}

FarmSession::~FarmSession() {
  if (detail::farm::ranks_lost()) {
    // MPI_Finalize synchronises with every rank, and a lost one never comes. The results are
    // out already: leave without it, and mpirun ends the job (status 1, "exiting improperly").
    // MPI_Abort would do the same, but Open MPI 4.1.4's mpirun crashes in its own cleanup then.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(0);
  }
  MPI_Finalize();
}

}  // namespace gpuforecast
