#pragma once
// The space a replayed search may propose from: recorded measurements, with the T1 file's
// Conditions, the configurations cached, or every combination (`gpuforecast search --space`).
//
// What a search of one kernel is given: the configurations it may propose and the prototype
// candidate (kernel, device, problem size, spec) each proposal is made from. It is built here,
// once, from recorded measurements or from a T1 file, for every back end.
#include <memory>
#include <string>
#include <string_view>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/device.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

// Which configurations a replayed search may propose (`gpuforecast search --space`).
enum class ReplaySpace {
  automatic,  // t1 when the data has constraints or a T1 file is given or found, else cached
  t1,         // the data's parameters constrained by the T1 file's Conditions (one must exist)
  cached,     // the configurations the file holds with a valid time: Kernel Tuner's tune_cache space
  cartesian,  // every combination of the data's parameter values, unconstrained; those the file
              // lacks are measured as failed, so a strategy is charged for them
};
// "auto", "t1", "cached", "cartesian"; throws invalid_argument_error listing them.
[[nodiscard]] ReplaySpace parse_replay_space(std::string_view name);
[[nodiscard]] std::string_view replay_space_name(ReplaySpace space) noexcept;

// Reads a cache or T4 file for replay and sets its space as `space` says. A T1 file for the
// kernel is looked for where the benchmark_hub layout puts it (<root>/kernels/<kernel>.json
// beside <root>/cachefiles/<kernel>/); `t1_path` overrides the lookup. With a T1 file its
// Conditions are attached, so that strategies draw from the valid configurations only, as
// Kernel Tuner does; without one (a cache from the wild) the default is the cached space, so
// that strategies are not charged for configurations the data never had.
[[nodiscard]] SpaceData load_replay_space(const std::string& path, const std::string& t1_path = {},
                                          ReplaySpace space = ReplaySpace::automatic);
// Which of the above a loaded space is: "cached (N configurations)", "t1 (N constraints)" or
// "cartesian (N configurations)", for reports.
[[nodiscard]] std::string describe_replay_space(const SpaceData& data);

struct SearchTarget {
  TuningSpace space;
  Candidate prototype;
};

// Recorded measurements: their space, kernel, device and problem size, and the kernel spec the
// observations carry.
[[nodiscard]] SearchTarget search_target(const SpaceData& data);

// A kernel to measure live: the T1 file's space (its Conditions as constraints) and kernel, on
// `device` (null: decided later, by the back end). Throws input_error naming the file when the
// kernel source its KernelFile names was not found, since nothing could be compiled.
[[nodiscard]] SearchTarget search_target(const T1File& t1, std::shared_ptr<const Device> device = nullptr);

}  // namespace gpuforecast
