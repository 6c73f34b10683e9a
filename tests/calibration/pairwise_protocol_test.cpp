// The mean of pair runs over seeds: metrics averaged, violations summed, extremes kept, and the
// risks among answered pairs pooled by what each run answered, on the test half as on the population.
#include <catch2/catch.hpp>

#include <vector>

#include "calibration/pairwise_protocol.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;

namespace {

PairProtocolRun run(double answered, std::size_t pairs, double risk, double population_answered,
                    double population_risk, std::size_t violations) {
  PairProtocolRun r;
  r.surrogate = "default";
  r.target = "convolution_milo@RTX A4000";
  r.kind = PairKind::child;
  r.evaluation.pairs = pairs;
  r.evaluation.splits = 20;
  r.evaluation.direction_accuracy = answered;  // any mean metric
  r.evaluation.population_pairs = 1000;
  PairRuleSummary s;
  s.answered = s.answered_min = s.answered_max = answered;
  s.risk_answered = risk;
  s.violations = s.population_violations = violations;
  s.population_answered = population_answered;
  s.population_risk = population_risk;
  r.evaluation.rules = {s};
  return r;
}

}  // namespace

TEST_CASE("the mean of pair runs pools each risk by the pairs its run answered") {
  // One run answers 10 times as many pairs as the other: its risk weighs 10 times as much.
  const std::vector<PairProtocolRun> runs{run(0.5, 2000, 0.08, 10000, 0.09, 2),
                                          run(0.05, 2000, 0.2, 1000, 0.2, 1)};
  const PairProtocolRun m = mean_pair_run(runs);
  const PairRuleSummary& s = m.evaluation.rules.at(0);
  CHECK(s.answered == Approx(0.275));
  CHECK(s.answered_min == Approx(0.05));
  CHECK(s.answered_max == Approx(0.5));
  CHECK(s.violations == 3);
  CHECK(s.population_violations == 3);
  CHECK(s.risk_answered == Approx((0.08 * 1000 + 0.2 * 100) / 1100.0));
  CHECK(s.population_answered == Approx(11000));
  CHECK(s.population_risk == Approx((0.09 * 10000 + 0.2 * 1000) / 11000.0));
  CHECK(m.evaluation.direction_accuracy == Approx(0.275));
  CHECK(m.evaluation.pairs == 4000);
  CHECK(m.evaluation.splits == 40);
  CHECK(m.evaluation.population_pairs == 2000);

  // A run that answered nothing adds no weight; runs that answered nothing anywhere have risk 0.
  const std::vector<PairProtocolRun> silent{run(0, 2000, 0, 0, 0, 0), run(0, 2000, 0, 0, 0, 0)};
  CHECK(mean_pair_run(silent).evaluation.rules.at(0).population_risk == 0);
  CHECK_THROWS_AS(mean_pair_run({}), invalid_argument_error);
}
