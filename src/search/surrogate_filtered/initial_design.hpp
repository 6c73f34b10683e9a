#pragma once
// The surrogate-filtered search's first measurements. A model that cannot forecast yet gets a
// spread-out random sample (greedy maximin over a larger random pool), so the first measurements
// cover the space rather than clump. A model that forecasts from the start (pre-trained on other
// devices) gets its forecast best configurations that differ pairwise in at least `min_distance`
// parameters (relaxed while too few do), so a prior that is right about what is slow but wrong
// about which region is fastest on the target still puts a measurement into each promising region.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/options_table.hpp"
#include "gpuforecast/core/any_selective_predictor.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

class SearchContext;

struct InitialDesignOptions {
  // Measurements of the initial design, before the first ranked round.
  std::size_t samples = 10;
  // The design is chosen from a random pool of pool_factor times `samples` valid configurations.
  std::size_t pool_factor = 20;
  std::size_t min_distance = 3;
};

[[nodiscard]] const OptionsTable<InitialDesignOptions>& initial_design_options_table();

// At most min(samples, ctx.remaining()) configurations; the pool is drawn with `pool_seed`.
[[nodiscard]] std::vector<Config> choose_initial_design(const SearchContext& ctx, AnySelectivePredictor& model,
                                                        const InitialDesignOptions& options, std::uint64_t pool_seed);

}  // namespace gpuforecast
