#pragma once
// The three concepts of DESIGN.md plus SearchStrategy and AsyncBenchmarker, and their readable
// checks. Generic code is templated on them so users plug in their own types; every
// implementation static_asserts that it models its concept.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
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

// Readable checks of a user's type against the concepts above (as ensmallen's
// static_checks.hpp): one static_assert per requirement, so that a wrong type is told which
// member it lacks instead of receiving the compiler's "constraints not satisfied" dump. The
// type-erasing wrappers (AnySurrogate, AnySelectivePredictor, SearchContext) call them; a user can too:
//   static_assert(gpuforecast::check_surrogate<MySurrogate>());
// A requirement whose member is missing gets only the "needs" message, not the return-type one.
template <class S>
constexpr bool check_surrogate() {
  constexpr bool has_predict = requires(S s, std::span<const Candidate> c) { s.predict(c); };
  static_assert(has_predict, "Surrogate: the type needs a member predict(std::span<const Candidate>)");
  static_assert(!has_predict || requires(S s, std::span<const Candidate> c) {
    { s.predict(c) } -> std::same_as<std::vector<Forecast>>;
  }, "Surrogate: predict(std::span<const Candidate>) must return std::vector<Forecast>, one per candidate");
  static_assert(requires(S s, std::span<const Observation> o) { s.update(o); },
                "Surrogate: the type needs a member update(std::span<const Observation>) to learn from new "
                "measurements (it may do nothing)");
  return Surrogate<S>;
}

template <class P>
constexpr bool check_selective_predictor() {
  constexpr bool has_decide = requires(P p, std::span<const Candidate> c) { p.decide(c); };
  static_assert(has_decide, "SelectivePredictor: the type needs a member decide(std::span<const Candidate>)");
  static_assert(!has_decide || requires(P p, std::span<const Candidate> c) {
    { p.decide(c) } -> std::same_as<std::vector<Decision>>;
  }, "SelectivePredictor: decide(std::span<const Candidate>) must return std::vector<Decision>, one per candidate");
  return SelectivePredictor<P>;
}

template <class B>
constexpr bool check_benchmarker() {
  constexpr bool has_measure = requires(B b, std::span<const Candidate> c) { b.measure(c); };
  static_assert(has_measure, "Benchmarker: the type needs a member measure(std::span<const Candidate>)");
  static_assert(!has_measure || requires(B b, std::span<const Candidate> c) {
    { b.measure(c) } -> std::same_as<std::vector<Measurement>>;
  }, "Benchmarker: measure(std::span<const Candidate>) must return std::vector<Measurement>, one per candidate");
  static_assert(std::move_constructible<B>, "Benchmarker: the type must be movable (the search keeps it inside)");
  return Benchmarker<B>;
}

template <class T>
constexpr bool check_search_strategy() {
  static_assert(requires(T t, SearchContext& ctx) { t.run(ctx); },
                "SearchStrategy: the type needs a member run(SearchContext&) that proposes and measures "
                "candidates until the budget ends");
  return SearchStrategy<T>;
}

// An AsyncBenchmarker measures several candidates at once and hands results back as they finish
// (a farm of worker ranks, a simulated farm on a virtual clock). A SearchContext built on one
// lets a strategy choose the next candidate while others are still running (search_context.hpp:
// free_workers(), submit(), wait_any()). A plain Benchmarker is one worker: the context adapts it.
//
// One finished measurement: the ticket submit() gave, and its result.
struct Landed {
  std::uint64_t ticket = 0;
  Measurement measurement;
};

// What became of the candidate a lost worker was measuring: none was held, it went back to be
// measured by another worker, or it failed (lost on as many workers as it may be tried on).
enum class HeldWork { none, requeued, failed };
// "requeued", "failed", "" for none (the event log's `went`).
[[nodiscard]] constexpr std::string_view to_string(HeldWork w) noexcept {
  return w == HeldWork::requeued ? "requeued" : w == HeldWork::failed ? "failed" : "";
}

// workers(): measurements that can run at once now (it may shrink as workers are lost; 0: none
//            left, and submitted candidates come back failed with the reason).
// submit(c): starts measuring c, or queues it when every worker is busy; returns its ticket.
// wait_any(): blocks until at least one submitted candidate has finished and returns those that
//            have, each exactly once; empty only when nothing is outstanding.
template <class B>
concept AsyncBenchmarker = requires(B b, const Candidate& c) {
  { b.workers() } -> std::convertible_to<std::size_t>;
  { b.submit(c) } -> std::same_as<std::uint64_t>;
  { b.wait_any() } -> std::same_as<std::vector<Landed>>;
};

}  // namespace gpuforecast
