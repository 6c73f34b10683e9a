#pragma once
// XGBoost (OpenMP) threads spin while they wait for work. On a machine with more runnable
// threads than cores (a shared 2-core box: load 16) that turned a 1.4 s fit into 32 s.
// libgomp reads OMP_WAIT_POLICY once, when it is loaded, so a program that wants passive
// waiting must have it in its environment at start: this re-executes the current program
// (/proc/self/exe with /proc/self/cmdline) with OMP_WAIT_POLICY=passive when it is unset.
// Returns only if nothing was done (already set, or re-exec impossible). Not installed; exported
// for the CLI and the benchmarks (internal_api.hpp).
#include "internal_api.hpp"

namespace gpuforecast GPUFORECAST_INTERNAL_API {
namespace detail {

void ensure_passive_openmp_wait();

}  // namespace detail
}  // namespace gpuforecast
