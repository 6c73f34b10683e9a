#pragma once
// The GPUs the CUDA driver sees, described as Device records from the driver's attributes
// (name, compute capability, SMs, clocks, memory, L2, shared memory, registers), completed
// with the built-in table's architecture data when the name is known.
#include <string>
#include <vector>

#include "gpuforecast/core/device.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Device i of the result is driver ordinal i. Throws cuda_error("no CUDA driver found: ...")
// without a driver, and cuda_error when a query fails.
// Unless this process already uses CUDA, a short-lived child process asks the driver, so that
// listing the GPUs does not stop this process from forking benchmark workers.
[[nodiscard]] std::vector<Device> enumerate_cuda_devices();

// "ampere", "hopper", ... for an NVIDIA compute capability.
[[nodiscard]] std::string nvidia_architecture(int major, int minor);

}  // namespace gpuforecast
