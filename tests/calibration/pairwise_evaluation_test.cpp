// The pairs protocol on real data: convolution_milo on the A100, gradient-boosted trees trained
// on 10% of the space, random and neighbour pairs among the rest.
#include <catch2/catch.hpp>

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
