#pragma once
// Candidate: KernelSpec + Config + Device (+ problem size): what a surrogate forecasts and a
// benchmarker measures.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/device.hpp"
#include "gpuforecast/core/kernel_spec.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Static compiler features (registers, spills, instruction mix...), by name; see runtime/.
using Features = std::map<std::string, double>;

struct Candidate {
  // Identity of the search space, e.g. "convolution_milo". Readers take it from the T1
  // BenchmarkName or from the folder a cache file lives in (the benchmark_hub convention).
  std::string kernel;
  std::vector<std::int64_t> problem_size;
  Config config;
  std::shared_ptr<const Device> device;
  std::shared_ptr<const KernelSpec> spec;  // optional: geometry and source when known
  Features features;                       // optional static features

  // "convolution_milo @ A100-PCIE-40GB [block_size_x=16, ...]" for messages.
  [[nodiscard]] std::string describe() const;
};

}  // namespace gpuforecast
