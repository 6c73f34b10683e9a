#pragma once
// The community T1 input format: the tuning space (parameters, Conditions) and the kernel
// specification (file, launch geometry, problem size, arguments).
#include <string>

#include "gpuforecast/core/kernel_spec.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct T1File {
  std::string path;
  TuningSpace space;  // with the Conditions as constraints
  KernelSpec kernel;  // source loaded from KernelFile when the file exists beside the spec
};

// Throws input_error (file, JSON path) on malformed input and expression_error-derived
// input_error for bad conditions (naming the condition index and column).
[[nodiscard]] T1File read_t1(const std::string& path);
void write_t1(const T1File& file, const std::string& path);

}  // namespace gpuforecast
