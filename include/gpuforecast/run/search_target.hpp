#pragma once
// What a search of one kernel is given: the configurations it may propose and the prototype
// candidate (kernel, device, problem size, spec) each proposal is made from. It is built here,
// once, from recorded measurements or from a T1 file, for every back end.
#include <memory>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/device.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/data/t1.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

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
