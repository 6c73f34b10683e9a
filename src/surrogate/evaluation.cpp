#include "gpuforecast/surrogate/evaluation.hpp"

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

// Seeded choice of `count` observation indices of a space, the rest as the test set (ok only).
std::pair<std::vector<Observation>, std::vector<Observation>> split(const SpaceData& space, std::size_t count,
                                                                    std::uint64_t seed) {
  std::vector<std::size_t> idx(space.observations.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(idx.begin(), idx.end(), rng);
  count = std::min(count, idx.size());
  std::vector<Observation> train, test;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    const auto& o = space.observations[idx[i]];
    if (i < count)
      train.push_back(o);
    else if (o.measurement.ok())
      test.push_back(o);
  }
  return {std::move(train), std::move(test)};
}

void score(EvaluationRun& run, const SurrogateFactory& make, const std::vector<Observation>& train,
           const std::vector<Observation>& test) {
  if (test.size() < 2) throw invalid_argument_error(fmt::format("{}: fewer than 2 successful test observations", run.target));
  AnySurrogate model = make(run.seed);
  auto t0 = Clock::now();
  model.fit(train);
  run.fit_seconds = seconds_since(t0);
  std::vector<Candidate> candidates;
  std::vector<double> truth;
  candidates.reserve(test.size());
  for (const auto& o : test) {
    candidates.push_back(o.candidate);
    truth.push_back(o.measurement.median_ms);
  }
  t0 = Clock::now();
  const auto forecasts = model.predict(candidates);
  run.predict_seconds = seconds_since(t0);
  run.train_count = train.size();
  run.test_count = test.size();
  run.scores = score_forecasts(forecasts, truth, run.seed);
}
}  // namespace

std::string space_label(const SpaceData& space) {
  return space.kernel + "@" + (space.device ? space.device->name : std::string("?"));
}

EvaluationRun evaluate_interpolation(const SpaceData& space, const std::string& surrogate, const SurrogateFactory& make,
                                     double train_fraction, std::uint64_t seed) {
  if (!(train_fraction > 0 && train_fraction < 1))
    throw invalid_argument_error(fmt::format("train fraction {} is outside (0, 1)", train_fraction));
  EvaluationRun run;
  run.protocol = "interpolate";
  run.surrogate = surrogate;
  run.target = space_label(space);
  run.seed = seed;
  run.train_fraction = train_fraction;
  const auto n = static_cast<std::size_t>(std::llround(train_fraction * static_cast<double>(space.observations.size())));
  auto [train, test] = split(space, std::max<std::size_t>(n, 2), seed);
  score(run, make, train, test);
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
  auto [train, test] = split(target, target_samples, seed);
  for (const SpaceData* s : train_spaces) {
    if (s == &target) continue;
    train.insert(train.end(), s->observations.begin(), s->observations.end());
  }
  if (train.empty()) throw invalid_argument_error(fmt::format("{}: nothing to train on", run.target));
  score(run, make, train, test);
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
