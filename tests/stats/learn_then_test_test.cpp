// Learn-then-Test deferral and the binomial tail against hand-computed cases.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "calibration/deferral.hpp"
#include "stats/learn_then_test.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

TEST_CASE("binomial tail and upper bound") {
  CHECK(binomial_cdf(1, 3, 0.5) == Approx(0.5));
  CHECK(binomial_cdf(0, 10, 0.1) == Approx(std::pow(0.9, 10)));
  CHECK(binomial_cdf(10, 10, 0.3) == 1.0);
  CHECK(binomial_cdf(2, 5, 0.2) == Approx(0.94208));
  CHECK(binomial_upper_bound(0, 10, 0.1) == Approx(1 - std::pow(0.1, 0.1)).epsilon(1e-6));
  CHECK(binomial_upper_bound(3, 3, 0.1) == 1.0);
  // large n stays finite and accurate: P(Bin(10000, 0.1) <= 1000) is about one half
  CHECK(binomial_cdf(1000, 10000, 0.1) == Approx(0.5133).margin(0.01));
}

TEST_CASE("Learn-then-Test walks from the most confident threshold and keeps the last certified one") {
  // 100 points, confidence 100..1; the 50 most confident are right, the rest wrong.
  std::vector<double> conf, loss;
  for (int i = 0; i < 100; ++i) {
    conf.push_back(100 - i);
    loss.push_back(i < 50 ? 0.0 : 1.0);
  }
  LttOptions o;
  o.alpha = 0.1;
  o.delta = 0.1;
  o.max_thresholds = 1000;  // every distinct threshold
  const auto r = learn_then_test(conf, loss, o);
  // The sequence starts at 22 accepted ((0.9)^22 <= 0.1 < 0.9^21). Accepting 52 (2 wrong) has
  // p = P(Bin(52, 0.1) <= 2) = 0.0966 <= 0.1; accepting 53 (3 wrong) has p = 0.2105: stop.
  REQUIRE(r.any_valid);
  CHECK(r.steps.front().accepted == 22);
  CHECK(r.accepted == 52);
  CHECK(r.threshold == 49);
  CHECK(r.coverage == Approx(0.52));
  CHECK(r.empirical_risk == Approx(2.0 / 52));
  CHECK(r.steps.back().accepted == 53);
  CHECK_FALSE(r.steps.back().rejected);
  CHECK(r.steps.back().p_value == Approx(0.2105317).epsilon(1e-4));
  CHECK(r.risk_upper_bound <= 0.1 + 1e-9);
}

TEST_CASE("Learn-then-Test defers everything when nothing can be certified") {
  std::vector<double> conf(10), loss(10, 0.0);
  for (int i = 0; i < 10; ++i) conf[static_cast<std::size_t>(i)] = i;
  const auto r = learn_then_test(conf, loss, {});  // 10 < 22 points: no threshold testable
  CHECK_FALSE(r.any_valid);
  CHECK(r.accepted == 0);
  CHECK(r.coverage == 0);
  CHECK(std::isinf(r.threshold));
}

TEST_CASE("Learn-then-Test rejects bad input") {
  const std::vector<double> c{1, 2}, l{0, 1};
  LttOptions o;
  o.alpha = 0;
  CHECK_THROWS_WITH(learn_then_test(c, l, o), Contains("alpha must lie strictly between 0 and 1"));
  o.alpha = 0.1;
  o.delta = 1.0;
  CHECK_THROWS_WITH(learn_then_test(c, l, o), Contains("delta"));
  CHECK_THROWS_WITH(learn_then_test({}, {}, {}), Contains("non-empty"));
  CHECK_THROWS_WITH(learn_then_test(std::vector<double>{1, std::nan("")}, l, {}), Contains("confidence score 1 of 2 is NaN"));
  CHECK_THROWS_WITH(learn_then_test(c, std::vector<double>{0, 0.5}, {}), Contains("0/1 losses"));
  CHECK_THROWS_WITH(learn_then_test(c, std::vector<double>{0}, {}), Contains("one loss per confidence"));
}

TEST_CASE("Learn-then-Test holds its (alpha, delta) guarantee on synthetic data") {
  // Loss probability rises as confidence falls; the population risk among accepted points
  // with confidence >= c is computable, so each run's true risk is known exactly.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  int violations = 0;
  const int runs = 300;
  for (int run = 0; run < runs; ++run) {
    std::vector<double> conf, loss;
    for (int i = 0; i < 500; ++i) {
      const double c = u(rng);
      conf.push_back(c);
      loss.push_back(u(rng) < 0.3 * (1 - c) ? 1.0 : 0.0);  // P(loss | c) = 0.3 (1 - c)
    }
    const auto r = learn_then_test(conf, loss, {});
    if (!r.any_valid) continue;
    // risk among c >= lambda: E[0.3 (1 - c) | c >= lambda] = 0.15 (1 - lambda)
    if (0.15 * (1 - r.threshold) > 0.1) ++violations;
  }
  CHECK(violations <= runs * 0.1 + 10);
}

TEST_CASE("losses and confidence scores") {
  Forecast f;
  f.median_ms = 1.05;
  f.spread = 0.2;
  CHECK(relative_error_loss(f, 1.0) == 0.0);
  f.median_ms = 1.2;
  CHECK(relative_error_loss(f, 1.0) == 1.0);
  CHECK(relative_error_loss(f, 1.0, 0.25) == 0.0);
  CHECK_THROWS_AS(wrong_bin_loss(f, 1.0, 1.0), invalid_argument_error);
  CHECK(confidence_score(ConfidenceScore::interval_width, f, Interval{1.0, std::exp(0.5)}) == Approx(-0.5));
  CHECK(confidence_score(ConfidenceScore::ensemble_spread, f, Interval{}) == Approx(-0.2));
  CHECK(std::isinf(confidence_score(ConfidenceScore::interval_width, f, Interval{0.0, 2.0})));
}

TEST_CASE("speedup-bin probabilities from a calibrated interval") {
  Forecast f;
  f.median_ms = 1.0;
  // Reference equal to the median: half the mass is a speedup >= 1 (bins 4..8).
  auto p = bin_probabilities(f, Interval{0.5, 2.0}, 0.1, 1.0);
  double sum = 0, fast = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    sum += p[i];
    if (i >= 3) fast += p[i];
  }
  CHECK(sum == Approx(1.0));
  CHECK(fast == Approx(0.5));
  // A narrow interval around a speedup of 2^0.25 (2 log2 = 0.5): bin 4 takes almost everything.
  p = bin_probabilities(f, Interval{0.99, 1.01}, 0.1, std::pow(2.0, 0.25));
  CHECK(p[3] > 0.999);
  f.bin_probabilities = p;
  CHECK(confidence_score(ConfidenceScore::top_bin_probability, f, Interval{}) == Approx(p[3]));
  CHECK(wrong_bin_loss(f, 1.0, std::pow(2.0, 0.25)) == 0.0);
  CHECK(wrong_bin_loss(f, 0.5, std::pow(2.0, 0.25)) == 1.0);  // true speedup 2.38: bin 6
}

TEST_CASE("Learn-then-Test can start its sequence at a fraction of the calibration set") {
  // The 10 most confident points hold 3 losses, the next 190 none: from the top the sequence
  // stops at once; started at 20% it certifies the 200 and walks on.
  std::vector<double> conf, loss;
  for (int i = 0; i < 1000; ++i) {
    conf.push_back(1000 - i);
    loss.push_back((i < 10 && i % 3 == 0) || (i >= 200 && i % 2 == 0) ? 1.0 : 0.0);
  }
  LttOptions o;
  const auto from_top = learn_then_test(conf, loss, o);
  o.start_fraction = 0.2;
  const auto later = learn_then_test(conf, loss, o);
  CHECK(later.accepted >= 200);
  CHECK(later.accepted > from_top.accepted);
  CHECK(later.steps.front().accepted >= 200);
  o.start_fraction = 1.0;
  CHECK_THROWS_AS(learn_then_test(conf, loss, o), invalid_argument_error);
}
