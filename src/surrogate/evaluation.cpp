#include "surrogate/evaluation.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>

#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

std::string space_label(const SpaceData& space) {
  return space.kernel + "@" + (space.device ? space.device->name : std::string("?"));
}

std::vector<Candidate> EvaluationSplit::test_candidates() const {
  std::vector<Candidate> c;
  c.reserve(test.size());
  for (const auto& o : test) c.push_back(o.candidate);
  return c;
}

std::vector<double> EvaluationSplit::test_times() const {
  std::vector<double> t;
  t.reserve(test.size());
  for (const auto& o : test) t.push_back(o.measurement.median_ms);
  return t;
}

namespace {
// Seeded choice of `count` observations of a space for training; the ok rest tests.
EvaluationSplit split(const SpaceData& space, std::size_t count, std::uint64_t seed) {
  std::vector<std::size_t> idx(space.observations.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(idx.begin(), idx.end(), rng);
  count = std::min(count, idx.size());
  EvaluationSplit s;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    const auto& o = space.observations[idx[i]];
    if (i < count)
      s.train.push_back(o);
    else if (o.measurement.ok())
      s.test.push_back(o);
  }
  return s;
}
}  // namespace

EvaluationSplit interpolation_split(const SpaceData& space, double train_fraction, std::uint64_t seed) {
  if (!(train_fraction > 0 && train_fraction < 1))
    throw invalid_argument_error(fmt::format("train fraction {} is outside (0, 1)", train_fraction));
  const auto n = static_cast<std::size_t>(std::llround(train_fraction * static_cast<double>(space.observations.size())));
  return split(space, std::max<std::size_t>(n, 2), seed);
}

EvaluationSplit transfer_split(std::span<const SpaceData* const> train, const SpaceData& target,
                               std::size_t target_samples, std::uint64_t seed) {
  EvaluationSplit s = split(target, target_samples, seed);
  for (const SpaceData* t : train) {
    if (t == &target) continue;
    s.train.insert(s.train.end(), t->observations.begin(), t->observations.end());
  }
  return s;
}

void evaluate_split(EvaluationRun& run, const EvaluationSplit& split, const SurrogateFactory& make) {
  if (split.test.size() < 2)
    throw invalid_argument_error(fmt::format("{}: fewer than 2 successful test observations", run.target));
  if (split.train.empty()) throw invalid_argument_error(fmt::format("{}: nothing to train on", run.target));
  AnySurrogate model = make(run.seed);
  auto t0 = Clock::now();
  model.fit(split.train);
  run.fit_seconds = seconds_since(t0);
  const auto candidates = split.test_candidates();
  t0 = Clock::now();
  const auto forecasts = model.predict(candidates);
  run.predict_seconds = seconds_since(t0);
  run.train_count = split.train.size();
  run.test_count = split.test.size();
  run.scores = score_forecasts(forecasts, split.test_times(), run.seed);
}

EvaluationRun evaluate_interpolation(const SpaceData& space, const std::string& surrogate, const SurrogateFactory& make,
                                     double train_fraction, std::uint64_t seed) {
  EvaluationRun run;
  run.protocol = "interpolate";
  run.surrogate = surrogate;
  run.target = space_label(space);
  run.seed = seed;
  run.train_fraction = train_fraction;
  evaluate_split(run, interpolation_split(space, train_fraction, seed), make);
  return run;
}

EvaluationRun evaluate_transfer(std::span<const SpaceData* const> train_spaces, const SpaceData& target,
                                std::size_t target_samples, const std::string& surrogate, const SurrogateFactory& make,
                                std::uint64_t seed, const std::string& protocol) {
  EvaluationRun run;
  run.protocol = protocol;
  run.surrogate = surrogate;
  run.target = space_label(target);
  run.seed = seed;
  run.target_samples = target_samples;
  evaluate_split(run, transfer_split(train_spaces, target, target_samples, seed), make);
  return run;
}

EvaluationRun mean_run(std::span<const EvaluationRun> runs) {
  if (runs.empty()) throw invalid_argument_error("mean_run: no runs");
  EvaluationRun m = runs.front();
  auto mean = [&](auto field) {
    double s = 0;
    for (const auto& r : runs) s += field(r);
    return s / static_cast<double>(runs.size());
  };
  m.scores.spearman = mean([](const EvaluationRun& r) { return r.scores.spearman; });
  m.scores.kendall = mean([](const EvaluationRun& r) { return r.scores.kendall; });
  m.scores.mape = mean([](const EvaluationRun& r) { return r.scores.mape; });
  m.scores.top1_recall = mean([](const EvaluationRun& r) { return r.scores.top1_recall; });
  m.scores.utility = mean([](const EvaluationRun& r) { return r.scores.utility; });
  m.scores.bins.exact = mean([](const EvaluationRun& r) { return r.scores.bins.exact; });
  m.scores.bins.within_one = mean([](const EvaluationRun& r) { return r.scores.bins.within_one; });
  m.scores.bins.brier = mean([](const EvaluationRun& r) { return r.scores.bins.brier; });
  m.scores.bins.crps = mean([](const EvaluationRun& r) { return r.scores.bins.crps; });
  m.fit_seconds = mean([](const EvaluationRun& r) { return r.fit_seconds; });
  m.predict_seconds = mean([](const EvaluationRun& r) { return r.predict_seconds; });
  std::size_t count = 0;
  for (const auto& r : runs) count += r.scores.count;
  m.scores.count = count;
  return m;
}

}  // namespace gpuforecast
