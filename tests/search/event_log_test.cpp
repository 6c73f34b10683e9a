// The event log: a replayed surrogate-filtered search with screening writes one JSON line per
// event, in order, each on disk when its event happens, measurements carrying the forecast made
// before them; the same seed gives the same lines (times aside); a path it cannot open is named.
#include "search/event_log.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
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
namespace fs = std::filesystem;

namespace {

std::vector<nlohmann::json> read_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<nlohmann::json> out;
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

// After each measurement, the file already ends with that measurement's line (and its fault
// line, for a failure).
struct FlushChecker {
  fs::path path;
  std::size_t checked = 0;
  void on_measured(const SearchMeasured& e) {
    auto lines = read_lines(path);
    REQUIRE_FALSE(lines.empty());
    if (lines.back()["event"] == "fault") {
      CHECK(lines.back()["index"] == e.index);
      lines.pop_back();
    }
    CHECK(lines.back()["event"] == "measured");
    CHECK(lines.back()["index"] == e.index);
    ++checked;
  }
};

std::vector<nlohmann::json> run_logged_search(const fs::path& path, std::uint64_t seed, FlushChecker* checker,
                                              const std::string& screen_reference = "incumbent_time") {
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("convolution_milo", "A100").string()));
  StrategySettings settings;
  settings.seed = seed;
  settings.options = {{"screen", "true"}, {"screen_reference", screen_reference}};
  SearchContext ctx(data->space, data->observations.front().candidate, ReplayBenchmarker(data), Budget{50});
  ctx.add_observer(EventLog(path.string(), {"surrogate seed " + std::to_string(seed)}));
  if (checker) ctx.add_observer(std::ref(*checker));
  auto strategy = make_strategy("surrogate", settings);
  strategy.run(ctx);
  ctx.finish();
  return read_lines(path);
}

}  // namespace

TEST_CASE("screening against the incumbent's forecast logs that forecast with each round's forecasts", "[search][data]") {
  const fs::path path = fs::temp_directory_path() / "gpuforecast_event_log_incumbent_test.jsonl";
  const auto lines = run_logged_search(path, 5, nullptr, "incumbent_forecast");
  std::size_t forecasts = 0;
  for (const auto& l : lines) {
    if (l["event"] != "forecasts") continue;
    INFO(l.dump());
    ++forecasts;
    REQUIRE(l.contains("incumbent_forecast_ms"));  // the model ranks only once something is measured
    CHECK(l["incumbent_forecast_ms"].get<double>() > 0);
  }
  CHECK(forecasts > 5);
  fs::remove(path);
}

TEST_CASE("a replayed search's event log holds every event in order, each written as it happens", "[search][data]") {
  const fs::path path = fs::temp_directory_path() / "gpuforecast_event_log_test.jsonl";
  FlushChecker checker{path};
  const auto lines = run_logged_search(path, 5, &checker);
  CHECK(checker.checked == 50);
  REQUIRE(lines.size() > 50);
  CHECK(lines.front()["event"] == "begin");
  CHECK(lines.front()["kernel"] == "convolution_milo");
  CHECK(lines.front()["budget"]["measurements"] == 50);
  CHECK(lines.back()["event"] == "end");
  CHECK(lines.back()["measurements"] == 50);
  std::size_t measured = 0, with_forecast = 0, forecasts = 0, screened = 0;
  std::size_t considered = 0, screened_out = 0, outside = 0;
  double best = INFINITY;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    INFO("line " << i + 1 << ": " << l.dump());
    CHECK(l["v"] == event_log_version);
    CHECK(l["seq"] == i);
    CHECK(l["run"] == "surrogate seed 5");
    const std::string event = l["event"];
    if (event == "forecasts") {
      ++forecasts;
      CHECK(l["answered"].get<std::size_t>() + l["deferred"].get<std::size_t>() == l["proposed"].get<std::size_t>());
    } else if (event == "screened") {
      ++screened;
      considered += l["proposed"].get<std::size_t>();
      screened_out += l["skipped"].get<std::size_t>();
    } else if (event == "measured") {
      ++measured;
      CHECK(l["index"] == measured);
      CHECK(l["config"].size() == 10);
      if (l["status"] == "ok") best = std::min(best, l["time_ms"].get<double>());
      CHECK(l["best_ms"].get<double>() == best);
      if (!l["forecast"].is_null()) {
        ++with_forecast;
        const auto& f = l["forecast"];
        const double t = l["time_ms"], fc = f["forecast_ms"];
        CHECK(f["relative_error"].get<double>() == Approx(std::abs(fc - t) / t));
        CHECK(f["inside_interval"] == (t >= f["interval_ms"][0].get<double>() && t <= f["interval_ms"][1].get<double>()));
        outside += f["inside_interval"].get<bool>() ? 0 : 1;
      }
    }
  }
  CHECK(measured == 50);
  CHECK(forecasts > 5);
  CHECK(screened == forecasts);  // screening on: every ranked round is screened too
  // Screening against the incumbent's time asks the model nothing about the incumbent.
  for (const auto& l : lines) CHECK_FALSE(l.contains("incumbent_forecast_ms"));
  // The initial design is measured without a forecast; everything the model chose has one.
  CHECK(with_forecast >= 30);
  // The end line sums up the screening and the intervals of what was measured.
  CHECK(lines.back()["screening"]["considered"] == considered);
  CHECK(lines.back()["screening"]["screened_out"] == screened_out);
  CHECK(lines.back()["intervals"]["measured"] == with_forecast);
  CHECK(lines.back()["intervals"]["outside"] == outside);
}

TEST_CASE("the same seed writes the same event log, times aside", "[search][data]") {
  const fs::path a = fs::temp_directory_path() / "gpuforecast_event_log_a.jsonl";
  const fs::path b = fs::temp_directory_path() / "gpuforecast_event_log_b.jsonl";
  auto la = run_logged_search(a, 9, nullptr), lb = run_logged_search(b, 9, nullptr);
  REQUIRE(la.size() == lb.size());
  for (std::size_t i = 0; i < la.size(); ++i) {
    for (const char* wall_clock : {"t", "decide_s"}) {
      la[i].erase(wall_clock);
      lb[i].erase(wall_clock);
    }
    CHECK(la[i] == lb[i]);
  }
}

TEST_CASE("an event log it cannot open is named when the search begins", "[search]") {
  EventLog log("/nonexistent-folder/run.jsonl");
  TuningSpace space;
  Candidate prototype;
  CHECK_THROWS_WITH(log.on_begin(SearchBegin{space, prototype, Budget{}}),
                    Contains("/nonexistent-folder/run.jsonl") && Contains("cannot open the event log"));
}

TEST_CASE("an anomaly from outside the log's monitor (the GPU's health) is written as an anomaly line", "[search][data]") {
  const fs::path path = fs::temp_directory_path() / "gpuforecast_event_log_outside.jsonl";
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("convolution_milo", "A100").string()));
  EventLog log(path.string(), {"live"});
  log.on_anomaly({1, "gpu_throttle", {}, 4, 1, "not begun: ignored"});
  const Candidate& prototype = data->observations.front().candidate;
  log.on_begin(SearchBegin{data->space, prototype, Budget{1}});
  log.on_anomaly({3, "gpu_xid", prototype.config, 79, 1, "Xid 79 reported by the driver"});
  Trace trace;
  log.on_end(SearchEnd{trace});
  const auto lines = read_lines(path);
  REQUIRE(lines.size() == 3);
  CHECK(lines[1]["event"] == "anomaly");
  CHECK(lines[1]["kind"] == "gpu_xid");
  CHECK(lines[1]["index"] == 3);
  CHECK(lines[1]["statistic"] == 79);
  CHECK(lines[1]["config"].size() == prototype.config.size());
  CHECK(lines[2]["event"] == "end");
}

TEST_CASE("every failed measurement is followed by its fault line, and a stopped search says why", "[search][data]") {
  // convolution RTX 2080 Ti in its T1 space holds configurations that failed to compile or run.
  auto data = std::make_shared<const SpaceData>(load_replay_space(test::cache_file("convolution", "RTX_2080_Ti").string()));
  const fs::path path = fs::temp_directory_path() / "gpuforecast_event_log_faults.jsonl";
  StrategySettings settings;
  settings.seed = 4;
  SearchContext ctx(data->space, data->observations.front().candidate, ReplayBenchmarker(data), Budget{150});
  ctx.add_observer(EventLog(path.string(), {.run = "random seed 4", .stop_reason = [] { return std::string("asked to"); }}));
  struct StopAt {
    std::size_t seen = 0;
    bool on_measured(const SearchMeasured&) { return ++seen == 120; }
  };
  ctx.add_observer(StopAt{});
  auto strategy = make_strategy("random", settings);
  strategy.run(ctx);
  ctx.finish();
  const auto lines = read_lines(path);
  std::size_t faults = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    INFO("line " << i + 1 << ": " << l.dump());
    CHECK(l["v"] == 2);
    if (l["event"] != "measured") continue;
    const std::string status = l["status"];
    const bool fault = status != "ok" && status != "invalid";
    REQUIRE(i + 1 < lines.size());
    CHECK((lines[i + 1]["event"] == "fault") == fault);
    if (!fault) continue;
    ++faults;
    const auto& f = lines[i + 1];
    CHECK(f["index"] == l["index"]);
    CHECK(f["config"] == l["config"]);
    CHECK(f["kind"] == (status == "compile_failed" ? "compile_error" : status == "timeout" ? "hang" : "crash"));
    CHECK_FALSE(f["detail"].get<std::string>().empty());
  }
  CHECK(faults > 0);
  CHECK(lines.back()["event"] == "end");
  CHECK(lines.back()["measurements"] == 120);
  CHECK(lines.back()["stopped"] == true);
  CHECK(lines.back()["reason"] == "asked to");
}
