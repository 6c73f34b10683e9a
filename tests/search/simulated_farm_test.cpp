#include "runtime/simulated_farm.hpp"

#include <catch2/catch.hpp>

#include <set>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "search/genetic.hpp"
#include "search/random_search.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "search/surrogate_filtered.hpp"
#include "synthetic.hpp"

using namespace gpuforecast;

namespace {
// Each candidate charges x seconds (x: 1 .. 32), so finishing order differs from submission order.
Measurement charge_x(const Candidate& c) {
  Measurement m;
  m.status = Status::ok;
  m.median_ms = test::synthetic_time(c.config);
  m.samples_ms = {m.median_ms};
  m.cost_s = c.config.at("x").as_double();
  return m;
}
SimulatedFarm farm_of(std::size_t workers) {
  return SimulatedFarm(workers, [](std::span<const Candidate> c) {
    std::vector<Measurement> out;
    for (const auto& x : c) out.push_back(charge_x(x));
    return out;
  });
}
}  // namespace

TEST_CASE("the simulated farm lands results in virtual-time order and queues beyond its workers", "[search]") {
  auto farm = farm_of(2);
  const auto space = test::synthetic_space();
  Candidate c;
  c.config = space.make_config({8, 1, 1});  // 8 s
  const auto slow = farm.submit(c);
  c.config = space.make_config({2, 1, 1});  // 2 s
  const auto fast = farm.submit(c);
  c.config = space.make_config({1, 1, 1});  // queued: starts at 2 s on the freed worker, ends at 3 s
  const auto queued = farm.submit(c);
  auto l = farm.wait_any();
  REQUIRE(l.size() == 1);
  CHECK(l[0].ticket == fast);
  CHECK(farm.clock_s() == Approx(2));
  CHECK(farm.wait_any()[0].ticket == queued);
  CHECK(farm.clock_s() == Approx(3));
  CHECK(farm.wait_any()[0].ticket == slow);
  CHECK(farm.clock_s() == Approx(8));
  CHECK(farm.wait_any().empty());
  CHECK(farm.busy_s() == Approx(11));
  CHECK_THROWS_AS(SimulatedFarm(0, SimulatedFarm::MeasureFunction([](auto) { return std::vector<Measurement>{}; })),
                  invalid_argument_error);
}

TEST_CASE("a context on several workers submits, waits and keeps to the count budget", "[search]") {
  SearchContext ctx(test::synthetic_space(), Candidate{}, farm_of(3), Budget{4, 0});
  const auto& space = ctx.space();
  CHECK(ctx.workers() == 3);
  CHECK(ctx.free_workers() == 3);
  const auto a = space.make_config({8, 2, 1}), b = space.make_config({4, 2, 1}), c = space.make_config({2, 2, 1});
  CHECK(ctx.submit(a) == SearchContext::Submitted::started);
  CHECK(ctx.submit(a) == SearchContext::Submitted::known);  // in flight: not measured twice
  CHECK(ctx.seen(a));
  CHECK(ctx.lookup(a) == nullptr);
  CHECK(ctx.submit(space.make_config({32, 4, 1})) == SearchContext::Submitted::invalid);  // 32 * 4 > 64
  CHECK(ctx.submit(b) == SearchContext::Submitted::started);
  CHECK(ctx.submit(c) == SearchContext::Submitted::started);
  CHECK(ctx.free_workers() == 0);
  CHECK(ctx.remaining() == 1);
  CHECK_THROWS_WITH(ctx.evaluate(a), Catch::Contains("in flight"));
  auto landed = ctx.wait_any();  // c: 2 s
  REQUIRE(landed.size() == 1);
  CHECK(landed[0].config == c);
  CHECK(ctx.trace().entries().back().elapsed_s == Approx(2));  // the virtual clock
  CHECK(ctx.free_workers() == 1);
  CHECK(ctx.submit(space.make_config({1, 2, 1})) == SearchContext::Submitted::started);
  CHECK(ctx.free_workers() == 0);  // the budget's last measurement is in flight
  CHECK(ctx.submit(space.make_config({1, 1, 1})) == SearchContext::Submitted::no_budget);
  ctx.wait_all();
  CHECK(ctx.in_flight() == 0);
  CHECK(ctx.measurement_count() == 4);
  CHECK(ctx.exhausted());
  CHECK(ctx.lookup(a)->ok());
}

TEST_CASE("strategies on one simulated worker search exactly as on the plain benchmarker", "[search]") {
  // One worker is the sequential search: the asynchronous benchmarker's results come back in
  // submission order, so every strategy must ask for the same configurations.
  auto data = std::make_shared<const SpaceData>(test::synthetic_data());
  Candidate prototype;
  auto run = [&](auto benchmarker, auto strategy) {
    SearchContext ctx(data->space, prototype, std::move(benchmarker), Budget{25, 0});
    strategy.run(ctx);
    std::vector<std::string> keys;
    for (const auto& e : ctx.trace().entries()) keys.push_back(e.config.key());
    return keys;
  };
  const auto plain = [&] { return ReplayBenchmarker(data); };
  const auto farm = [&] { return SimulatedFarm(1, ReplayBenchmarker(data)); };
  CHECK(run(plain(), RandomSearch({.seed = 4})) == run(farm(), RandomSearch({.seed = 4})));
  CHECK(run(plain(), GeneticSearch({.seed = 4, .population_size = 6})) ==
        run(farm(), GeneticSearch({.seed = 4, .population_size = 6})));
}

TEST_CASE("strategies on several simulated workers never measure a configuration twice", "[search]") {
  auto data = std::make_shared<const SpaceData>(test::synthetic_data());
  for (std::size_t workers : {2, 5}) {
    INFO(workers << " workers");
    // The genetic search may stop early: on this 44-point space its neighbourhood is soon measured out.
    auto check = [&](auto strategy, std::size_t at_least) {
      SearchContext ctx(data->space, Candidate{}, SimulatedFarm(workers, ReplayBenchmarker(data)), Budget{30, 0});
      strategy.run(ctx);
      CHECK(ctx.in_flight() == 0);
      CHECK(ctx.measurement_count() >= at_least);
      CHECK(ctx.measurement_count() <= 30);
      std::set<std::string> keys;
      for (const auto& e : ctx.trace().entries()) CHECK(keys.insert(e.config.key()).second);
    };
    check(RandomSearch({.seed = 2}), 30);
    check(GeneticSearch({.seed = 2, .population_size = 8}), 20);
  }
}
