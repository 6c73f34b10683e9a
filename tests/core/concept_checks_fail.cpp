// Must NOT compile: each wrapper is handed a type that misses a requirement, and the build must
// say which one in words (run by check_concept_messages.cmake, not built as part of the tree).
#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/core/any_selective_predictor.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"

namespace {
struct PredictsOnly {  // no update, fit, kind, save, load
  std::vector<gpuforecast::Forecast> predict(std::span<const gpuforecast::Candidate>) { return {}; }
};
struct DecidesWrongType {
  int decide(std::span<const gpuforecast::Candidate>) { return 0; }
};
struct MeasuresNothing {};
}  // namespace

void wrong_types(gpuforecast::TuningSpace space, gpuforecast::Candidate prototype, gpuforecast::Budget budget) {
  gpuforecast::AnySurrogate surrogate(PredictsOnly{});
  gpuforecast::AnySelectivePredictor model(DecidesWrongType{});
  gpuforecast::SearchContext context(space, prototype, MeasuresNothing{}, budget);
}
