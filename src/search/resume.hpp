#pragma once
// Continuing a search from the cache its killed (or finished) run left behind, as Kernel Tuner
// does: the configurations found in the cache are served from it without measuring again
// (runtime/resumed_benchmarker.hpp), and still count as measurements of the run. A deterministic strategy with the same seed then asks
// for the same configurations in the same order, so it goes on exactly where it stopped.
#include <string>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Reads the cache of an earlier run of this search (torn last line dropped with a warning).
// Throws input_error naming the file and the field when it belongs to another kernel, device,
// problem size or space (parameter names, order or values).
[[nodiscard]] CacheFile read_search_cache(const std::string& path, const TuningSpace& space, const Candidate& prototype);

}  // namespace gpuforecast
