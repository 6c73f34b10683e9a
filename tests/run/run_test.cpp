// Which space a replayed search walks (--space): the T1 file's Conditions when there is one,
// else the configurations the cache holds with a valid time (Kernel Tuner's tune_cache).
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "gpuforecast/core/error.hpp"
#include "core/warning.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/space/enumerate.hpp"
#include "data/temp_dir.hpp"
#include "support/data.hpp"
#include "support/wild_cache.hpp"

using namespace gpuforecast;

TEST_CASE("the replay space modes have names", "[search]") {
  for (auto s : {ReplaySpace::automatic, ReplaySpace::t1, ReplaySpace::cached, ReplaySpace::cartesian})
    CHECK(parse_replay_space(replay_space_name(s)) == s);
  try {
    (void)parse_replay_space("tune_cache");
    FAIL("no error");
  } catch (const invalid_argument_error& e) {
    CHECK(std::string(e.what()).find("tune_cache") != std::string::npos);
    CHECK(std::string(e.what()).find("cached") != std::string::npos);
  }
}

TEST_CASE("a shared file with its T1 file: t1 by default, cached and cartesian on request", "[search][data]") {
  const auto path = test::cache_file("convolution_milo", "A4000").string();
  const SpaceData t1 = load_replay_space(path);
  CHECK_FALSE(t1.space.constraints().empty());  // today's default is kept when a T1 file is found
  CHECK(t1.space.members() == nullptr);
  CHECK(describe_replay_space(t1).starts_with("t1 ("));
  CHECK(load_replay_space(path, {}, ReplaySpace::t1).space.constraints() == t1.space.constraints());

  const SpaceData cached = load_replay_space(path, {}, ReplaySpace::cached);
  REQUIRE(cached.space.members() != nullptr);
  CHECK(cached.space.members()->size() == cached.valid_count());
  CHECK(enumerate_valid(cached.space).size() == 4201);
  CHECK(describe_replay_space(cached) == "cached (4201 configurations)");
  std::set<std::string> ok;
  for (const auto& o : cached.observations)
    if (o.measurement.ok()) ok.insert(o.candidate.config.key());
  for (const auto& c : sample_valid(cached.space, 500, 3)) CHECK(ok.count(c.key()) == 1);

  const SpaceData cartesian = load_replay_space(path, {}, ReplaySpace::cartesian);
  CHECK(cartesian.space.constraints().empty());
  CHECK(cartesian.space.members() == nullptr);
  CHECK(enumerate_valid(cartesian.space).size() == 10240);
}

TEST_CASE("a cache from the wild without a T1 file is replayed over its cached space", "[search][data]") {
  const test::TempDir dir;
  const auto path = test::write_wild_cache(test::cache_file("convolution_milo", "A4000"), dir.path() / "wild.json",
                                           "Imaginary GPU 9000").string();
  std::vector<std::string> warnings;
  const auto previous = set_warning_handler([&](const std::string& m) { warnings.push_back(m); });
  auto data = std::make_shared<const SpaceData>(load_replay_space(path));
  CHECK(warnings.size() == 1);
  CHECK_THROWS_WITH(load_replay_space(path, {}, ReplaySpace::t1), Catch::Contains("--t1"));
  // The T1 file of the shared layout still applies when given.
  const SpaceData with_t1 = load_replay_space(path, test::t1_file("convolution_milo").string());
  CHECK_FALSE(with_t1.space.constraints().empty());
  REQUIRE(data->space.members() != nullptr);
  CHECK(data->space.members()->size() == 4201);
  CHECK_FALSE(data->device->has_numbers());

  // Every strategy measures only configurations the data holds with a valid time: nothing is
  // charged for configurations the data never had. Over the cartesian product some are.
  for (const char* strategy : {"random", "genetic", "surrogate"}) {
    INFO(strategy);
    Plan e;
    e.replay().data = data;
    e.strategy = strategy;
    e.budget = 60;
    e.seeds = 2;
    const auto result = gpuforecast::run(e);
    REQUIRE(result.runs.size() == 2);
    for (const auto& run : result.runs) {
      CHECK(run.trace.size() == 60);
      for (const auto& entry : run.trace.entries()) CHECK(entry.measurement.ok());
      CHECK(run.curve.back() > 0.3);
    }
  }
  Plan e;
  e.replay().data = std::make_shared<const SpaceData>(load_replay_space(path, {}, ReplaySpace::cartesian));
  e.strategy = "random";
  e.budget = 60;
  e.seeds = 2;
  std::size_t failed = 0;
  for (const auto& run : gpuforecast::run(e).runs)
    for (const auto& entry : run.trace.entries()) failed += entry.measurement.ok() ? 0 : 1;
  CHECK(failed > 0);
  CHECK(warnings.size() == 4);  // one per reading of the file
  set_warning_handler(previous);
}

TEST_CASE("a run counts the anomalies reported to its observers", "[search][data]") {
  Plan plan;
  plan.replay().data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("pnpoly", "RTX_3090").string()));
  plan.strategy = "random";
  plan.budget = 20;
  plan.seeds = 2;
  // Every fifth measurement flagged, as an anomaly monitor would.
  struct EveryFifth {
    SearchContext* ctx;
    void on_measured(const SearchMeasured& e) {
      if (e.index % 5 == 0) ctx->report_anomaly(SearchAnomaly{e.index, "slow_outlier", e.config, 1.0, 0.01, "test"});
    }
  };
  plan.observe = [](SearchContext& ctx, std::size_t, const std::string&) { ctx.add_observer(EveryFifth{&ctx}); };
  const Result result = gpuforecast::run(plan);
  REQUIRE(result.runs.size() == 2);
  for (const auto& run : result.runs) CHECK(run.anomalies == 4);
}

namespace {
// A device 1.5x slower, sentinel and all, at one measurement: what the run's monitor flags.
struct SlowOnce {
  std::shared_ptr<ReplayBenchmarker> replay;
  std::size_t slow_at = 0;
  std::shared_ptr<std::size_t> count = std::make_shared<std::size_t>(0);
  std::vector<Measurement> measure(std::span<const Candidate> candidates) const {
    auto out = replay->measure(candidates);
    for (auto& m : out) {
      if (++*count != slow_at) continue;
      if (m.ok()) {
        for (auto& s : m.samples_ms) s *= 1.5;
        summarise_samples(m);
      }
      for (auto& s : m.sentinel_ms) s *= 1.5;
    }
    return out;
  }
};

struct SeenAnomalies {
  std::vector<SearchAnomaly>* seen;
  void on_anomaly(const SearchAnomaly& a) { seen->push_back(a); }
};
}  // namespace

TEST_CASE("each run has one anomaly monitor, whose flags reach every observer a front end adds", "[search][data]") {
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("convolution_milo", "A100").string()));
  auto replay = std::make_shared<ReplayBenchmarker>(
      data, ReplayOptions{.seed = 11, .sampling = ReplaySampling::median, .sentinel_repeats = 20});
  Plan plan;
  plan.backend = caller_backend(data->space, data->observations.front().candidate,
                                std::make_shared<SlowOnce>(SlowOnce{replay, 30}));
  plan.strategy = "random";
  plan.budget = 60;
  plan.seeds = 1;
  std::vector<SearchAnomaly> seen;
  std::size_t measured_before_flag = 0;
  struct Order {  // measurements the observer had seen when the flag reached it
    std::size_t measured = 0;
    std::size_t* at_flag;
    void on_measured(const SearchMeasured&) { ++measured; }
    void on_anomaly(const SearchAnomaly& a) {
      if (a.index == 30) *at_flag = measured;
    }
  };
  plan.observe = [&](SearchContext& ctx, std::size_t, const std::string&) {
    ctx.add_observer(SeenAnomalies{&seen});
    ctx.add_observer(Order{0, &measured_before_flag});
  };
  const Result result = gpuforecast::run(plan);
  bool flagged_at_30 = false;
  for (const auto& a : seen) flagged_at_30 = flagged_at_30 || (a.kind == "slow_device" && a.index == 30);
  CHECK(flagged_at_30);
  CHECK(measured_before_flag == 30);  // the flag follows its measurement, for every observer
  CHECK(result.runs.front().anomalies == seen.size());

  seen.clear();
  plan.anomalies = false;
  *replay = ReplayBenchmarker(data, ReplayOptions{.seed = 11, .sampling = ReplaySampling::median, .sentinel_repeats = 20});
  plan.backend = caller_backend(data->space, data->observations.front().candidate,
                                std::make_shared<SlowOnce>(SlowOnce{replay, 30}));
  CHECK(gpuforecast::run(plan).runs.front().anomalies == 0);
  CHECK(seen.empty());
}
