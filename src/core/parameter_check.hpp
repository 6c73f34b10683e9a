#pragma once
// check_configuration for batches: a batch's configurations share one name list, so the names
// are matched against the schema once, not per row.
#include <cstddef>
#include <string>
#include <vector>

#include "gpuforecast/core/parameter_schema.hpp"

namespace gpuforecast::detail {

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
