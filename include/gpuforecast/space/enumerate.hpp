#pragma once
// Walking a TuningSpace: every valid config, seeded samples, neighbourhoods.
#include <cstdint>
#include <functional>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Every config satisfying the constraints, in lexicographic order of value indices (the first
// parameter varies slowest, as Kernel Tuner's cache keys are ordered). Constraints are checked
// as soon as all their parameters are bound, so invalid sub-trees are pruned.
[[nodiscard]] std::vector<Config> enumerate_valid(const TuningSpace& space);

// `count` distinct valid configs drawn uniformly (rejection sampling; falls back to enumeration
// for small spaces). Same seed, same result. Returns fewer if the space has fewer.
[[nodiscard]] std::vector<Config> sample_valid(const TuningSpace& space, std::size_t count, std::uint64_t seed);

// Valid configs that differ from `config` in exactly one parameter, moved to an adjacent value
// in that parameter's list (Kernel Tuner's "adjacent" neighbourhood).
[[nodiscard]] std::vector<Config> adjacent_neighbours(const TuningSpace& space, const Config& config);

// Valid configs that differ in exactly one parameter, to any other value ("Hamming").
[[nodiscard]] std::vector<Config> hamming_neighbours(const TuningSpace& space, const Config& config);

}  // namespace gpuforecast
