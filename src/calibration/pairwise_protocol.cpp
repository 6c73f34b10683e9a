#include "calibration/pairwise_protocol.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>

#include "calibration/stacked_views_surrogate.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {

using Forecaster = std::function<std::vector<Forecast>(std::span<const Candidate>)>;

template <class S>
Forecaster fitted(S model, std::span<const Observation> train) {
  auto m = std::make_shared<S>(std::move(model));
  m->fit(train);
  return [m](std::span<const Candidate> c) { return m->predict(c); };
}

// The surrogate fitted on the training split, or the views stacked by it and corrected by it.
Forecaster fit_forecaster(const SurrogateFactory& make, const PairProtocolOptions& o, std::uint64_t seed,
                          std::span<const Observation> train) {
  if (o.views.empty()) return fitted(make(seed), train);
  return fitted(StackedViewsSurrogate(o.views, make(seed)), train);
}

}  // namespace

std::vector<PairProtocolRun> evaluate_pairs_interpolation(const SpaceData& space, const std::string& surrogate,
                                                          const SurrogateFactory& make, const PairProtocolOptions& o,
                                                          std::uint64_t seed) {
  const EvaluationSplit split = interpolation_split(space, o.train_fraction, seed);
  if (split.test.size() < 2)
    throw invalid_argument_error(fmt::format("{}: fewer than 2 successful held-out observations", space.path));
  const auto t0 = std::chrono::steady_clock::now();
  const Forecaster predict = fit_forecaster(make, o, seed, split.train);
  const double fit_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto candidates = split.test_candidates();
  const auto times = split.test_times();
  const auto forecasts = predict(candidates);
  std::vector<Config> configs;
  configs.reserve(candidates.size());
  for (const auto& c : candidates) configs.push_back(c.config);

  // Child pairs: measured parents (the successful training points) and held-out children.
  std::vector<Candidate> all_candidates;
  std::vector<double> all_times;
  std::vector<Forecast> all_forecasts;
  std::vector<Config> all_configs;
  std::vector<char> measured;
  if (std::find(o.kinds.begin(), o.kinds.end(), PairKind::child) != o.kinds.end()) {
    for (const auto& ob : split.train)
      if (ob.measurement.median_ms > 0) {
        all_candidates.push_back(ob.candidate);
        all_times.push_back(ob.measurement.median_ms);
        measured.push_back(1);
      }
    all_forecasts = predict(all_candidates);
    all_candidates.insert(all_candidates.end(), candidates.begin(), candidates.end());
    all_times.insert(all_times.end(), times.begin(), times.end());
    all_forecasts.insert(all_forecasts.end(), forecasts.begin(), forecasts.end());
    measured.resize(all_candidates.size(), 0);
    for (const auto& c : all_candidates) all_configs.push_back(c.config);
  }

  std::vector<PairProtocolRun> out;
  for (std::size_t k = 0; k < o.kinds.size(); ++k) {
    const bool child = o.kinds[k] == PairKind::child;
    // The population judges each split's rule beside its test half (pairwise_evaluation.hpp).
    // Child pairs: every child pair of the space, each child with each of its measured neighbours;
    // the sample takes each child once. Random and neighbour pairs: a uniform draw of pairs of the
    // kind among the held-out points, shared points allowed, with a seed of its own.
    const auto population =
        child ? all_child_pairs(all_configs, measured, pair_draw_seed(seed, k))
              : sample_pairs(o.kinds[k], configs, o.population_pairs, population_draw_seed(seed, k), false);
    const auto pairs = child ? one_pair_per_child(population, o.pairs)
                             : sample_pairs(o.kinds[k], configs, o.pairs, pair_draw_seed(seed, k), o.disjoint);
    if (pairs.size() < 2)
      throw invalid_argument_error(fmt::format("{}: fewer than 2 {} pairs among its {} held-out points", space.path,
                                               to_string(o.kinds[k]), candidates.size()));
    PairProtocolRun r;
    r.surrogate = surrogate;
    r.target = space_label(space);
    r.kind = o.kinds[k];
    r.seed = seed;
    r.train_count = split.train.size();
    r.test_count = split.test.size();
    r.fit_seconds = fit_seconds;
    // Child pairs index the measured parents and the held-out points together; the others the
    // held-out points alone.
    const auto& f = child ? all_forecasts : forecasts;
    const auto& t = child ? all_times : times;
    const auto population_p = pair_bin_probabilities(f, population);
    const auto population_bins = pair_true_bins(t, population);
    const PairPopulation q{pairs, population, population_p, population_bins, child};
    r.evaluation = evaluate_pairs(pair_bin_probabilities(f, pairs), pair_true_bins(t, pairs), o.evaluation,
                                  population.empty() ? nullptr : &q);
    out.push_back(std::move(r));
  }
  return out;
}

PairProtocolRun mean_pair_run(std::span<const PairProtocolRun> runs) {
  if (runs.empty()) throw invalid_argument_error("mean of no pair runs");
  PairProtocolRun m = runs.front();
  if (runs.size() == 1) return m;
  const auto n = static_cast<double>(runs.size());
  auto& e = m.evaluation;
  auto mean = [&](auto field) {
    double s = 0;
    for (const auto& r : runs) s += r.evaluation.*field;
    e.*field = s / n;
  };
  for (auto f : {&PairEvaluation::exact, &PairEvaluation::within_one, &PairEvaluation::direction_accuracy,
                 &PairEvaluation::brier, &PairEvaluation::crps, &PairEvaluation::ece, &PairEvaluation::majority_exact,
                 &PairEvaluation::majority_direction, &PairEvaluation::exact_at_50, &PairEvaluation::exact_at_80,
                 &PairEvaluation::direction_at_50, &PairEvaluation::direction_at_80, &PairEvaluation::set_coverage,
                 &PairEvaluation::mean_set_size})
    mean(f);
  double fit = 0;
  std::size_t pairs = 0, splits = 0, population_pairs = 0;
  for (const auto& r : runs) {
    fit += r.fit_seconds;
    pairs += r.evaluation.pairs;
    splits += r.evaluation.splits;
    population_pairs += r.evaluation.population_pairs;
  }
  e.population_pairs = population_pairs;
  m.fit_seconds = fit / n;
  e.pairs = pairs;
  e.splits = splits;
  for (std::size_t i = 0; i < e.rules.size(); ++i) {
    auto& s = e.rules[i];
    s.answered = s.risk_answered = s.aurc = s.risk_all = s.population_risk = s.population_answered = 0;
    s.violations = s.population_violations = 0;
    double answered_pairs = 0;
    for (const auto& r : runs) {
      const auto& x = r.evaluation.rules.at(i);
      s.answered += x.answered / n;
      s.aurc += x.aurc / n;
      s.risk_all += x.risk_all / n;
      s.violations += x.violations;
      s.population_violations += x.population_violations;
      s.population_risk += x.population_risk * x.population_answered;
      s.population_answered += x.population_answered;
      s.answered_min = std::min(s.answered_min, x.answered_min);
      s.answered_max = std::max(s.answered_max, x.answered_max);
      // pooled risk: weight each run's risk by its answered share of its pairs
      const double w = x.answered * static_cast<double>(r.evaluation.pairs);
      s.risk_answered += x.risk_answered * w;
      answered_pairs += w;
    }
    s.risk_answered = answered_pairs > 0 ? s.risk_answered / answered_pairs : 0;
    s.population_risk = s.population_answered > 0 ? s.population_risk / s.population_answered : 0;
  }
  return m;
}

}  // namespace gpuforecast
