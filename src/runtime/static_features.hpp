#pragma once
// Static features of compiled code, available without a GPU (docs/runtime.md lists each and
// where it comes from):
//  - from the ptxas resource report (-Xptxas=-v) in the NVRTC log: registers, spill_stores_bytes,
//    spill_loads_bytes, local_memory_bytes (stack frame), static_shared_memory_bytes,
//    constant_memory_bytes, barriers;
//  - from the PTX text, static instruction counts (not dynamic: a loop body counts once, an
//    unrolled loop as often as it is unrolled): ptx_ld_global, ptx_st_global, ptx_ld_shared,
//    ptx_st_shared, ptx_ld_local, ptx_st_local, ptx_ld_const, ptx_fma_f16, ptx_fma_f32,
//    ptx_fma_f64, ptx_mul_f32, ptx_mul_f64, ptx_mul_int, ptx_add_f32, ptx_add_f64, ptx_add_int,
//    ptx_sfu, ptx_branch, ptx_barrier, ptx_atomic, ptx_mma, ptx_cp_async, ptx_vector_memory,
//    ptx_total.
#include <string>
#include <string_view>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Resource usage of entry `entry` (the last function reported when empty or not found).
// Missing fields are absent from the result.
[[nodiscard]] Features parse_ptxas_report(std::string_view log, std::string_view entry = {});

// Instruction counts over the whole PTX module; every ptx_* name is present (0 if none).
[[nodiscard]] Features ptx_instruction_mix(std::string_view ptx);

// Every feature name this library produces, in a fixed order (for surrogates).
[[nodiscard]] const std::vector<std::string>& static_feature_names();

}  // namespace gpuforecast
