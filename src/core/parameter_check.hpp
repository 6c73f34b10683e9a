#pragma once
// The checks of a configuration's names and values that a kernel's schema (core/) and a tuning
// space (space/tuning_space.cpp) share, and check_configuration for batches: a batch's
// configurations share one name list, so the names are matched against the schema once, not
// per row.
#include <cstddef>
#include <string>
#include <vector>

#include "gpuforecast/core/parameter_schema.hpp"

namespace gpuforecast::detail {

// "a, b, c".
[[nodiscard]] std::string join_names(const std::vector<std::string>& names);
// "1, 2, 4, 8" or, for a long list, "16, 32, ..., 128 (16 values)".
[[nodiscard]] std::string list_values(const std::vector<Value>& values);
// Throws invalid_configuration_error for configuration `row`, naming the parameter at fault
// (empty: the whole configuration) and what was expected.
[[noreturn]] void refuse_configuration(std::size_t row, const Config& config, std::string parameter,
                                       std::string expected, const std::string& message);
// Index into `known` of each of the config's parameters; refuses a configuration whose names are
// not exactly `known` (empty, missing, unknown with the closest known name, repeated). `what`
// names the owner of `known` in the error ("kernel gemm", "the space").
[[nodiscard]] std::vector<std::size_t> match_names(const std::vector<std::string>& known, const std::string& what,
                                                   const Config& config, std::size_t row);
// Type and finiteness of one value against the values its parameter takes; `source` says where
// those values come from ("seen in training", "the space's values").
void check_value(const Value& v, const std::string& name, const std::vector<Value>& values, const char* source,
                 const Config& config, std::size_t row);

// The schema index of each parameter of the last name list matched. The pointers are compared,
// never followed: valid for a batch whose configurations are all alive.
struct NameMatch {
  const KernelSchema* schema = nullptr;
  const std::vector<std::string>* names = nullptr;
  std::vector<std::size_t> index;
};

[[nodiscard]] std::string check_configuration(const KernelSchema& schema, const Config& config, std::size_t row,
                                              NameMatch& match);

}  // namespace gpuforecast::detail
