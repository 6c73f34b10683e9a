// compare(): pairs against a reference with a loaded Model, their conformal bin sets covering
// the true bin on held-out measurements, child pairs against a measured parent, and the same
// input checks as forecast().
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <numeric>

#include "gpuforecast/compare.hpp"
#include "calibration/candidate_pairs.hpp"
#include "calibration/pairwise_selective.hpp"
#include "gpuforecast/core/error.hpp"
#include "support/knn_model.hpp"

using namespace gpuforecast;

namespace {

std::vector<Observation> successful(const std::string& device) {
  return test::successful_observations("convolution_milo", device);
}

const Model& model() { return test::convolution_knn_model(); }

}  // namespace

TEST_CASE("compare's bin sets cover the true bin of held-out pairs at 1 - alpha", "[api][compare][data]") {
  // Calibrate on even rows of A4000 (never trained on), compare on odd rows.
  const auto a4000 = successful("A4000");
  std::vector<Observation> calibration, test_points;
  for (std::size_t i = 0; i < a4000.size(); ++i) (i % 2 ? test_points : calibration).push_back(a4000[i]);
  PairCalibrationOptions o;
  o.kind = PairKind::random;
  o.selective.alpha = 0.1;
  o.seed = 3;
  const PairCalibration selector = calibrate_pairs(model(), calibration, o);
  CHECK(selector.options().alpha == 0.1);
  CHECK(selector.calibration_pairs() >= 2);
  CHECK(selector.answered_fraction() >= 0);
  CHECK(selector.answered_fraction() <= 1);
  if (selector.answered_fraction() > 0) CHECK(selector.risk_upper_bound() <= 0.1);

  std::vector<Config> configs;
  for (const auto& t : test_points) configs.push_back(t.candidate.config);
  const auto pairs = random_pairs(test_points.size(), 600, 11, /*disjoint=*/true);
  REQUIRE(pairs.size() >= 300);
  std::size_t covered = 0, answered = 0, answered_wrong = 0;
  for (const auto& pair : pairs) {
    const Candidate& reference = test_points[pair.reference].candidate;
    const auto c = compare(model(), selector, reference, std::span(&test_points[pair.candidate].candidate, 1));
    REQUIRE(c.size() == 1);
    const PairDecision& d = c[0].decision;
    CHECK(std::accumulate(d.probabilities.begin(), d.probabilities.end(), 0.0) == Approx(1.0).margin(1e-9));
    CHECK(d.faster == called_faster(d.probabilities));
    const double ms[] = {test_points[pair.reference].measurement.median_ms, test_points[pair.candidate].measurement.median_ms};
    const int bin = pair_true_bins(ms, std::vector<CandidatePair>{{0, 1}}).front();
    covered += d.set.contains(bin);
    if (!d.defer) {
      ++answered;
      answered_wrong += pair_loss(PairLoss::wrong_direction, d.probabilities, bin) > 0;
    }
  }
  INFO("covered " << covered << " of " << pairs.size() << ", answered " << answered << ", wrong " << answered_wrong);
  // 1 - alpha less three binomial standard deviations of 300+ disjoint pairs.
  CHECK(static_cast<double>(covered) / pairs.size() >= 0.9 - 3 * std::sqrt(0.09 / pairs.size()));
  if (answered >= 50) CHECK(static_cast<double>(answered_wrong) / answered <= 0.1 + 3 * std::sqrt(0.09 / answered));
}

TEST_CASE("compare checks the reference and every candidate as forecast() does", "[api][compare][data]") {
  const auto a4000 = successful("A4000");
  const PairCalibration selector = calibrate_pairs(model(), a4000);
  const Candidate reference = a4000[0].candidate;
  std::vector<Candidate> candidates = {a4000[1].candidate, a4000[2].candidate};

  SECTION("a candidate missing a parameter names its row") {
    candidates[1].config = Config::parse("block_size_x=16");
    CHECK_THROWS_AS(compare(model(), selector, reference, candidates), invalid_configuration_error);
    CHECK_THROWS_WITH(compare(model(), selector, reference, candidates), Catch::Matchers::Contains("configuration 1 [block_size_x=16]"));
  }
  SECTION("a misspelt reference is named as the reference") {
    Candidate bad = reference;
    std::string text = bad.config.to_string();
    bad.config = Config::parse(text.replace(text.find("block_size_x"), 12, "blok_size_x"));
    CHECK_THROWS_AS(compare(model(), selector, bad, candidates), invalid_configuration_error);
    CHECK_THROWS_WITH(compare(model(), selector, bad, candidates), Catch::Matchers::Contains("the reference, configuration 0") &&
                             Catch::Matchers::Contains("did you mean block_size_x?"));
  }
  SECTION("a value never trained on is compared and flagged") {
    std::string text = candidates[0].config.to_string();
    const auto at = text.find("block_size_x=") + 13;
    candidates[0].config = Config::parse(text.replace(at, text.find(',', at) - at, "512"));
    const auto c = compare(model(), selector, reference, candidates);
    CHECK(c[0].extrapolation.find("never seen in training: block_size_x=512") != std::string::npos);
    CHECK(c[1].extrapolation.empty());
  }
}

TEST_CASE("calibrate_pairs needs at least two pairs of successful measurements", "[api][compare][data]") {
  const auto a4000 = successful("A4000");
  CHECK_THROWS_AS(calibrate_pairs(model(), std::span(a4000.data(), 2)), invalid_argument_error);
  CHECK_THROWS_WITH(calibrate_pairs(model(), std::span(a4000.data(), 2)), Catch::Matchers::Contains("need at least 2"));
}

TEST_CASE("an empty PairCalibration is refused, not read", "[api][compare][data]") {
  const auto a4000 = successful("A4000");
  const PairCalibration empty;
  CHECK(empty.empty());
  CHECK_THROWS_WITH(empty.threshold(), Catch::Matchers::Contains("calibrate_pairs"));
  CHECK_THROWS_AS(compare(model(), empty, a4000[0].candidate, std::span(&a4000[1].candidate, 1)), invalid_argument_error);
}

TEST_CASE("child pairs: a measured parent's runtime stands in for its forecast, and the rule holds on held-out children",
          "[api][compare][data]") {
  // A new GPU with a tenth of its space measured: a k-NN of that tenth of A4000; the rest, split in
  // two, calibrates (even rows: each point a child of one of its neighbours) and tests (odd rows).
  const auto a4000 = successful("A4000");
  std::vector<Observation> tenth, calibration, test_points;
  for (std::size_t i = 0; i < a4000.size(); ++i)
    (i % 10 == 0 ? tenth : i % 2 ? test_points : calibration).push_back(a4000[i]);
  static const test::TempDir dir;
  KnnSurrogate knn;
  knn.fit(tenth);
  const auto path = (dir.path() / "tenth.gfm").string();
  save_surrogate(path, AnySurrogate(std::move(knn)), TrainingSummary::of(tenth));
  const Model tenth_model = load(path);

  PairCalibrationOptions o;
  o.kind = PairKind::child;
  o.pairs = 1500;
  o.seed = 5;
  const PairCalibration selector = calibrate_pairs(tenth_model, calibration, o);
  CHECK(selector.calibration_pairs() == 1500);  // every calibration point has a neighbour among them
  if (selector.answered_fraction() > 0) CHECK(selector.risk_upper_bound() <= 0.1);

  // Held out: each odd row a child of one of its neighbours among the odd rows, that parent measured.
  std::vector<Config> configs;
  for (const auto& t : test_points) configs.push_back(t.candidate.config);
  const auto pairs = one_pair_per_child(neighbour_pairs(configs, std::numeric_limits<std::size_t>::max(), 17), 600);
  REQUIRE(pairs.size() == 600);
  std::size_t covered = 0, answered = 0, answered_wrong = 0;
  for (const auto& pair : pairs) {
    const Observation& parent = test_points[pair.reference];
    const Observation& child = test_points[pair.candidate];
    const auto c = compare(tenth_model, selector, parent.candidate, parent.measurement.median_ms,
                           std::span(&child.candidate, 1));
    REQUIRE(c.size() == 1);
    const PairDecision& d = c[0].decision;
    const double ms[] = {parent.measurement.median_ms, child.measurement.median_ms};
    const int bin = pair_true_bins(ms, std::vector<CandidatePair>{{0, 1}}).front();
    covered += d.set.contains(bin);
    if (!d.defer) {
      ++answered;
      answered_wrong += pair_loss(PairLoss::wrong_direction, d.probabilities, bin) > 0;
    }
  }
  INFO("answered " << answered << " of " << pairs.size() << " (calibration: " << selector.answered_fraction()
                   << "), wrong " << answered_wrong << ", covered " << covered);
  CHECK(static_cast<double>(covered) / pairs.size() >= 0.9 - 3 * std::sqrt(0.09 / pairs.size()));
  REQUIRE(answered >= 50);
  CHECK(static_cast<double>(answered_wrong) / answered <= 0.1 + 3 * std::sqrt(0.09 / answered));

  // The measured runtime is what the candidate is set against: a parent measured far slower than
  // anything makes every child faster, far faster makes every child slower.
  const Candidate& parent = test_points[0].candidate;
  const auto slow = compare(tenth_model, selector, parent, 1e9, std::span(&test_points[1].candidate, 1));
  const auto fast = compare(tenth_model, selector, parent, 1e-9, std::span(&test_points[1].candidate, 1));
  CHECK(slow[0].decision.faster);
  CHECK(slow[0].decision.predicted_bin == 8);
  CHECK_FALSE(fast[0].decision.faster);
  CHECK(fast[0].decision.predicted_bin == 1);
  // A rule answers the question it was calibrated for.
  CHECK(selector.kind() == PairKind::child);
  CHECK_THROWS_WITH(compare(tenth_model, selector, parent, std::span(&test_points[1].candidate, 1)),
                    Catch::Matchers::Contains("calibrated on child pairs, which answer a reference at its measured runtime"));
  PairCalibrationOptions neighbour = o;
  neighbour.kind = PairKind::neighbour;
  const PairCalibration neighbour_rule = calibrate_pairs(tenth_model, calibration, neighbour);
  CHECK_THROWS_WITH(compare(tenth_model, neighbour_rule, parent, 1.0, std::span(&test_points[1].candidate, 1)),
                    Catch::Matchers::Contains("calibrate_pairs with kind child"));
  for (const double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()})
    CHECK_THROWS_WITH(compare(tenth_model, selector, parent, bad, std::span(&test_points[1].candidate, 1)),
                      Catch::Matchers::Contains("the reference's measured runtime must be finite and positive"));
}
