// The anomaly tests against series whose answer is known: exchangeable draws (the false-flag
// rate held), a step (found, and soon), repeats that are flat, split in two or drifting.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "gpuforecast/stats/anomaly_tests.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

TEST_CASE("the slow-outlier p-value holds its level on exchangeable ratios and finds a far one") {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0, 0.2);
  SlowOutlierTest test(0.01);
  std::size_t flagged = 0;
  const std::size_t n = 20000;
  for (std::size_t i = 0; i < n; ++i) flagged += test.flags(test.p_value_then_learn(noise(rng)));
  // Conformal: P(p <= 0.01) <= 0.01; three binomial standard deviations of slack.
  CHECK(static_cast<double>(flagged) <= 0.01 * n + 3 * std::sqrt(0.01 * 0.99 * n));
  CHECK(test.history() == n);
  // A ratio above all earlier ones: p = 1 / (n + 1).
  CHECK(test.p_value_then_learn(5.0) == Approx(1.0 / (n + 1)));
  CHECK(SlowOutlierTest(0.01).p_value_then_learn(3.0) == 1.0);  // no history: nothing to compare
  CHECK_THROWS_WITH(SlowOutlierTest(1.5), Contains("outlier level"));
  CHECK_THROWS_WITH(test.p_value_then_learn(std::nan("")), Contains("log ratio"));
}

TEST_CASE("the step-drift CUSUM stays quiet on a stationary series and finds a step within a few points") {
  std::mt19937_64 rng(2);
  std::normal_distribution<double> noise(0, 0.1);
  // k 0.5, h 8: one alarm in 19,000 with a known centre and spread; estimated from 30 ratios,
  // 4 in these 5,000.
  StepDrift drift;
  std::size_t alarms = 0;
  for (int i = 0; i < 5000; ++i) alarms += drift.observe(noise(rng));
  CHECK(alarms <= 10);
  // A step of 3 standard deviations: S grows by about 2.5 a point, crossing 8 in 3-5 points.
  std::size_t delay = 0;
  for (int i = 1; i <= 50; ++i)
    if (drift.observe(0.3 + noise(rng))) {
      delay = static_cast<std::size_t>(i);
      break;
    }
  CHECK(delay >= 1);
  CHECK(delay <= 8);
  StepDriftOptions bad;
  bad.reference = 2;
  CHECK_THROWS_WITH(StepDrift(bad), Contains("reference window"));
}

TEST_CASE("repeat_anomaly: flat repeats pass, a split and a drift are named, bad repeats are refused") {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.005);
  std::vector<double> flat, split, ramp;
  for (int i = 0; i < 32; ++i) {
    flat.push_back(1.0 * std::exp(noise(rng)));
    split.push_back((i >= 16 ? 1.3 : 1.0) * std::exp(noise(rng)));
    ramp.push_back((1.0 + 0.5 * i / 31.0) * std::exp(noise(rng)));
  }
  CHECK_FALSE(repeat_anomaly(flat).has_value());
  const auto s = repeat_anomaly(split);
  REQUIRE(s.has_value());
  CHECK(s->kind == "bimodal");
  CHECK(s->statistic == Approx(std::log(1.3)).margin(0.03));
  CHECK_THAT(s->detail, Contains("16 of 32 repeats"));
  // A drift of 50% in one measurement: the gap test sees no split, the trend test does.
  const auto r = repeat_anomaly(ramp);
  REQUIRE(r.has_value());
  CHECK(r->kind == "trend");
  CHECK(r->p_value < 1e-6);
  CHECK_THAT(r->detail, Contains("slow down"));
  // Trends of 2%, and even 20%, are significant, and real repeats do them (boost clocks settling;
  // pnpoly's repeats on the RTX 2080 Ti climb by a fifth in many clean measurements): the
  // default size condition (28%, chosen on convolution, gemm and pnpoly) lets them pass.
  for (const double size : {0.02, 0.2}) {
    std::vector<double> small;
    for (int i = 0; i < 32; ++i) small.push_back(1.0 + size * i / 31.0);
    CHECK_FALSE(repeat_anomaly(small).has_value());
  }
  CHECK_FALSE(repeat_anomaly(std::vector<double>{1, 2, 1}).has_value());  // too few to test
  flat[5] = -1;
  CHECK_THROWS_WITH(repeat_anomaly(flat), Contains("repeat 5 of 32"));
}

TEST_CASE("the slow-device p-value holds its level on a steady sentinel and finds a device 30% slower") {
  std::mt19937_64 rng(4);
  std::lognormal_distribution<double> noise(std::log(0.01), 0.03);  // a 10 us sentinel, 3% jitter
  const auto repeats = [&](std::size_t n, double factor) {
    std::vector<double> r(n);
    for (auto& x : r) x = factor * noise(rng);
    return r;
  };
  SlowDeviceTest test(0.005);
  CHECK(test.p_value(repeats(20, 1.0)) == 1.0);  // nothing learned: nothing to compare
  test.learn(repeats(200, 1.0));                 // the benchmarker's warm-up
  std::size_t flagged = 0;
  const std::size_t n = 2000;
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = repeats(20, 1.0);
    const bool flag = test.flags(test.p_value(r));
    flagged += flag;
    if (!flag) test.learn(r);
  }
  // The smallest of 20 exchangeable repeats is conservative: P(p <= level) <= level, with
  // three binomial standard deviations of slack.
  CHECK(static_cast<double>(flagged) <= 0.005 * n + 3 * std::sqrt(0.005 * 0.995 * n));
  // 30% slower: its fastest repeat beats every repeat of a steady device.
  const auto slow = repeats(20, 1.3);
  CHECK(test.flags(test.p_value(slow)));
  CHECK(test.p_value(slow) == Approx(1.0 / (static_cast<double>(test.history()) + 1)));
  CHECK_THROWS_WITH(test.p_value(std::vector<double>{}), Contains("without repeats"));
  CHECK_THROWS_WITH(test.learn(std::vector<double>{0.01, -1.0}), Contains("sentinel repeat 1"));
  CHECK_THROWS_WITH(SlowDeviceTest(0), Contains("slow-device level"));
  test.reset();
  CHECK(test.history() == 0);
}

TEST_CASE("one outlier never alarms the step-drift CUSUM alone; the same value three times does") {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0, 0.01);
  StepDrift drift;
  for (int i = 0; i < 60; ++i) CHECK_FALSE(drift.observe(noise(rng)));
  CHECK_FALSE(drift.observe(1.0));  // a hundred MADs above: adds at most max_increment - k = 3.5
  for (int i = 0; i < 5; ++i) CHECK_FALSE(drift.observe(noise(rng)));
  CHECK_FALSE(drift.observe(1.0));
  CHECK_FALSE(drift.observe(1.0));
  CHECK(drift.observe(1.0));  // 3 x 3.5 > h = 8
  drift.reset();
  CHECK(drift.statistic() == 0);
  for (int i = 0; i < 49; ++i) CHECK_FALSE(drift.observe(1.0 + noise(rng)));  // reference + lag to come again
  StepDriftOptions bad;
  bad.max_increment = 0.4;
  CHECK_THROWS_WITH(StepDrift(bad), Contains("max_increment"));
}
