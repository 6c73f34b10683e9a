#pragma once
// Candidate + Measurement: the unit of training data.
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct Observation {
  Candidate candidate;
  Measurement measurement;
  std::string source;  // file it was read from, or "live"
};

// The successful runs of a batch (ok, positive median), split into what a model is asked and
// what was measured: the prequential record an online calibrator learns from.
struct TimedCandidates {
  std::vector<Candidate> candidates;
  std::vector<double> median_ms;  // one per candidate
};
[[nodiscard]] inline TimedCandidates successful_runs(std::span<const Observation> observations) {
  TimedCandidates out;
  for (const auto& o : observations)
    if (o.measurement.ok() && o.measurement.median_ms > 0) {
      out.candidates.push_back(o.candidate);
      out.median_ms.push_back(o.measurement.median_ms);
    }
  return out;
}

}  // namespace gpuforecast
