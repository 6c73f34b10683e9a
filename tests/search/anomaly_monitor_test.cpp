// The anomaly monitor in a replayed search whose replay times a sentinel: a device slowed for
// one measurement is flagged there, a lasting step is found within a few measurements and the
// reference restarts at the new level, a clean search raises no device flag; the sentinel
// changes none of the measurements.
#include "search/anomaly_monitor.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <random>
#include <set>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/run/strategy_registry.hpp"
#include "support/data.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

// Slows the device (measurement and sentinel alike) at one measurement, and from another on.
struct SlowedDevice {
  ReplayBenchmarker replay;
  std::size_t slow_at = 0, step_from = 0;
  std::shared_ptr<std::size_t> count = std::make_shared<std::size_t>(0);
  std::vector<Measurement> measure(std::span<const Candidate> candidates) {
    auto out = replay.measure(candidates);
    for (auto& m : out) {
      const std::size_t i = ++*count;
      const double factor = (i == slow_at ? 1.5 : 1.0) * (step_from && i >= step_from ? 1.15 : 1.0);
      if (m.ok()) {
        for (auto& s : m.samples_ms) s *= factor;
        summarise_samples(m);
      }
      for (auto& s : m.sentinel_ms) s *= factor;
    }
    return out;
  }
};

std::vector<SearchAnomaly> search(std::size_t slow_at, std::size_t step_from, std::size_t sentinel_repeats = 20) {
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("convolution_milo", "A100").string()));
  ReplayBenchmarker replay(data, {.seed = 11, .sampling = ReplaySampling::median, .sentinel_repeats = sentinel_repeats});
  SearchContext ctx(data->space, data->observations.front().candidate, SlowedDevice{replay, slow_at, step_from},
                    Budget{120});
  AnomalyMonitor monitor;
  ctx.add_observer(std::ref(monitor));
  StrategySettings settings;
  settings.seed = 11;
  auto strategy = make_strategy("surrogate", settings);
  strategy.run(ctx);
  ctx.finish();
  return monitor.anomalies();
}

std::set<std::size_t> where(const std::vector<SearchAnomaly>& anomalies, const std::string& kind) {
  std::set<std::size_t> out;
  for (const auto& a : anomalies)
    if (a.kind == kind) out.insert(a.index);
  return out;
}

}  // namespace

TEST_CASE("a device slow for one measurement is flagged there by its sentinel, and a step soon after it came",
          "[search][data]") {
  const auto anomalies = search(30, 80);
  const auto slow = where(anomalies, "slow_device");
  CHECK(slow.count(30) == 1);
  const auto steps = where(anomalies, "step_drift");
  REQUIRE_FALSE(steps.empty());
  CHECK(*steps.lower_bound(80) <= 85);  // three measurements in a row cross the CUSUM
  // After the step was found, the new level is the reference: not every later measurement is flagged.
  std::size_t slow_after = 0;
  for (const auto i : slow) slow_after += i > 85;
  CHECK(slow_after <= 2);
  for (const auto& a : anomalies)
    if (a.kind == "slow_device" && a.index == 30) CHECK_THAT(a.detail, Contains("the device was slow at this measurement"));
}

TEST_CASE("a steady device raises no device flag, and the sentinel changes no measurement", "[search][data]") {
  const auto clean = search(0, 0);
  CHECK(where(clean, "slow_device").empty());
  CHECK(where(clean, "step_drift").empty());
  // Without a sentinel the same search measures the same (the sentinel draws from its own stream).
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("convolution_milo", "A100").string()));
  std::vector<Candidate> some;
  for (std::size_t i = 0; i < 50; ++i) some.push_back(data->observations[i * 7].candidate);
  ReplayBenchmarker with(data, {.seed = 3, .sentinel_repeats = 20}), without(data, {.seed = 3});
  const auto a = with.measure(some), b = without.measure(some);
  for (std::size_t i = 0; i < some.size(); ++i) {
    CHECK(a[i].samples_ms == b[i].samples_ms);
    CHECK(b[i].sentinel_ms.empty());
    if (a[i].status != Status::invalid) CHECK(a[i].sentinel_ms.size() == (i == 0 ? 200u : 20u));
  }
}

TEST_CASE("rises in several measurements in a row are each flagged once, on a device whose single steps are as large",
          "[search]") {
  // 20 repeats a measurement; one in ten measurements steps up 15-40% half-way (the device's
  // habit, as convolution_milo's RTX A4000 does), then measurements 201-204 each step up 30% (a
  // clock that stays low).
  std::bernoulli_distribution habit(0.1);
  std::uniform_real_distribution<double> habit_step(1.15, 1.4);
  std::normal_distribution<double> jitter(0, 0.002);
  const Config config(std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"x"}), {Value(1)});
  Trace trace;
  std::multiset<std::size_t> outside_alone;
  for (std::size_t run_length : {0, 3}) {
    std::mt19937_64 rng(4);  // the same measurements for both
    AnomalyMonitorOptions o;
    o.repeat_run_length = run_length;
    AnomalyMonitor monitor(o);
    for (std::size_t index = 1; index <= 220; ++index) {
      const bool in_fault = index >= 201 && index <= 204;
      const double step = in_fault ? 1.3 : habit(rng) ? habit_step(rng) : 1.0;
      Measurement m;
      m.status = Status::ok;
      for (std::size_t r = 0; r < 20; ++r) m.samples_ms.push_back((r < 10 ? 1.0 : step) * (1 + jitter(rng)));
      summarise_samples(m);
      monitor.on_measured({index, config, m, trace});
    }
    std::multiset<std::size_t> flagged, outside;
    for (const auto& a : monitor.anomalies())
      if (a.kind == "repeat_rise") (a.index >= 201 && a.index <= 204 ? flagged : outside).insert(a.index);
    INFO("repeat_run_length " << run_length << ": " << flagged.size() << " of the fault's 4 flagged, "
                              << outside.size() << " others");
    if (run_length == 0) {
      CHECK(flagged.size() < 4);  // alone, each is no more unusual than the device's own steps
      outside_alone = outside;
    } else {
      for (std::size_t i = 201; i <= 204; ++i) CHECK(flagged.count(i) == 1);
      CHECK(outside == outside_alone);  // the device's single steps make no run
    }
  }
}
