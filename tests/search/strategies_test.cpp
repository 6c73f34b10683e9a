// Conformance: every registered strategy, run on replay of real data with small budgets, keeps
// the contract of the SearchContext (STYLE 5.11).
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/run.hpp"
#include "search/genetic.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/run/strategy_registry.hpp"
#include "support/data.hpp"

using namespace gpuforecast;

TEST_CASE("every registered strategy searches replayed data within its budget", "[search][data]") {
  const auto names = strategy_names();
  REQUIRE(names.size() >= 3);
  // Every registered strategy with its defaults, and the variants selected by an option.
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> variants;
  for (const auto& name : names) variants.push_back({name, {}});
  variants.push_back({"genetic", {{"variant", "kernel_tuner"}}});
  for (const char* kernel : {"convolution_milo", "dedispersion_milo"}) {
    auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file(kernel, "A4000").string()));
    REQUIRE_FALSE(data->space.constraints().empty());  // the T1 conditions were attached
    for (const auto& [name, options] : variants) for (std::size_t workers : {1, 4}) {
      INFO("strategy " << name << (options.empty() ? "" : " (variant)") << " on " << kernel << ", " << workers
                       << " workers");
      Plan e;
      e.replay().data = data;
      e.strategy = name;
      e.settings.options = options;
      if (name == "list") {  // the configurations a program names: here the first 60 stored ones
        auto some = std::make_shared<std::vector<Config>>();
        for (const auto& o : data->observations)
          if (some->size() < 60 && data->space.is_valid(o.candidate.config)) some->push_back(o.candidate.config);
        e.settings.configs = std::move(some);
      }
      e.replay().workers = workers;
      e.budget = 40;
      e.seeds = 2;
      auto result = gpuforecast::run(e);
      REQUIRE(result.runs.size() == 2);
      for (const auto& run : result.runs) {
        const auto& entries = run.trace.entries();
        CHECK(entries.size() == 40);
        std::set<std::string> keys;
        for (const auto& entry : entries) {
          CHECK(data->space.is_valid(entry.config));
          CHECK(keys.insert(entry.config.key()).second);  // measured once
          CHECK(entry.measurement.status != Status::invalid);  // T1-valid configs are all stored
        }
        REQUIRE(run.curve.size() == 40);
        CHECK(run.curve.back() > 0.0);
        CHECK(run.curve.back() <= 1.0);
        for (std::size_t i = 1; i < run.curve.size(); ++i) CHECK(run.curve[i] >= run.curve[i - 1]);
      }
      // Same seed, same search.
      e.seeds = 1;
      auto again = gpuforecast::run(e);
      REQUIRE(again.runs[0].trace.size() == result.runs[0].trace.size());
      for (std::size_t i = 0; i < again.runs[0].trace.size(); ++i)
        CHECK(again.runs[0].trace.entries()[i].config == result.runs[0].trace.entries()[i].config);
    }
  }
}

TEST_CASE("seeds searched side by side give the same searches as one after another", "[search][data]") {
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("convolution_milo", "A4000").string()));
  for (const char* name : {"random", "genetic", "surrogate"}) {
    INFO("strategy " << name);
    Plan e;
    e.replay().data = data;
    e.strategy = name;
    e.budget = 30;
    e.seeds = 3;
    e.first_seed = 5;
    e.threads = 1;
    const auto serial = gpuforecast::run(e);
    e.threads = 3;
    const auto parallel = gpuforecast::run(e);
    REQUIRE(parallel.runs.size() == 3);
    for (std::size_t r = 0; r < 3; ++r) {
      INFO("run " << r);
      CHECK(parallel.runs[r].seed == 5 + r);
      CHECK(parallel.runs[r].curve == serial.runs[r].curve);
      const auto& a = serial.runs[r].trace.entries();
      const auto& b = parallel.runs[r].trace.entries();
      REQUIRE(a.size() == b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].config == b[i].config);
        CHECK(a[i].measurement.median_ms == b[i].measurement.median_ms);
      }
    }
  }
  // A run that fails fails the experiment, whichever thread it ran on.
  Plan bad;
  bad.replay().data = data;
  bad.strategy = "genetic";
  bad.settings.options = {{"populaton_size", "3"}};  // misspelt: refused naming the known option
  bad.seeds = 4;
  bad.threads = 2;
  CHECK_THROWS_WITH(gpuforecast::run(bad), Catch::Contains("population_size"));
}

TEST_CASE("a seconds budget limits replayed searches by simulated time", "[search][data]") {
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("dedispersion_milo", "A100").string()));
  Plan e;
  e.replay().data = data;
  e.strategy = "genetic";
  e.budget = 0;
  e.budget_seconds = 60;
  e.seeds = 1;
  auto result = gpuforecast::run(e);
  const auto& trace = result.runs[0].trace;
  REQUIRE_FALSE(trace.empty());
  CHECK(trace.total_cost_s() >= 60);
  CHECK(trace.total_cost_s() - trace.entries().back().cost_s < 60);
}

TEST_CASE("unknown strategies and options are refused with the known names", "[search]") {
  CHECK_THROWS_WITH(make_strategy("annealing"), Catch::Contains("random") && Catch::Contains("genetic"));
  StrategySettings s;
  s.options["populaton_size"] = "3";
  CHECK_THROWS_WITH(make_strategy("genetic", s), Catch::Contains("population_size"));
  s.options = {{"population_size", "many"}};
  CHECK_THROWS_AS(make_strategy("genetic", s), invalid_argument_error);
  s.options = {{"variant", "steady_state"}};
  CHECK_THROWS_WITH(make_strategy("genetic", s), Catch::Contains("elitist") && Catch::Contains("kernel_tuner"));
}

TEST_CASE("the genetic algorithm's two variants search differently from the same seed", "[search][data]") {
  // Same seed, same initial population (one uniform sample); the variants differ from the
  // second generation on, in selection, mutation and elitism.
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("convolution_milo", "A100").string()));
  auto trace_of = [&](const char* variant) {
    Plan e;
    e.replay().data = data;
    e.strategy = "genetic";
    e.settings.options = {{"variant", variant}};
    e.budget = 60;
    e.seeds = 1;
    e.first_seed = 7;
    auto result = gpuforecast::run(e);
    std::vector<std::string> keys;
    for (const auto& entry : result.runs.front().trace.entries()) keys.push_back(entry.config.key());
    return keys;
  };
  const auto elitist = trace_of("elitist"), kernel_tuner = trace_of("kernel_tuner");
  REQUIRE(elitist.size() == 60);
  REQUIRE(kernel_tuner.size() == 60);
  CHECK(std::vector(elitist.begin(), elitist.begin() + 20) == std::vector(kernel_tuner.begin(), kernel_tuner.begin() + 20));
  CHECK(elitist != kernel_tuner);
}

TEST_CASE("on several simulated workers every strategy keeps them busy and stays deterministic", "[search][data]") {
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("dedispersion_milo", "A6000").string()));
  for (const char* name : {"random", "genetic", "surrogate"}) {
    INFO("strategy " << name);
    Plan e;
    e.replay().data = data;
    e.strategy = name;
    e.budget = 60;
    e.seeds = 2;
    e.replay().workers = 8;
    const auto a = gpuforecast::run(e);
    const auto b = gpuforecast::run(e);
    for (std::size_t r = 0; r < 2; ++r) {
      REQUIRE(a.runs[r].trace.size() == 60);
      CHECK(a.runs[r].curve == b.runs[r].curve);
      // Eight workers finish 60 measurements in well under a sequential run's time: the
      // strategy had a candidate ready whenever a worker freed up (a generational or
      // round-synchronous one leaves workers idle at each barrier).
      CHECK(a.runs[r].utilisation > 0.8);
      CHECK(a.runs[r].virtual_seconds < a.runs[r].trace.total_cost_s() / 6);
    }
  }
}

namespace {

// Knows every stored time of the data: a model as good as a model can be, so what screened
// evolution does with forecasts shows plainly.
struct StoredTimes {
  std::shared_ptr<const SpaceData> data;
  std::vector<Decision> decide(std::span<const Candidate> candidates) const {
    std::vector<Decision> out;
    for (const auto& c : candidates) {
      Decision d;
      d.forecast.median_ms = 1e9;  // not in the data: as slow as can be
      for (const auto& o : data->observations)
        if (o.candidate.config == c.config && o.measurement.ok()) d.forecast.median_ms = o.measurement.median_ms;
      d.interval_low_ms = d.interval_high_ms = d.forecast.median_ms;
      out.push_back(d);
    }
    return out;
  }
};

}  // namespace

TEST_CASE("screened evolution measures the children a model ranks best", "[search][data]") {
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("gemm", "RTX_3090").string()));
  const auto run_with = [&](const char* variant, const char* children) {
    Plan e;
    e.replay().data = data;
    e.strategy = "genetic";
    e.settings.options = {{"variant", variant}, {"children_per_measurement", children}};
    e.settings.model_factory = [&] { return AnySelectivePredictor(StoredTimes{data}); };
    e.budget = 60;
    e.seeds = 1;
    e.first_seed = 3;
    return gpuforecast::run(e).runs.front();
  };
  for (const char* variant : {"elitist", "kernel_tuner"}) {
    INFO("gemm RTX_3090, genetic variant " << variant);
    const auto plain = run_with(variant, "1"), screened = run_with(variant, "8");
    REQUIRE(plain.trace.size() == 60);
    REQUIRE(screened.trace.size() == 60);
    // The first generation is the same uniform sample; after it, eight children per place ranked by
    // their true times find a faster configuration than one child per place.
    CHECK(plain.trace.entries()[0].config == screened.trace.entries()[0].config);
    CHECK(screened.trace.best()->best_ms < plain.trace.best()->best_ms);
  }

  // Ranking needs a model; screening needs more children than places; screened generations run
  // one at a time.
  Plan e;
  e.replay().data = data;
  e.strategy = "genetic";
  e.settings.options = {{"children_per_measurement", "4"}, {"screen", "true"}};
  e.settings.model_factory = [&] { return AnySelectivePredictor(StoredTimes{data}); };
  e.budget = 30;
  e.seeds = 1;
  e.replay().workers = 2;
  CHECK_THROWS_WITH(gpuforecast::run(e), Catch::Contains("one worker"));
  e.settings.options = {{"children_per_measurement", "1"}, {"screen", "true"}};
  CHECK_THROWS_WITH(gpuforecast::run(e), Catch::Contains("children_per_measurement > 1"));
  CHECK_THROWS_WITH(GeneticSearch(GeneticOptions{.children_per_measurement = 4}), Catch::Contains("selective model"));
}

TEST_CASE("screened evolution calibrated by a rehearsal on another device screens from its first rounds",
          "[search][data]") {
  const auto space = [](const char* device) {
    return std::make_shared<const SpaceData>(load_replay_space(test::cache_file("gemm", device).string()));
  };
  const auto plan_on = [](std::shared_ptr<const SpaceData> data, std::size_t seeds, std::uint64_t first_seed) {
    Plan p;
    p.replay().data = std::move(data);
    p.strategy = "genetic";
    p.settings.options = {{"children_per_measurement", "8"}};
    p.budget = 80;
    p.seeds = seeds;
    p.first_seed = first_seed;
    p.threads = 2;
    return p;
  };
  // The rehearsal: the same search on the RTX 2080 Ti, every child its model forecast recorded
  // with its stored time and the incumbent of the moment.
  const auto other = space("RTX_2080_Ti");
  Plan rehearse = plan_on(other, 3, 1001);
  rehearse.rehearsal = true;
  auto pairs = std::make_shared<std::vector<std::vector<ScreeningPair>>>(1);
  for (const auto& r : gpuforecast::run(rehearse).runs) {
    INFO("rehearsal on gemm RTX_2080_Ti, seed " << r.seed);
    CHECK(r.rehearsal.size() > 300);  // children, not only the 80 measured
    for (const auto& p : r.rehearsal) {
      REQUIRE(p.incumbent_ms > 0);  // a measured time: one of the stored runs, below their median at times
      REQUIRE(p.measured_ms >= other->best_ms());
    }
    pairs->front().insert(pairs->front().end(), r.rehearsal.begin(), r.rehearsal.end());
  }

  // Screening the RTX 3090 with it: a rule from the first screened round, children screened out,
  // the budget spent all the same, and the same seed searching the same way.
  Plan screened = plan_on(space("RTX_3090"), 2, 1);
  screened.settings.options["screen"] = "true";
  screened.settings.screening_rehearsal = pairs;
  const auto result = gpuforecast::run(screened);
  for (const auto& r : result.runs) {
    INFO("gemm RTX_3090 screened with the RTX 2080 Ti's rehearsal, seed " << r.seed);
    CHECK(r.trace.size() == 80);
    REQUIRE(r.screened_rounds > 0);
    CHECK(r.certified_rounds == r.screened_rounds);
    CHECK(r.screening.skipped > 0);
    CHECK(r.screening.considered >= 8 * (80 - 20));  // at least m children per place after the first generation
    CHECK(r.interval_checked > 0);
  }
  const auto again = gpuforecast::run(screened);
  CHECK(again.runs[1].trace.entries().back().config == result.runs[1].trace.entries().back().config);
  CHECK(again.runs[1].screening.skipped == result.runs[1].screening.skipped);

  // Screened evolution sets the children against the model's forecast of the incumbent: every
  // pair of its rehearsal carries it. A rehearsal without it (recorded against the incumbent's
  // time) is refused by name, and screening against the time takes it.
  for (const auto& group : *pairs)
    for (const auto& p : group) REQUIRE(p.incumbent_forecast_ms > 0);
  auto pairs_by_time = std::make_shared<std::vector<std::vector<ScreeningPair>>>(*pairs);
  for (auto& p : pairs_by_time->front()) p.incumbent_forecast_ms = 0;
  Plan by_time = screened;
  by_time.seeds = 1;
  by_time.settings.screening_rehearsal = pairs_by_time;
  CHECK_THROWS_WITH(gpuforecast::run(by_time), Catch::Contains("screen_reference=incumbent_forecast"));
  by_time.settings.options["screen_reference"] = "incumbent_time";
  const auto timed = gpuforecast::run(by_time);
  CHECK(timed.runs[0].trace.size() == 80);
  CHECK(timed.runs[0].screening.skipped > 0);

  // Two calibrations of one rule are refused.
  screened.settings.screening_calibration = std::make_shared<const std::vector<Observation>>(other->observations);
  CHECK_THROWS_WITH(gpuforecast::run(screened), Catch::Contains("give one"));
}
