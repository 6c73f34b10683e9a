// forecast(): the application-facing calls, each one Model::decide (compose/model.cpp).
#include "gpuforecast/forecast.hpp"

namespace gpuforecast {

// Every forecast() is Model::decide, so the reference's check is made on every path.
std::vector<Decision> forecast(const Model& model, std::span<const Candidate> candidates) {
  return model.decide(candidates);
}

std::vector<Decision> forecast(const Model& model, std::span<const Candidate> candidates, const TuningSpace& space) {
  return model.decide(candidates, &space);
}

Decision forecast(const Model& model, const Candidate& candidate) {
  return model.decide(std::span<const Candidate>(&candidate, 1)).front();
}

Decision forecast(const Model& model, const Candidate& candidate, double reference_ms) {
  return model.decide(std::span<const Candidate>(&candidate, 1), nullptr, reference_ms).front();
}

}  // namespace gpuforecast
