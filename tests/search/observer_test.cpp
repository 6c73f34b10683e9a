#include "gpuforecast/search/observer.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "search/random_search.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "synthetic.hpp"

using namespace gpuforecast;

namespace {

// Writes down every event it sees.
struct Recorder {
  std::vector<std::string> events;
  void on_begin(const SearchBegin& e) { events.push_back("begin " + std::to_string(e.budget.max_measurements)); }
  void on_measured(const SearchMeasured& e) {
    CHECK(e.trace.size() == e.index);
    CHECK(e.trace.entries().back().config == e.config);
    events.push_back("measured " + std::to_string(e.index) + " " + e.config.key());
  }
  void on_round(const SearchRound& e) {
    CHECK(e.configs.size() == e.measurements.size());
    events.push_back("round " + std::to_string(e.round) + " of " + std::to_string(e.configs.size()));
  }
  void on_end(const SearchEnd& e) { events.push_back("end " + std::to_string(e.trace.size()) + (e.stopped ? " stopped" : "")); }
};

// Only one of the four: the others are not required.
struct CountMeasured {
  int* count;
  void on_measured(const SearchMeasured&) { ++*count; }
};

// Asks the search to stop once it has seen `after` measurements.
struct StopAfter {
  std::size_t after;
  bool on_measured(const SearchMeasured& e) { return e.index >= after; }
};

struct StopAtRound {
  std::size_t round;
  bool on_round(const SearchRound& e) { return e.round >= round; }
};

struct NotAnObserver {
  void on_start() {}
};

static_assert(SearchObserver<Recorder>);
static_assert(SearchObserver<CountMeasured>);
static_assert(ObservesMeasured<StopAfter> && !ObservesBegin<StopAfter> && !ObservesEnd<StopAfter>);
static_assert(!SearchObserver<NotAnObserver>);
static_assert(!SearchObserver<int>);

}  // namespace

TEST_CASE("observers see begin, each measurement as it lands, each round, and end, in order", "[search][observer]") {
  test::CountingBenchmarker bench;
  SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{3, 0});
  Recorder recorder;
  int count = 0;
  ctx.add_observer(std::ref(recorder));  // a reference: the test reads it afterwards
  ctx.add_observer(CountMeasured{&count});
  const auto& space = ctx.space();
  const auto a = space.make_config({8, 2, 1}), b = space.make_config({4, 2, 1}), c = space.make_config({2, 2, 1});
  const auto violating = space.make_config({32, 4, 1});
  (void)ctx.evaluate(std::vector<Config>{a, violating, b, a});
  (void)ctx.evaluate(a);  // seen: a round without a measurement
  (void)ctx.evaluate(std::vector<Config>{c, space.make_config({1, 2, 1})});  // the budget ends inside
  ctx.finish();
  ctx.finish();  // once only
  CHECK(recorder.events == std::vector<std::string>{"begin 3", "measured 1 " + a.key(), "measured 2 " + b.key(),
                                                    "round 1 of 4", "round 2 of 1", "measured 3 " + c.key(),
                                                    "round 3 of 2", "end 3"});
  CHECK(count == 3);
}

TEST_CASE("a search without measurements still begins and ends", "[search][observer]") {
  test::CountingBenchmarker bench;
  SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{3, 0});
  Recorder recorder;
  ctx.add_observer(std::ref(recorder));
  ctx.finish();
  CHECK(recorder.events == std::vector<std::string>{"begin 3", "end 0"});
}

TEST_CASE("an observer that answers true from on_measured stops the search", "[search][observer]") {
  test::CountingBenchmarker bench;
  auto calls = bench.calls;
  // One candidate per benchmarker call, so that the stop lands between two measurements.
  SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{20, 0}, SearchContextOptions{.max_batch = 1});
  Recorder recorder;
  ctx.add_observer(StopAfter{5});
  ctx.add_observer(std::ref(recorder));
  RandomSearch(RandomSearchOptions{.seed = 7}).run(ctx);
  ctx.finish();
  CHECK(ctx.exhausted());
  CHECK(ctx.stop_requested());
  CHECK(ctx.remaining() == 0);
  CHECK(ctx.measurement_count() == 5);
  CHECK(*calls == 5);
  CHECK(recorder.events.back() == "end 5 stopped");
  // What the strategy asks for afterwards is not measured, and says why.
  auto m = ctx.evaluate(ctx.space().make_config({16, 4, 0}));
  if (!ctx.seen(ctx.space().make_config({16, 4, 0}))) CHECK_THAT(m.reason, Catch::Contains("stopped"));
  CHECK(*calls == 5);
}

TEST_CASE("an observer that answers true from on_round stops the search after that batch", "[search][observer]") {
  test::CountingBenchmarker bench;
  SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{0, 0});
  ctx.add_observer(StopAtRound{2});
  RandomSearch(RandomSearchOptions{.seed = 3, .batch = 4}).run(ctx);
  CHECK(ctx.stop_requested());
  CHECK(ctx.measurement_count() > 0);
  CHECK(ctx.measurement_count() <= 8);  // two rounds of four
}

TEST_CASE("max_batch splits what the strategy hands over without changing the result", "[search][observer]") {
  // The replay draws one stored run per measurement from its seed: the same draws in the same
  // order, whether the batch goes to it whole or one by one.
  auto data = std::make_shared<const SpaceData>(test::synthetic_data());
  auto run = [&](std::size_t max_batch) {
    ReplayBenchmarker bench(data, ReplayOptions{.seed = 11});
    SearchContext ctx(data->space, Candidate{}, bench, Budget{15, 0}, SearchContextOptions{.max_batch = max_batch});
    RandomSearch(RandomSearchOptions{.seed = 5, .batch = 6}).run(ctx);
    std::vector<std::pair<std::string, double>> out;
    for (const auto& e : ctx.trace().entries()) out.emplace_back(e.config.key(), e.measurement.median_ms);
    return out;
  };
  CHECK(run(0) == run(1));
}

TEST_CASE("an anomaly reported to the context reaches every observer that takes one, in order", "[search][observer]") {
  // A GPU watch raises anomalies from inside on_measured; the event log, the monitor and any
  // other observer with on_anomaly see each one, beside the measurement it was raised at.
  struct Watch {
    SearchContext* ctx;
    void on_measured(const SearchMeasured& e) {
      if (e.index == 2) ctx->report_anomaly(SearchAnomaly{e.index, "gpu_throttle", e.config, 1.0, 1.0, "thermal"});
    }
  };
  struct Takes {
    std::string name;
    std::vector<std::string>* seen;
    void on_anomaly(const SearchAnomaly& a) { seen->push_back(name + " " + a.kind + " at " + std::to_string(a.index)); }
  };
  test::CountingBenchmarker bench;
  SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{3, 0});
  std::vector<std::string> seen;
  Recorder recorder;  // takes no anomalies: unaffected
  ctx.add_observer(Takes{"log", &seen});
  ctx.add_observer(std::ref(recorder));
  ctx.add_observer(Watch{&ctx});
  ctx.add_observer(Takes{"monitor", &seen});
  const auto& space = ctx.space();
  (void)ctx.evaluate(std::vector<Config>{space.make_config({8, 2, 1}), space.make_config({4, 2, 1}), space.make_config({2, 2, 1})});
  ctx.finish();
  CHECK(seen == std::vector<std::string>{"log gpu_throttle at 2", "monitor gpu_throttle at 2"});
  CHECK(recorder.events.back() == "end 3");
}

TEST_CASE("a worker lost on another thread reaches the observers on the search's, before the next results",
          "[search][observer]") {
  struct Takes {
    std::vector<std::string>* seen;
    void on_measured(const SearchMeasured& e) { seen->push_back("measured " + std::to_string(e.index)); }
    void on_worker_lost(const SearchWorkerLost& l) {
      seen->push_back("lost rank " + std::to_string(l.worker) + " at " + std::to_string(l.index) + " " +
                      std::string(to_string(l.went)));
    }
  };
  test::CountingBenchmarker bench;
  SearchContext ctx(test::synthetic_space(), Candidate{}, bench, Budget{3, 0});
  std::vector<std::string> seen;
  ctx.add_observer(Takes{&seen});
  const auto& space = ctx.space();
  (void)ctx.evaluate(space.make_config({8, 2, 1}));
  // Reported from the back end's thread while the search waits: nothing is delivered there.
  std::thread([&] { ctx.report_worker_lost(SearchWorkerLost{0, 2, "H200", "no heartbeat", space.make_config({4, 2, 1}), HeldWork::requeued}); })
      .join();
  CHECK(seen == std::vector<std::string>{"measured 1"});
  (void)ctx.evaluate(space.make_config({4, 2, 1}));
  std::thread([&] { ctx.report_worker_lost(SearchWorkerLost{0, 3, "H200", "no hello", std::nullopt, HeldWork::none}); }).join();
  ctx.finish();  // what is left is delivered before the end
  CHECK(seen == std::vector<std::string>{"measured 1", "lost rank 2 at 1 requeued", "measured 2", "lost rank 3 at 2 "});
}
