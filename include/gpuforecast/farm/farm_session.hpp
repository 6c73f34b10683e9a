#pragma once
// The MPI environment of a measurement farm: one per process, alive for as long as any farm
// object is. Rank 0 coordinates (runs the strategy), every other rank measures. mpi.h stays in
// src/farm/, so that programs including this header need no MPI include path.
#include <cstddef>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

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

}  // namespace gpuforecast
