#pragma once
// Host-side argument data of a KernelSpec (T1 `Arguments`): buffers filled as the spec says,
// scalars, and the comparison of output buffers against a reference configuration's.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/kernel_spec.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

enum class ElementType { f16, f32, f64, i8, u8, i16, u16, i32, u32, i64, u64 };

// "float", "double", "half"/"float16", "int"/"int32", "uint32"/"unsigned int", "int64",
// "char"/"int8", ...; throws invalid_argument_error for others.
[[nodiscard]] ElementType parse_element_type(const std::string& type);
[[nodiscard]] std::size_t element_size(ElementType t) noexcept;

struct HostArgument {
  std::string name;
  ElementType type = ElementType::f32;
  bool scalar = false;    // passed by value
  bool constant = false;  // lives in __constant__ memory under `name` (not a kernel parameter)
  bool output = false;    // compared against the reference configuration
  std::size_t count = 1;  // elements
  std::vector<std::byte> data;  // count * element_size bytes, filled
};

// Fills every argument: "Constant" with FillValue, "Random" uniformly in [0, FillValue) (or
// [0, 1) when FillValue is 0) from `seed` and the argument's position, scalars with FillValue.
// Sizes are evaluated for `config` (see evaluate_spec_expression). Throws input-naming
// invalid_argument_error for unsupported types or fill rules.
[[nodiscard]] std::vector<HostArgument> make_host_arguments(const KernelSpec& spec, const Config& config,
                                                            std::span<const std::int64_t> problem_size,
                                                            std::uint64_t seed);

struct VerificationResult {
  bool ok = true;
  double max_abs_error = 0;
  std::size_t mismatches = 0;
  std::string message;  // first mismatch, e.g. "C[17] = 3.5, reference 3.25"
};

// Element-wise |a - r| <= atol + rtol * |r| (NaN where the reference is not NaN fails).
// Different sizes or types fail.
[[nodiscard]] VerificationResult verify_output(const HostArgument& reference, std::span<const std::byte> actual,
                                               double atol = 1e-6, double rtol = 1e-4);

}  // namespace gpuforecast
