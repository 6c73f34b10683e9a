// The anomaly tests against series whose answer is known: exchangeable draws (the false-flag
// rate held), a step (found, and soon), repeats that are flat, split in two or drifting.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "stats/anomaly_tests.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

// `n` rises of a noisy kernel (a fifth of the runtime, pnpoly-like: large, but usual), each judged
// by the test, shown to `judged` with its p-value, then learned as the test flags it.
template <class Judged>
void judge_usual_rises(RepeatRiseTest& test, std::uint64_t seed, std::size_t n, Judged judged) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> usual(0.1, 0.05);
  for (std::size_t i = 0; i < n; ++i) {
    const double rise = usual(rng);
    const double p = test.p_value(rise);
    judged(rise, p);
    test.learn(rise, test.flags(rise, p));
  }
}

}  // namespace

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

TEST_CASE("repeat_rise: flat repeats barely rise, a split and a climb do, warm-up counts against, bad repeats are refused") {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.005);
  std::vector<double> flat, split, ramp, warm;
  for (int i = 0; i < 32; ++i) {
    flat.push_back(1.0 * std::exp(noise(rng)));
    split.push_back((i >= 16 ? 1.3 : 1.0) * std::exp(noise(rng)));
    ramp.push_back((1.0 + 0.5 * i / 31.0) * std::exp(noise(rng)));
    warm.push_back((i < 4 ? 2.0 : 1.0) * std::exp(noise(rng)));
  }
  CHECK(std::abs(repeat_rise(flat)) < 0.01);
  CHECK(repeat_rise(split) == Approx(std::log(1.3)).margin(0.01));
  CHECK(repeat_rise(ramp) > 0.15);  // a climb of 50%: the medians of its halves lie ~25% apart
  CHECK(repeat_rise(warm) < 0.01);  // slow first repeats are no rise
  CHECK(std::isnan(repeat_rise(std::vector<double>{1, 2, 1})));  // too few to tell
  flat[5] = -1;
  CHECK_THROWS_WITH(repeat_rise(flat), Contains("repeat 5 of 32"));
}

TEST_CASE("the repeat-rise test holds its level on exchangeable rises and flags each of a run of rises far above the usual") {
  RepeatRiseTest test(0.01, 0.05);
  std::size_t flags = 0;
  const std::size_t n = 5000;
  judge_usual_rises(test, 5, n, [&](double rise, double p) { flags += test.flags(rise, p) ? 1 : 0; });
  INFO(flags << " flags in " << n);
  CHECK(static_cast<double>(flags) / n <= 0.012);
  // A clock low for five measurements in a row: each is flagged, the flagged ones joining the
  // reference only ten measurements later.
  for (int i = 0; i < 5; ++i) {
    const double rise = 0.1 + std::log(1.3);
    const double p = test.p_value(rise);
    INFO("low clock, measurement " << i << ": p = " << p);
    CHECK(test.flags(rise, p));
    test.learn(rise, true);
  }
  // On a steady kernel a rise of 2% is above every usual one, and still too small to flag.
  RepeatRiseTest steady(0.01, 0.05);
  for (int i = 0; i < 200; ++i) steady.learn(0.001 * (i % 5), false);
  CHECK(steady.p_value(0.02) < 0.01);
  CHECK_FALSE(steady.flags(0.02, steady.p_value(0.02)));
  // It cannot flag before 1 / level - 1 earlier measurements.
  RepeatRiseTest fresh(0.01, 0.05);
  for (int i = 0; i < 50; ++i) fresh.learn(0.0, false);
  CHECK_FALSE(fresh.flags(1.0, fresh.p_value(1.0)));
  CHECK_THROWS_WITH(RepeatRiseTest(0.0, 0.05), Contains("level"));
}

TEST_CASE("the run test flags a run of moderately unusual rises and holds its level on exchangeable ones") {
  // A device whose single measurements often step by as much as a fault: rises that are usual
  // one at a time (p about 0.05), three in a row.
  RunTest run(0.01, 3);
  CHECK(run.threshold() == Approx(std::cbrt(0.01 / 3)));
  CHECK_FALSE(run.observe(true));
  CHECK_FALSE(run.observe(true));
  CHECK(run.observe(true));
  CHECK(run.observe(true));  // a fourth in a row: still a run
  CHECK_FALSE(run.observe(false));
  CHECK_FALSE(run.observe(true));

  // Exchangeable rises judged by their conformal p-values: runs end at no more than level / length
  // of the measurements, so at most `level` of them are flagged as members of a run.
  RepeatRiseTest test(0.01, 0.0);
  RunTest clean(0.01, 3);
  std::size_t ends = 0;
  const std::size_t n = 20000;
  judge_usual_rises(test, 9, n, [&](double, double p) { ends += clean.observe(p <= clean.threshold()) ? 1 : 0; });
  INFO(ends << " runs ended in " << n);
  CHECK(3.0 * static_cast<double>(ends) / n <= 0.012);

  CHECK_THROWS_WITH(RunTest(0.01, 1), Contains("at least 2"));
  CHECK_THROWS_WITH(RunTest(1.5, 3), Contains("level"));
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
