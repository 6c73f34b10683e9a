#pragma once
// Internal side of surrogate_kind.hpp: the lookup registry.cpp uses, and the library's own kinds.
#include <optional>
#include <string_view>
#include <vector>

#include "gpuforecast/surrogate/registry.hpp"

namespace gpuforecast::detail {

// A copy (calling it runs outside the table's lock), or nullopt.
[[nodiscard]] std::optional<SurrogateKind> find_surrogate_kind(std::string_view name);
// ridge, knn, gp, forest, xgboost (when built), ensemble: what the table starts with (registry.cpp).
[[nodiscard]] std::vector<SurrogateKind> builtin_surrogate_kinds();

}  // namespace gpuforecast::detail
