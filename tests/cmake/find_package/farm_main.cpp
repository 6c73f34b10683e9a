// A program that farms out measurements, against the installed package: rank 0 coordinates,
// the other ranks replay what they are asked (a real one would own its GPUs). Built by
// scripts/test's consumer step; run it under mpirun.
#include <gpuforecast/farm.hpp>
#include <gpuforecast/core/concepts.hpp>

#include <cstdio>

static_assert(gpuforecast::AsyncBenchmarker<gpuforecast::FarmCoordinator>);

int main() {
  gpuforecast::FarmSession session;
  if (!session.coordinator()) {
    gpuforecast::refuse_farm("farm_consumer: this worker measures nothing");
    return 0;
  }
  std::printf("farm_consumer: rank 0 of %d\n", session.size());
  return 0;
}
