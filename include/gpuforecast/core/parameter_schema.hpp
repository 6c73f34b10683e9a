#pragma once
// What a model knows of a kernel's parameters, and the check of a configuration against it.
//
// A surrogate encodes a configuration by parameter name, so a configuration that lacks a
// parameter, or spells one differently, still gets a forecast: of a different configuration.
// The check refuses those, names the row, the parameter and what was expected, and lets a
// plausible value that training never saw pass, flagged as extrapolation.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/config.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct ParameterSchema {
  std::string name;
  std::vector<Value> values;  // every value seen in training, ascending, unique
};

struct KernelSchema {
  std::string kernel;
  std::vector<ParameterSchema> parameters;  // in the order of the training data

  // One schema per kernel of the observations. A kernel whose observations disagree on the
  // parameter names gets none (its configurations are then not checked by name).
  [[nodiscard]] static std::vector<KernelSchema> of(std::span<const Observation> observations);
};

// Throws invalid_configuration_error when `config` cannot be a configuration of the kernel:
//   empty; a parameter missing, unknown (with the closest known name) or given twice;
//   a string where training saw numbers or the other way round; a fraction where it saw
//   integers; NaN or infinite; negative where every value seen is >= 0.
// Returns what is extrapolated, "" when every value was seen in training, otherwise e.g.
// "never seen in training: block_size_x=2048 (seen 16..128)". `row` numbers the error.
[[nodiscard]] std::string check_configuration(const KernelSchema& schema, const Config& config, std::size_t row);

}  // namespace gpuforecast
