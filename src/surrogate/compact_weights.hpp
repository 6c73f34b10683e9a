#pragma once
// The compact surrogate's row weights (CompactOptions: fast_weight, fast_scale, fast_min_group,
// group_balance, max_group_weight). Not installed.
#include <cstddef>
#include <vector>

#include "surrogate/compact.hpp"
#include "tabular.hpp"

namespace gpuforecast::detail {

// One weight per row of `rows` (failed rows and rows not in `ok` weigh 1): the group balance times
// 1 + fast_weight * exp(-u / fast_scale), u = the row's rank fraction inside its group (0: fastest).
[[nodiscard]] std::vector<float> compact_row_weights(const TrainingRows& rows, const std::vector<std::size_t>& ok,
                                                     const CompactOptions& options);

}  // namespace gpuforecast::detail
