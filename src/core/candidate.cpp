#include "gpuforecast/core/candidate.hpp"

#include <fmt/core.h>

namespace gpuforecast {

std::string Candidate::describe() const {
  return fmt::format("{} @ {} [{}]", kernel.empty() ? "<kernel>" : kernel,
                     device ? device->name : "<no device>", config.to_string());
}

}  // namespace gpuforecast
