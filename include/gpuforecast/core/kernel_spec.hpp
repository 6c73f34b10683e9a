#pragma once
// Everything needed to compile and launch a kernel for any Config (the T1 input format).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct KernelArgument {
  std::string name;
  std::string type;          // "float", "double", "int32", ...
  std::string memory_type;   // "Vector" or "Scalar"
  std::string access_type;   // "ReadOnly", "WriteOnly", "ReadWrite"
  std::string mem_type;      // "" or "Constant" (lives in __constant__ memory)
  std::string fill_type;     // "Constant", "Random", "BinaryRaw", ...
  std::string size;          // element count, an expression over ProblemSize[i] and parameters
  double fill_value = 0;
  bool output = false;       // verified against the reference configuration
};

struct KernelSpec {
  std::string benchmark_name;  // space identity, e.g. "convolution_milo"
  std::string kernel_name;     // entry point, e.g. "convolution_kernel"
  std::string language = "CUDA";
  std::string kernel_file;     // as named in the spec (relative to the spec's folder)
  std::string source;          // CUDA source text, when loaded
  std::vector<std::string> compiler_options;
  // Launch geometry: expressions over the parameters and ProblemSize[i].
  std::array<std::string, 3> local_size{"1", "1", "1"};
  std::array<std::string, 3> global_size{"1", "1", "1"};
  std::string global_size_type = "CUDA";  // "CUDA": GlobalSize counts blocks; "OpenCL": threads
  std::array<std::vector<std::string>, 3> grid_div;  // GridDivX/Y/Z (Kernel Tuner convention)
  std::string shared_memory = "0";                   // dynamic shared memory bytes, expression
  std::vector<std::int64_t> problem_size;
  std::vector<KernelArgument> arguments;
  // Template arguments of the entry point, e.g. "gemm<{tile_m}, {tile_n}>"; empty: parameters
  // are passed as #defines (the Kernel Tuner convention).
  std::string name_expression;
};

}  // namespace gpuforecast
