#pragma once
// Measures candidates on the GPUs of this machine: NVRTC compile (a pool compiling ahead),
// module load through the dlopen'd driver, argument buffers from the T1 spec, verification
// against a reference configuration, L2 flush, warm-up and adaptive sampling timed by CUPTI
// and cross-checked with CUDA events. Faults are statuses, never exceptions (docs/runtime.md).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/device.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// How NVRTC compiles each candidate (the benchmarker's compiler; `features` uses the same).
struct CompilerOptions {
  std::vector<std::string> extra_options;  // appended after the spec's CompilerOptions
  std::vector<std::string> include_paths;  // empty: the CUDA toolkit's include directory
  bool resource_report = true;             // -Xptxas=-v, for the static features
  std::string cache_directory;             // empty: memory cache only
  std::size_t memory_cache_entries = 4096;
};

struct CudaBenchmarkerOptions {
  // When to stop sampling a candidate, as nvbench chooses: "fixed_count" {count}, "relative_ci"
  // {width, confidence, min_samples}, "time_cap" {seconds}, or "adaptive", the first of
  // relative_ci {width=0.01, confidence=0.95, min_samples=10}, fixed_count {max_samples=200} and
  // time_cap {max_seconds=1} to stop. An unknown name or parameter throws, listing what is accepted.
  std::string stopping = "adaptive";
  std::map<std::string, double> stopping_params;  // e.g. {{"width", 0.01}, {"max_samples", 200}}
  int warmup = 2;
  bool flush_l2 = true;               // write a buffer of 2x the L2 before every sample (not timed)
  double timeout_s = 10;              // no kernel run finishing for this long: status timeout
  // Measure in worker processes (one per device) that are killed and replaced after a hang
  // or crash. Off: measure in this process (faster to start; a hang cannot be recovered).
  bool isolate = true;
  bool verify = true;
  double atol = 1e-6, rtol = 1e-4;    // |out - ref| <= atol + rtol * |ref|
  // Reference configuration per kernel (Candidate::kernel or KernelSpec::benchmark_name). A
  // kernel without one uses the first of its candidates that compiles.
  std::map<std::string, Config> references;
  // > 0: right after each measurement its device times the kernel's reference configuration
  // this many times, the device's first time sentinel_warmup_repeats (Measurement::sentinel_ms).
  // The same work every time: a slower sentinel is a slower device, not a slower configuration
  // (search/anomaly_monitor.hpp tests it). Costs the reference's run time times the repeats.
  std::size_t sentinel_repeats = 0;
  std::size_t sentinel_warmup_repeats = 200;
  std::uint64_t seed = 0;             // random argument data
  std::vector<int> device_ordinals;   // empty: every device the driver sees
  std::size_t compile_threads = 0;    // 0: one per core
  CompilerOptions compiler;
};

class CudaBenchmarker {
 public:
  // Throws cuda_error("no CUDA driver found: ...") on machines without a driver or a GPU.
  explicit CudaBenchmarker(CudaBenchmarkerOptions options = {});
  ~CudaBenchmarker();
  CudaBenchmarker(CudaBenchmarker&&) noexcept;
  CudaBenchmarker& operator=(CudaBenchmarker&&) noexcept;

  // One Measurement per candidate, in order. Candidates are spread over one worker per device;
  // each candidate needs a spec (source and geometry).
  [[nodiscard]] std::vector<Measurement> measure(std::span<const Candidate> candidates);

  [[nodiscard]] const std::vector<Device>& devices() const noexcept;
  [[nodiscard]] const CudaBenchmarkerOptions& options() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

static_assert(Benchmarker<CudaBenchmarker>);

}  // namespace gpuforecast
