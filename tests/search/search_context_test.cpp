#include "gpuforecast/search/search_context.hpp"

#include <catch2/catch.hpp>

#include <cstdio>

#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "search/genetic.hpp"
#include "search/random_search.hpp"
#include "search/surrogate_filtered.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "synthetic.hpp"

using namespace gpuforecast;

TEST_CASE("the context dedups, checks the space, counts and keeps to the count budget", "[search]") {
  test::CountingBenchmarker bench;
  auto calls = bench.calls;
  SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{3, 0});
  const auto& space = ctx.space();

  auto a = space.make_config({8, 2, 1});
  auto b = space.make_config({4, 2, 1});
  auto violating = space.make_config({32, 4, 1});  // 32 * 4 > 64
  auto m = ctx.evaluate(std::vector<Config>{a, a, violating, b});
  CHECK(*calls == 2);
  CHECK(m[0].ok());
  CHECK(m[1].median_ms == m[0].median_ms);
  CHECK(m[2].status == Status::invalid);
  CHECK_THAT(m[2].reason, Catch::Contains("constraint"));
  CHECK(ctx.measurement_count() == 2);
  CHECK(ctx.remaining() == 1);
  CHECK(ctx.seen(a));
  CHECK(ctx.evaluate(a).median_ms == m[0].median_ms);
  CHECK(*calls == 2);

  auto c = space.make_config({2, 2, 1});
  auto d = space.make_config({1, 2, 1});
  auto last = ctx.evaluate(std::vector<Config>{c, d});
  CHECK(*calls == 3);
  CHECK(last[0].ok());
  CHECK(last[1].status == Status::invalid);
  CHECK_THAT(last[1].reason, Catch::Contains("budget"));
  CHECK_FALSE(ctx.seen(d));
  CHECK(ctx.exhausted());

  const auto& trace = ctx.trace();
  REQUIRE(trace.size() == 3);
  CHECK(trace.entries()[0].index == 1);
  CHECK(trace.entries()[2].total_cost_s == Approx(6.0));
  CHECK(trace.best()->config == a);
  CHECK(trace.entries()[2].best_ms == Approx(test::synthetic_time(a)));
  CHECK(ctx.observations().size() == 3);
}

TEST_CASE("a seconds budget stops after the measurement that crosses it", "[search]") {
  test::CountingBenchmarker bench;
  SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{0, 5.0});
  RandomSearch(RandomSearchOptions{.seed = 3}).run(ctx);
  CHECK(ctx.trace().size() == 3);  // 2 s each: 2, 4, 6 >= 5
  CHECK(ctx.exhausted());
}

TEST_CASE("strategies stop when the whole space is measured", "[search]") {
  const auto total = enumerate_valid(test::synthetic_space()).size();
  for (int which = 0; which < 3; ++which) {
    INFO((which == 0 ? "random" : which == 1 ? "genetic" : "genetic, Kernel Tuner's operators"));
    test::CountingBenchmarker bench;
    SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{1000, 0});
    if (which == 0) RandomSearch(RandomSearchOptions{.seed = 1}).run(ctx);
    else if (which == 1) GeneticSearch(GeneticOptions{.seed = 1}).run(ctx);
    else GeneticSearch(GeneticOptions{.seed = 1, .variant = GeneticVariant::kernel_tuner}).run(ctx);
    CHECK(ctx.trace().size() <= total);
    if (which == 0) CHECK(ctx.trace().size() == total);
  }
}

TEST_CASE("the trace is written in T4 format", "[search]") {
  auto data = std::make_shared<const SpaceData>(test::synthetic_data());
  ReplayBenchmarker bench(data, {.seed = 1});
  SearchContext ctx(data->space, Candidate{}, bench, Budget{20, 0});
  GeneticSearch(GeneticOptions{.seed = 2}).run(ctx);
  REQUIRE(ctx.trace().size() == 20);
  const std::string path = "search_context_test_trace.json";
  write_trace_t4(ctx.trace(), path);
  auto back = read_t4(path);
  REQUIRE(back.results.size() == 20);
  for (std::size_t i = 0; i < 20; ++i) {
    CHECK(back.results[i].config.key() == ctx.trace().entries()[i].config.key());
    CHECK(back.results[i].measurement.status == ctx.trace().entries()[i].measurement.status);
  }
  std::remove(path.c_str());
}

namespace {
// Knows the true function: the filtered search must find the optimum almost at once.
struct OraclePredictor {
  std::size_t updates = 0;
  std::vector<Decision> decide(std::span<const Candidate> c) {
    std::vector<Decision> out;
    for (const auto& k : c) out.push_back(test::confident_decision(test::synthetic_time(k.config)));
    return out;
  }
  void update(std::span<const Observation> o) { updates += o.size(); }
};
}  // namespace

TEST_CASE("surrogate-filtered search measures what its predictor ranks best", "[search]") {
  test::CountingBenchmarker bench;
  SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{10, 0});
  SurrogateFilteredSearch search(OraclePredictor{}, {.seed = 4, .initial = {.samples = 0}});
  search.run(ctx);
  REQUIRE(ctx.best());
  CHECK(ctx.best()->best_ms == Approx(1.0));  // the optimum, in the first round
  CHECK(ctx.trace().entries()[4].best_ms == Approx(1.0));
}

TEST_CASE("what is known of a configuration before it runs reaches proposals and measurements alike", "[search]") {
  // SearchContextOptions::describe (static features, docs/features.md): every candidate the
  // context makes, and every one it hands to the benchmarker, carries what it adds.
  struct FeatureCheckingBenchmarker {
    std::shared_ptr<std::size_t> described = std::make_shared<std::size_t>(0);
    std::vector<Measurement> measure(std::span<const Candidate> candidates) {
      std::vector<Measurement> out;
      for (const auto& c : candidates) {
        if (c.features.count("registers") && c.features.at("registers") == c.config.at("x").as_double())
          ++*described;
        Measurement m;
        m.status = Status::ok;
        m.median_ms = test::synthetic_time(c.config);
        m.samples_ms = {m.median_ms};
        out.push_back(m);
      }
      return out;
    }
  };
  FeatureCheckingBenchmarker bench;
  auto described = bench.described;
  SearchContextOptions options;
  options.describe = [](Candidate& c) { c.features["registers"] = c.config.at("x").as_double(); };
  SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{2, 0}, options);
  const auto a = ctx.space().make_config({8, 2, 1});
  CHECK(ctx.candidate(a).features.at("registers") == 8);
  (void)ctx.evaluate(std::vector<Config>{a, ctx.space().make_config({4, 2, 1})});
  CHECK(*described == 2);
}
