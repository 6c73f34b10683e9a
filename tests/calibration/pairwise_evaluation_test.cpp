// The pairs protocol on real data: convolution_milo on the A100, gradient-boosted trees trained
// on 10% of the space, random and neighbour pairs among the rest.
#include <catch2/catch.hpp>

#include "calibration/candidate_pairs.hpp"
#include "calibration/pairwise_protocol.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "support/data.hpp"

using namespace gpuforecast;

TEST_CASE("pair evaluation rejects bad input by name") {
  const std::vector<BinProbabilities> p(3, BinProbabilities{0, 0, 0, 1, 0, 0, 0, 0});
  CHECK_THROWS_WITH(evaluate_pairs(p, std::vector<int>{4, 4}), Catch::Matchers::Contains("3 bin distributions"));
  CHECK_THROWS_WITH(evaluate_pairs(p, std::vector<int>{4, 4, 9}), Catch::Matchers::Contains("pair 2"));
  PairEvaluationOptions o;
  o.calibration_fraction = 1;
  CHECK_THROWS_WITH(evaluate_pairs(p, std::vector<int>{4, 4, 4}, o), Catch::Matchers::Contains("calibration fraction"));
  const std::vector<CandidatePair> sample{{0, 1}, {0, 2}, {3, 4}};
  const std::vector<CandidatePair> population{{0, 1}, {0, 2}};
  const std::vector<BinProbabilities> population_p(2, BinProbabilities{0, 0, 0, 1, 0, 0, 0, 0});
  const std::vector<int> bad_bins{4, 0};
  const PairPopulation q{sample, population, population_p, bad_bins};
  CHECK_THROWS_WITH(evaluate_pairs(p, std::vector<int>{4, 4, 4}, {}, &q), Catch::Matchers::Contains("population pair 1"));
  const PairPopulation short_sample{std::span<const CandidatePair>(sample).first(2), population, population_p, bad_bins};
  CHECK_THROWS_WITH(evaluate_pairs(p, std::vector<int>{4, 4, 4}, {}, &short_sample),
                    Catch::Matchers::Contains("2 sample pairs named for 3"));
}

TEST_CASE("a split's rule is judged on the population pairs whose points its calibration did not see") {
  // Sample pairs: a measured parent 0 with children 1 and 2, and (3, 4). The first calibrates.
  const std::vector<CandidatePair> sample{{0, 1}, {0, 2}, {3, 4}};
  const std::vector<CandidatePair> population{{0, 1}, {7, 1}, {0, 2}, {1, 5}, {2, 6}, {3, 4}};
  const std::vector<BinProbabilities> population_p(population.size(), BinProbabilities{0, 0, 0, 1, 0, 0, 0, 0});
  const std::vector<int> population_bins(population.size(), 4);
  const PairPopulation q{sample, population, population_p, population_bins, true};
  // Child 1 was calibrated on: its pairs with any parent go, and so does a pair it is the reference
  // of; parent 0 was a reference only, so its other children stay.
  CHECK(population_apart_from(q, std::vector<std::size_t>{0}) == std::vector<std::size_t>{2, 4, 5});
  CHECK(population_apart_from(q, std::vector<std::size_t>{0, 2}) == std::vector<std::size_t>{2, 4});
  CHECK(population_apart_from(q, std::vector<std::size_t>{}).size() == population.size());
  // Unmeasured references (random and neighbour pairs): a pair touching any calibration point goes.
  const PairPopulation unmeasured{sample, population, population_p, population_bins};
  CHECK(population_apart_from(unmeasured, std::vector<std::size_t>{0}) == std::vector<std::size_t>{4, 5});
  CHECK(population_apart_from(unmeasured, std::vector<std::size_t>{2}) == std::vector<std::size_t>{0, 1, 2, 3, 4});
}

TEST_CASE("pairs protocol on convolution_milo A100: random pairs are answered, the guarantee holds on every kind") {
  const std::vector<std::string> files{test::cache_file("convolution_milo", "A100").string()};
  const Dataset data = Dataset::load(files);
  REQUIRE(data.spaces().size() == 1);
  PairProtocolOptions o;
  o.pairs = 1500;
  const SurrogateFactory make = [](std::uint64_t seed) { return make_surrogate("xgboost", seed); };
  const auto runs = evaluate_pairs_interpolation(data.spaces().front(), "xgboost", make, o, 1);
  REQUIRE(runs.size() == 3);
  CHECK(runs[0].kind == PairKind::random);
  CHECK(runs[1].kind == PairKind::neighbour);
  CHECK(runs[2].kind == PairKind::child);
  for (const auto& r : runs) {
    const auto& e = r.evaluation;
    INFO(to_string(r.kind));
    CHECK(e.pairs >= 1000);  // disjoint pairs: at most one per two held-out points (children: one each)
    CHECK(e.splits == 20);
    CHECK(e.rules.size() == 8);
    CHECK(e.direction_accuracy > e.majority_direction);
    CHECK(e.exact > e.majority_exact);
    CHECK(e.set_coverage >= 0.87);  // 1 - alpha, up to the noise of 750 test pairs
    for (const auto& s : e.rules) {
      INFO(to_string(s.loss) << " " << to_string(s.confidence));
      CHECK(s.violations <= 5);  // delta = 0.1 of 20 splits, with slack for chance
      // Pooled over splits the risk among answered pairs stays near alpha once enough are answered.
      if (s.answered > 0.2) CHECK(s.risk_answered <= 0.1 + 0.02);
    }
  }
  // The ordering of far-apart points is easy: most random pairs are answered under the direction loss.
  CHECK(runs[0].evaluation.rules[0].loss == PairLoss::wrong_direction);
  CHECK(runs[0].evaluation.rules[0].confidence == PairConfidence::direction_probability);
  CHECK(runs[0].evaluation.rules[0].answered > 0.5);
  // A measured parent makes its children easier to order than two unmeasured neighbours.
  CHECK(runs[2].evaluation.direction_accuracy > runs[1].evaluation.direction_accuracy);
  // The same seed gives the same numbers.
  const auto again = evaluate_pairs_interpolation(data.spaces().front(), "xgboost", make, o, 1);
  CHECK(again[1].evaluation.rules[0].answered == runs[1].evaluation.rules[0].answered);
}
