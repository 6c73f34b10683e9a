// Stopping rules and the measurement loop with a deterministic fake timer and clock.
#include "runtime/stopping_criterion.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "runtime/detail/measurement_loop.hpp"
#include "runtime/fixed_count_criterion.hpp"
#include "runtime/relative_ci_criterion.hpp"
#include "runtime/sample_error.hpp"
#include "runtime/statistics.hpp"
#include "runtime/time_cap_criterion.hpp"

using namespace gpuforecast;

namespace {
// Samples `base * (1 + noise * u)`, u uniform in [-1, 1) from a fixed LCG; each run advances the
// fake clock by the sample plus an overhead, so time caps are exact.
class FakeTimer final : public SampleTimer {
 public:
  FakeTimer(double base_ms, double noise, double& clock_s, double overhead_s = 0)
      : m_base(base_ms), m_noise(noise), m_clock(clock_s), m_overhead(overhead_s) {}
  void prepare() override { ++prepares; }
  TimedSample run_once() override {
    m_state = m_state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(m_state >> 11) * 0x1.0p-53 * 2 - 1;
    TimedSample s;
    s.kernel_ms = m_base * (1 + m_noise * u);
    s.cupti_ms = s.kernel_ms;
    s.event_ms = s.kernel_ms * 1.01;  // events include launch latency
    m_clock += s.kernel_ms / 1e3 + m_overhead;
    ++runs;
    if (fail_at >= 0 && runs == fail_at) throw sample_error(Status::runtime_failed, "fake fault");
    return s;
  }
  int runs = 0, prepares = 0, fail_at = -1;

 private:
  double m_base, m_noise;
  double& m_clock;
  double m_overhead;
  std::uint64_t m_state = 42;
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(double& t) : m_t(t) {}
  double now_s() override { return m_t; }

 private:
  double& m_t;
};
}  // namespace

TEST_CASE("fixed count stops at the count", "[runtime][stopping]") {
  double t = 0;
  FakeTimer timer(1.0, 0.5, t);
  FakeClock clock(t);
  FixedCountCriterion c(7);
  Measurement m;
  detail::LoopOptions o;
  o.warmup = 3;
  const auto r = detail::run_measurement_loop(timer, c, clock, o, m);
  CHECK(m.samples_ms.size() == 7);
  CHECK(timer.runs == 10);
  CHECK(timer.prepares == 10);  // flush before warm-up runs too
  CHECK(r.stop_reason == "fixed_count");
  CHECK(m.ci_low_ms <= m.median_ms);
  CHECK(m.median_ms <= m.ci_high_ms);
  CHECK(r.timer_pairs == 7);
  CHECK(r.max_timer_disagreement == Approx(0.01));
  CHECK(r.median_timer_disagreement == Approx(0.01));
  CHECK_THAT(m.log, Catch::Contains("CUPTI vs events: median disagreement 1.00%"));
}

TEST_CASE("relative CI stops once the interval is within the width", "[runtime][stopping]") {
  double t = 0;
  SECTION("quiet kernel: at the minimum sample count") {
    FakeTimer timer(2.0, 0.001, t);
    FakeClock clock(t);
    RelativeCiCriterion c(0.01, 0.95, 10);
    Measurement m;
    detail::run_measurement_loop(timer, c, clock, {}, m);
    CHECK(m.samples_ms.size() == 10);
    CHECK(m.median_ms == Approx(2.0).epsilon(0.002));
  }
  SECTION("noisy kernel: needs more samples, and the result satisfies the rule") {
    FakeTimer timer(2.0, 0.2, t);
    FakeClock clock(t);
    RelativeCiCriterion c(0.01, 0.95, 10);
    Measurement m;
    detail::run_measurement_loop(timer, c, clock, {}, m);
    CHECK(m.samples_ms.size() > 50);
    const auto mi = median_interval(m.samples_ms, 0.95);
    CHECK(mi.relative_half_width <= 0.01);
    // One sample fewer would not have stopped: the rule fired at the first chance.
    std::vector<double> fewer(m.samples_ms.begin(), m.samples_ms.end() - 1);
    CHECK_FALSE(c.is_finished(fewer, 0));
  }
}

TEST_CASE("adaptive rule: sample cap and time cap", "[runtime][stopping]") {
  double t = 0;
  SECTION("sample cap") {
    FakeTimer timer(1.0, 0.5, t);
    FakeClock clock(t);
    auto c = make_stopping_criterion("adaptive", {{"width", 0.001}, {"max_samples", 40}, {"max_seconds", 100}});
    Measurement m;
    const auto r = detail::run_measurement_loop(timer, *c, clock, {}, m);
    CHECK(m.samples_ms.size() == 40);
    CHECK(r.stop_reason == "fixed_count");
  }
  SECTION("time cap, warm-up counted") {
    FakeTimer timer(1e-6, 0.5, t, 0.011);  // each run: 11 ms of fake wall time
    FakeClock clock(t);
    auto c = make_stopping_criterion("adaptive", {{"width", 0.001}, {"max_samples", 100000}, {"max_seconds", 0.5}});
    Measurement m;
    detail::LoopOptions o;
    o.warmup = 2;
    const auto r = detail::run_measurement_loop(timer, *c, clock, o, m);
    CHECK(r.stop_reason == "time_cap");
    // ceil(0.5 / 0.011) = 46 runs in all, 2 of them warm-up
    CHECK(timer.runs == 46);
    CHECK(m.samples_ms.size() == 44);
    CHECK(m.benchmark_ms == Approx(46 * 11.0));
  }
}

TEST_CASE("timer faults propagate out of the loop", "[runtime][stopping]") {
  double t = 0;
  FakeTimer timer(1.0, 0.0, t);
  timer.fail_at = 5;
  FakeClock clock(t);
  FixedCountCriterion c(10);
  Measurement m;
  CHECK_THROWS_AS(detail::run_measurement_loop(timer, c, clock, {}, m), sample_error);
}

TEST_CASE("criteria by name with a parameter bag", "[runtime][stopping]") {
  CHECK(make_stopping_criterion("fixed_count", {{"count", 5}})->describe() == "fixed_count(count=5)");
  CHECK(make_stopping_criterion("time_cap", {{"seconds", 2}})->name() == "time_cap");
  CHECK(make_stopping_criterion("relative_ci")->describe() == "relative_ci(width=0.01, confidence=0.95, min_samples=10)");
  CHECK(make_stopping_criterion("adaptive")->name() == "any_of");
  CHECK_THROWS_WITH(make_stopping_criterion("bogus"), Catch::Contains("known: adaptive"));
  CHECK_THROWS_WITH(make_stopping_criterion("fixed_count", {{"cnt", 5}}), Catch::Contains("accepted: count"));
  CHECK_THROWS_AS(make_stopping_criterion("fixed_count", {{"count", 0}}), invalid_argument_error);
  CHECK_THROWS_AS(make_stopping_criterion("fixed_count", {{"count", 2.5}}), invalid_argument_error);
  CHECK_THROWS_AS(make_stopping_criterion("relative_ci", {{"width", 0}}), invalid_argument_error);
  CHECK_THROWS_AS(make_stopping_criterion("time_cap", {{"seconds", -1}}), invalid_argument_error);
  // The relative rule never stops before the interval can exclude the extremes.
  RelativeCiCriterion c(0.5, 0.95, 1);
  CHECK_FALSE(c.is_finished(std::vector<double>(8, 1.0), 0));
  CHECK(c.is_finished(std::vector<double>(9, 1.0), 0));
}
