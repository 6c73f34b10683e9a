// The surrogate-filtered search's own behaviour: local moves around the incumbent, the initial
// designs (spread out from scratch; forecast best and far apart with a pre-trained model),
// optimism over the whole space.
#include "search/surrogate_filtered.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/run/strategy_registry.hpp"
#include "compose/model_impl.hpp"
#include "compose/search_model.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "support/data.hpp"
#include "synthetic.hpp"

using namespace gpuforecast;

namespace {

std::size_t differing(const Config& a, const Config& b) {
  std::size_t d = 0;
  for (std::size_t p = 0; p < a.size(); ++p) d += a[p] == b[p] ? 0 : 1;
  return d;
}

// Ranks the synthetic space backwards: the slowest forecast fastest.
struct InvertedPredictor {
  std::vector<Decision> decide(std::span<const Candidate> c) {
    std::vector<Decision> out;
    for (const auto& k : c) out.push_back(test::confident_decision(100.0 / test::synthetic_time(k.config)));
    return out;
  }
};

// Smallest number of differing parameters between any two of `configs`.
std::size_t min_pairwise(const std::vector<Config>& configs) {
  std::size_t d = std::numeric_limits<std::size_t>::max();
  for (std::size_t i = 0; i < configs.size(); ++i)
    for (std::size_t j = i + 1; j < configs.size(); ++j) d = std::min(d, differing(configs[i], configs[j]));
  return d;
}

std::vector<Config> first_configs(const Trace& trace, std::size_t n) {
  std::vector<Config> out;
  for (std::size_t i = 0; i < std::min(n, trace.size()); ++i) out.push_back(trace.entries()[i].config);
  return out;
}

// Unsure in proportion to x (spread spread_per_x * x) and, with slowdown > 0, forecasting
// longer runtimes for larger x (2 ms times exp(slowdown * x / 32)). Without slowdown the lower
// confidence bound prefers the largest x whenever there is optimism; with slowdown 0.075 and
// spread 0.1 at x = 32, optimism 1 still ranks the largest x first and optimism 0.5 the smallest.
struct UnsureAboutLargeX {
  double spread_per_x = 0.1;
  double slowdown = 0;
  std::vector<Decision> decide(std::span<const Candidate> c) {
    std::vector<Decision> out;
    for (const auto& k : c) {
      const double x = k.config.at("x").as_double();
      auto d = test::confident_decision(2.0 * std::exp(slowdown * x / 32.0));
      d.forecast.spread = spread_per_x * x;
      out.push_back(d);
    }
    return out;
  }
};

// synthetic_time squeezed into a 1% band: runtimes that barely differ.
double narrow_time(const Config& c) { return 1.0 + 0.001 * test::synthetic_time(c); }

double log_sd(const std::vector<TraceEntry>& entries) {
  double mean = 0, sq = 0;
  for (const auto& e : entries) mean += std::log(e.measurement.median_ms) / static_cast<double>(entries.size());
  for (const auto& e : entries) sq += std::pow(std::log(e.measurement.median_ms) - mean, 2);
  return std::sqrt(sq / static_cast<double>(entries.size() - 1));
}

}  // namespace

TEST_CASE("optimism is lowered on a space whose measured runtimes barely differ", "[search]") {
  SurrogateFilteredOptions o;
  o.seed = 11;
  o.initial.samples = 4;
  o.measurements_per_round = 1;
  o.selection.local_moves = 0;
  o.proposals.random_fraction = 0;
  o.proposals.whole_space_limit = 1000;
  o.selection.batch_distance = 0;
  o.acquisition.optimism = 1;
  o.acquisition.optimism_growth = 0;
  // The default reference spread and floor (0.3, 0.5): noise-aware optimism is on from scratch.
  REQUIRE(o.acquisition.optimism_reference_spread > 0);
  auto first_ranked_x = [&](auto bench, const SurrogateFilteredOptions& opts, double& initial_sd) {
    SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{5, 0});
    SurrogateFilteredSearch(UnsureAboutLargeX{0.1 / 32.0, 0.075}, opts).run(ctx);
    const auto& e = ctx.trace().entries();
    REQUIRE(e.size() == 5);
    initial_sd = log_sd({e.begin(), e.begin() + 4});
    return e[4].config.at("x").as_int();
  };
  double sd = 0;
  // Runtimes 1 - 12 ms: the initial design spreads wider than the reference, full optimism.
  CHECK(first_ranked_x(test::CountingBenchmarker{}, o, sd) == 32);
  CHECK(sd > o.acquisition.optimism_reference_spread);
  // The same order within 1%: the optimism falls to its floor and the forecast median decides.
  CHECK(first_ranked_x(test::CountingBenchmarker{.time = narrow_time}, o, sd) == 1);
  CHECK(sd < 0.2);
  auto fixed = o;
  fixed.acquisition.optimism_reference_spread = 0;  // off: the optimism stays 1 whatever was measured
  CHECK(first_ranked_x(test::CountingBenchmarker{.time = narrow_time}, fixed, sd) == 32);
}

TEST_CASE("optimism ranks by the lower confidence bound over the whole space", "[search]") {
  for (double optimism : {0.0, 1.0}) {
    test::CountingBenchmarker bench;
    SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{6, 0});
    SurrogateFilteredOptions o;
    o.seed = 5;
    o.initial.samples = 1;
    o.measurements_per_round = 5;
    o.selection.exploration_fraction = 0;
    o.selection.local_moves = 0;
    o.proposals.random_fraction = 0;  // proposals: bred ones and, below, the whole space
    o.proposals.parents = 1;
    o.acquisition.optimism = optimism;
    o.proposals.whole_space_limit = 1000;
    o.selection.batch_distance = 0;  // the five picks may differ in one parameter only
    SurrogateFilteredSearch(UnsureAboutLargeX{}, o).run(ctx);
    const auto& e = ctx.trace().entries();
    REQUIRE(e.size() == 6);
    std::size_t largest_x = 0;
    for (std::size_t i = 1; i < e.size(); ++i) largest_x += e[i].config.at("x").as_int() == 32 ? 1 : 0;
    INFO("optimism = " << optimism << ", first: " << e[0].config.key());
    // x = 32 allows y in {1, 2}, z in {0, 1}: four configurations, all far from one random start
    // in most seeds. Optimism measures them first, wherever they are; without it the ties keep
    // the proposal order (bred ones first, near the start).
    if (optimism > 0) {
      CHECK(largest_x == std::min<std::size_t>(4, 4 - (e[0].config.at("x").as_int() == 32 ? 1 : 0)));
    } else {
      CHECK(largest_x < 4);
    }
  }
}

TEST_CASE("every round measures a neighbour of the incumbent, however the model ranks it", "[search]") {
  for (std::size_t local : {0, 1}) {
    test::CountingBenchmarker bench;
    SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{13, 0});
    SurrogateFilteredOptions o;
    o.seed = 3;
    o.initial.samples = 1;
    o.measurements_per_round = 3;
    o.selection.exploration_fraction = 0;
    o.selection.local_moves = local;
    SurrogateFilteredSearch(InvertedPredictor{}, o).run(ctx);
    const auto& e = ctx.trace().entries();
    REQUIRE(e.size() == 13);
    std::size_t rounds_with_neighbour = 0;
    for (std::size_t r = 1; r < e.size(); r += 3) {
      // The best measured before round r.
      std::size_t best = 0;
      for (std::size_t i = 1; i < r; ++i)
        if (e[i].measurement.median_ms < e[best].measurement.median_ms) best = i;
      bool neighbour = false;
      for (std::size_t i = r; i < r + 3; ++i) neighbour |= differing(e[i].config, e[best].config) == 1;
      rounds_with_neighbour += neighbour ? 1 : 0;
    }
    INFO("local_moves = " << local);
    if (local == 0) {
      CHECK(rounds_with_neighbour < 4);  // the inverted ranking alone wanders off
    } else {
      CHECK(rounds_with_neighbour == 4);
      // Walking the neighbourhoods finds a better configuration than the inverted ranking alone.
      CHECK(ctx.best()->best_ms < e.front().measurement.median_ms);
    }
  }
}

TEST_CASE("the initial design from scratch is spread out", "[search][data]") {
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("convolution_milo", "A4000").string()));
  Plan e;
  e.replay().data = data;
  e.budget = 10;
  e.seeds = 5;
  e.strategy = "random";
  const auto random = gpuforecast::run(e);
  e.strategy = "surrogate";
  const auto spread = gpuforecast::run(e);
  double random_sum = 0, spread_sum = 0;
  for (std::size_t s = 0; s < 5; ++s) {
    random_sum += static_cast<double>(min_pairwise(first_configs(random.runs[s].trace, 10)));
    spread_sum += static_cast<double>(min_pairwise(first_configs(spread.runs[s].trace, 10)));
  }
  CHECK(spread_sum > random_sum);
  // Same seed, same design.
  e.seeds = 1;
  const auto again = gpuforecast::run(e);
  CHECK(first_configs(again.runs[0].trace, 10) == first_configs(spread.runs[0].trace, 10));
}

TEST_CASE("with a pre-trained model the search starts from its best forecasts, far apart", "[search][data]") {
  // Pre-trained on the other two NVIDIA devices of the kernel (as search_efficiency does).
  std::vector<Observation> train;
  for (const char* device : {"A4000", "A6000"}) {
    auto d = load_replay_space(test::cache_file("convolution_milo", device).string());
    train.insert(train.end(), d.observations.begin(), d.observations.end());
  }
  AnySurrogate base = make_surrogate("ridge", 1);
  base.fit(train);
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("convolution_milo", "A100").string()));
  Plan e;
  e.replay().data = data;
  e.strategy = "surrogate";
  e.budget = 20;
  e.seeds = 2;
  e.settings.model_factory = [&base] { return make_search_model({.pretrained = make_model(base, std::nullopt), .online_surrogate = "knn", .seed = 1}); };
  const auto result = gpuforecast::run(e);
  for (const auto& run : result.runs) {
    const auto design = first_configs(run.trace, 15);
    REQUIRE(design.size() == 15);
    CHECK(min_pairwise(design) >= 3);
    // The first measurement is the base's best forecast over (nearly) the whole space.
    std::vector<Candidate> all;
    for (const auto& o : data->observations) all.push_back(o.candidate);
    const auto f = base.predict(all);
    double best = std::numeric_limits<double>::infinity();
    for (const auto& x : f) best = std::min(best, x.median_ms);
    std::vector<Candidate> first{all.front()};
    first.front().config = design.front();
    CHECK(base.predict(first).front().median_ms <= best * 1.5);
  }
}

TEST_CASE("the surrogate strategy's presets are named option sets that its table reads back", "[search]") {
  const auto& table = surrogate_filtered_options_table();
  for (const auto& name : surrogate_filtered_preset_names()) {
    INFO("preset " << name);
    const auto preset = surrogate_filtered_preset(name);
    std::map<std::string, std::string> text;
    for (const auto& [k, v] : table.write(preset)) text[k] = v;
    CHECK(table.write(table.parse(text)) == table.write(preset));
  }
  // The documented defaults are the defaults: "from-scratch" is the default-constructed struct.
  CHECK(table.write(surrogate_filtered_preset("from-scratch")) == table.write(SurrogateFilteredOptions{}));
  CHECK(table.write(surrogate_filtered_preset("pre-trained")) != table.write(SurrogateFilteredOptions{}));
  CHECK_THROWS_WITH(surrogate_filtered_preset("greedy"), Catch::Contains("presets: from-scratch, pre-trained"));
  CHECK_THROWS_WITH(table.parse({{"optimism", "-1"}}), Catch::Contains("option optimism=-1: must be in >= 0"));
}

namespace {

// Records each screening and the configurations measured after it.
struct ScreeningRecorder {
  std::vector<std::vector<std::string>> skipped;  // per screened round, the keys screened out
  std::vector<std::size_t> measured_before;       // measurements when that round was screened
  std::vector<std::string> measured;              // every measured key, in order
  std::size_t certified = 0;
  void on_screened(const SearchScreened& e) {
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < e.proposed.size(); ++i)
      if (e.skipped[i]) keys.push_back(e.proposed[i].key());
    REQUIRE(e.decisions.size() == e.proposed.size());
    if (e.rule.certified) ++certified;
    skipped.push_back(std::move(keys));
    measured_before.push_back(measured.size());
  }
  void on_measured(const SearchMeasured& e) { measured.push_back(e.config.key()); }
};

}  // namespace

TEST_CASE("screening drops the certified proposals before the round is chosen and reports each round",
          "[search][data]") {
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("convolution_milo", "A4000").string()));
  // Offline calibration: a seeded 30% of the space, as a calibration file of the device.
  auto sample = std::make_shared<std::vector<Observation>>();
  std::mt19937_64 rng(3);
  for (const auto& o : data->observations)
    if (o.measurement.ok() && std::uniform_real_distribution<>(0, 1)(rng) < 0.3) sample->push_back(o);
  StrategySettings settings;
  settings.seed = 4;
  settings.options = {{"screen", "true"}, {"screen_alpha", "0.1"}, {"screen_delta", "0.1"}};
  settings.screening_calibration = sample;
  const auto run = [&] {
    Candidate prototype = data->observations.front().candidate;
    SearchContext ctx(data->space, prototype, ReplayBenchmarker(data), Budget{40});
    ScreeningRecorder recorder;
    ctx.add_observer(std::ref(recorder));
    auto strategy = make_strategy("surrogate", settings);
    strategy.run(ctx);
    ctx.finish();
    return recorder;
  };
  const auto r = run();
  REQUIRE_FALSE(r.skipped.empty());
  CHECK(r.certified > 0);
  std::size_t skipped = 0;
  for (std::size_t round = 0; round < r.skipped.size(); ++round) {
    skipped += r.skipped[round].size();
    // The round chosen after a screening measures none of what it screened out.
    const std::size_t end = round + 1 < r.measured_before.size() ? r.measured_before[round + 1] : r.measured.size();
    for (std::size_t m = r.measured_before[round]; m < end; ++m) {
      INFO("round " << round << " measured " << r.measured[m]);
      CHECK(std::find(r.skipped[round].begin(), r.skipped[round].end(), r.measured[m]) == r.skipped[round].end());
    }
  }
  CHECK(skipped > 0);
  CHECK(r.measured.size() == 40);  // screening never costs the budget
  // Same seed, same screening.
  const auto again = run();
  CHECK(again.measured == r.measured);
  CHECK(again.skipped == r.skipped);

  // Prequential, on the search's own forecasts: the replay's judge sees every screened round.
  Plan e;
  e.replay().data = data;
  e.strategy = "surrogate";
  e.budget = 40;
  e.seeds = 2;
  e.settings.options = {{"screen", "true"}};
  const auto result = gpuforecast::run(e);
  for (const auto& run_result : result.runs) {
    CHECK(run_result.screened_rounds > 0);
    CHECK(run_result.screening.considered > 0);
    CHECK(run_result.screening.improvements_skipped <= run_result.screening.improvements);
  }
  const auto summary = result.screening_summary();
  CHECK(summary.runs == 2);
  CHECK(summary.considered_per_measurement >= 4);
}

TEST_CASE("screening options are checked when the strategy is made", "[search]") {
  StrategySettings settings;
  settings.options = {{"screen", "true"}, {"screen_alpha", "0"}};
  CHECK_THROWS_WITH(make_strategy("surrogate", settings), Catch::Matchers::Contains("alpha"));
  settings.options = {{"screen", "true"}, {"screen_calibration", "/nonexistent/calibration.json"}};
  CHECK_THROWS_WITH(make_strategy("surrogate", settings), Catch::Matchers::Contains("/nonexistent/calibration.json"));
}

TEST_CASE("a stalled search moves next to the best configuration of a second basin, however the model ranks it",
          "[search]") {
  const auto space = test::synthetic_space();
  test::CountingBenchmarker bench;
  SearchContext ctx(space, Candidate{}, bench, Budget{20, 0});
  const auto make = [&](int x, int y, int z) { return Config(space.names(), {x, y, z}); };
  const Config best = make(8, 2, 1), near = make(8, 3, 1), far = make(1, 4, 0);
  for (const auto& c : {best, near, far}) (void)ctx.evaluate(c);

  ProposalOptions po;
  po.basin_distance = 3;  // far differs from best in all three parameters, near in one
  ProposalGenerator generator(space, po);
  std::mt19937_64 rng(1);
  const Proposals proposals = generator.propose(ctx, 3, rng);
  REQUIRE_FALSE(proposals.second_basin.empty());
  std::vector<Config> of_far;
  for (const auto& c : proposals.configs)
    if (differing(c, far) == 1) of_far.push_back(c);
  REQUIRE_FALSE(of_far.empty());

  // The model knows the runtimes: left to it, every pick would be next to the best.
  std::vector<Decision> decisions;
  for (const auto& c : proposals.configs) decisions.push_back(test::confident_decision(test::synthetic_time(c)));
  Trace initial;
  const OptimismSchedule optimism(AcquisitionOptions{}, initial);
  for (std::size_t stalled : {0, 3}) {
    BatchSelectionOptions o;
    o.local_moves = 0;
    o.basin_moves = 1;
    o.basin_after = 3;
    RoundState state;
    state.measurements = 3;
    state.stagnant_rounds = stalled;
    std::mt19937_64 pick_rng(2);
    const auto chosen = select_batch(space, proposals, decisions, state, optimism, AcquisitionOptions{}, o, pick_rng);
    REQUIRE(chosen.size() == 3);
    std::size_t next_to_far = 0;
    for (const auto& c : chosen) next_to_far += differing(c, far) == 1 ? 1 : 0;
    INFO("stalled " << stalled << " rounds; first pick " << chosen.front().to_string());
    if (stalled < 3) {
      CHECK(next_to_far == 0);
    } else {
      // One pick, the first: the forecast best neighbour of the second basin's centre.
      CHECK(next_to_far == 1);
      CHECK(differing(chosen.front(), far) == 1);
      for (const auto& c : of_far) CHECK(test::synthetic_time(chosen.front()) <= test::synthetic_time(c));
    }
  }
  po.basin_distance = 0;
  CHECK(ProposalGenerator(space, po).propose(ctx, 3, rng).second_basin.empty());
}
