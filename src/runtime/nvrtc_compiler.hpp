#pragma once
// Compiles a KernelSpec + Config with NVRTC, in process and without a GPU. Parameters become
// `-Dname=value` (the Kernel Tuner convention; `kernel_tuner=1` is defined too) or, when the
// spec has a name expression such as "gemm<{tile_m}, {tile_n}>", template arguments resolved
// with NVRTC name expressions. Results go through a content-addressed CompileCache.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/device.hpp"
#include "gpuforecast/core/kernel_spec.hpp"
#include "gpuforecast/runtime/cuda_benchmarker.hpp"  // CompilerOptions
#include "runtime/compile_cache.hpp"
#include "runtime/compiled_kernel.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class NvrtcCompiler {
 public:
  // Throws cuda_error when NVRTC cannot be used.
  explicit NvrtcCompiler(CompilerOptions options = {});
  ~NvrtcCompiler();
  NvrtcCompiler(const NvrtcCompiler&) = delete;
  NvrtcCompiler& operator=(const NvrtcCompiler&) = delete;

  // Never throws for errors in the kernel: a failed compile returns ok == false with the NVRTC
  // log. Thread-safe (the compile pool calls it from several threads).
  [[nodiscard]] std::shared_ptr<const CompiledKernel> compile(const KernelSpec& spec, const Config& config,
                                                              const std::string& target);
  [[nodiscard]] std::shared_ptr<const CompiledKernel> compile(const KernelSpec& spec, const Config& config,
                                                              const Device& device);
  // Uses candidate.spec (throws invalid_argument_error without one) and candidate.device.
  [[nodiscard]] std::shared_ptr<const CompiledKernel> compile(const Candidate& candidate);

  // Compiles (or finds) the candidate and copies the static features into candidate.features.
  // Returns false (features untouched) when it does not compile.
  bool attach_features(Candidate& candidate);

  // "sm_XY" when NVRTC supports compute capability X.Y, "compute_ZW" (PTX for the newest
  // architecture NVRTC knows, JIT-compiled by the driver) when the device is newer; throws
  // invalid_argument_error for devices older than NVRTC supports or without a compute capability.
  [[nodiscard]] static std::string target_for(const Device& device);
  [[nodiscard]] static std::vector<int> supported_architectures();  // e.g. {75, 80, ..., 121}
  [[nodiscard]] static std::string nvrtc_version();                 // "13.0"

  [[nodiscard]] CompileCache& cache() noexcept;
  [[nodiscard]] std::size_t nvrtc_invocations() const noexcept;  // compiles that reached NVRTC

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace gpuforecast
