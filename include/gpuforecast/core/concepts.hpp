#pragma once
// The three concepts of DESIGN.md plus SearchStrategy. Generic code is templated on them so
// users plug in their own types; every implementation static_asserts that it models its concept.
#include <concepts>
#include <span>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/decision.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/core/measurement.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

template <class S>
concept Surrogate = requires(S s, std::span<const Candidate> c, std::span<const Observation> o) {
  { s.predict(c) } -> std::same_as<std::vector<Forecast>>;
  s.update(o);  // learn from new measurements
};

template <class P>
concept SelectivePredictor = requires(P p, std::span<const Candidate> c) {
  { p.decide(c) } -> std::same_as<std::vector<Decision>>;
};

template <class B>
concept Benchmarker = requires(B b, std::span<const Candidate> c) {
  { b.measure(c) } -> std::same_as<std::vector<Measurement>>;
};

class SearchContext;  // search/search_context.hpp: space, budget, evaluator, trace

// A strategy proposes and measures candidates through a SearchContext until the budget ends.
template <class T>
concept SearchStrategy = requires(T t, SearchContext& ctx) {
  t.run(ctx);
};

}  // namespace gpuforecast
