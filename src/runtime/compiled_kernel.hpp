#pragma once
// The result of compiling one KernelSpec + Config for one architecture: the loadable image,
// the PTX, the compiler log and the static features read from them.
#include <string>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct CompiledKernel {
  bool ok = false;
  std::string log;           // NVRTC program log (errors, or -Xptxas=-v resource usage)
  std::string target;        // "sm_90" (cubin) or "compute_120" (PTX, JIT-compiled by the driver)
  bool is_cubin = false;
  std::string image;         // cubin bytes, or PTX text; what cuModuleLoadData takes
  std::string ptx;           // PTX text (for the instruction mix)
  std::string lowered_name;  // entry point symbol in the image
  double compile_ms = 0;     // NVRTC time when it was compiled (not the cache lookup)
  Features features;         // static features; see static_features.hpp
  std::string key;           // content address (hex)
};

}  // namespace gpuforecast
