#pragma once
// Candidate + Measurement: the unit of training data.
#include <string>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/measurement.hpp"

namespace gpuforecast {

struct Observation {
  Candidate candidate;
  Measurement measurement;
  std::string source;  // file it was read from, or "live"
};

}  // namespace gpuforecast
