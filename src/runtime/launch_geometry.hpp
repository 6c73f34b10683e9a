#pragma once
// Grid, block and dynamic shared memory of one configuration, from the T1 geometry
// expressions of its KernelSpec.
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/kernel_spec.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct LaunchGeometry {
  std::array<std::uint64_t, 3> grid{1, 1, 1};   // blocks
  std::array<std::uint64_t, 3> block{1, 1, 1};  // threads per block
  std::uint64_t shared_memory_bytes = 0;        // dynamic shared memory

  [[nodiscard]] std::uint64_t threads_per_block() const noexcept { return block[0] * block[1] * block[2]; }
  [[nodiscard]] std::string to_string() const;  // "grid (128,64,1) block (32,8,1) smem 0"
};

// Kernel Tuner semantics:
//  - block[d] = LocalSize[d];
//  - dimension d with GridDiv expressions: grid[d] = ceil(P[d] / prod(GridDiv[d])), where P is
//    the problem size (1 beyond its length), as Kernel Tuner's grid_div_x/y/z;
//  - dimension d without GridDiv: GlobalSize[d] (GlobalSizeType "CUDA": blocks), or
//    ceil(GlobalSize[d] / LocalSize[d]) ("OpenCL": threads);
//  - dynamic shared memory: the SharedMemory expression.
// Expressions see the config's parameters and ProblemSize[i]; `problem_size` overrides the
// spec's when not empty. Throws expression_error for bad expressions and invalid_argument_error
// (naming the config) for zero, negative or non-integral sizes.
[[nodiscard]] LaunchGeometry compute_launch_geometry(const KernelSpec& spec, const Config& config,
                                                     std::span<const std::int64_t> problem_size = {});

// Evaluates one T1 expression (a size, a geometry entry) for a config. `max(p)`/`min(p)` of a
// single parameter take the config's value (the space's value lists are not known here).
[[nodiscard]] double evaluate_spec_expression(const std::string& expression, const Config& config,
                                              std::span<const std::int64_t> problem_size);

}  // namespace gpuforecast
