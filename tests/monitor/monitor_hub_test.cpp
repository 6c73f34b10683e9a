// The monitor: a replayed search's events become Prometheus metrics and the dashboard's state
// that agree with the trace; the realised risk and interval misses are counted as defined; the
// server answers /metrics, /api/state and the page on a free port; the static report carries its
// state safely; a port already taken is named.
#include "monitor/monitor_hub.hpp"

#include <catch2/catch.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <algorithm>
#include <string>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/runtime/replay_benchmarker.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/search/search_context.hpp"
#include "gpuforecast/run/strategy_registry.hpp"
#include "monitor/dashboard_page.hpp"
#include "monitor/dashboard_server.hpp"
#include "support/data.hpp"

using namespace gpuforecast;
using namespace gpuforecast::detail::monitor;
using Catch::Matchers::Contains;

namespace {

// Sample lines of the exposition, "name{labels}" -> value (the value follows the last space).
std::map<std::string, double> samples(const std::string& text) {
  std::map<std::string, double> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string l = text.substr(start, end - start);
    start = end + 1;
    const auto space = l.rfind(' ');
    if (l.empty() || l[0] == '#' || space == std::string::npos) continue;
    out[l.substr(0, space)] = std::stod(l.substr(space + 1));
  }
  return out;
}

double sum_of(const std::map<std::string, double>& s, const std::string& prefix) {
  double total = 0;
  for (const auto& [k, v] : s)
    if (k.rfind(prefix, 0) == 0) total += v;
  return total;
}

std::shared_ptr<const SpaceData> milo_a100() {
  return std::make_shared<const SpaceData>(load_replay_space(test::cache_file("convolution_milo", "A100").string()));
}

}  // namespace

TEST_CASE("a replayed search's metrics and dashboard state agree with its trace", "[monitor][data]") {
  auto data = milo_a100();
  MonitorHub hub;
  StrategySettings settings;
  settings.seed = 3;
  SearchContext ctx(data->space, data->observations.front().candidate, ReplayBenchmarker(data), Budget{60});
  ctx.add_observer(hub.observer("surrogate seed 3"));
  auto strategy = make_strategy("surrogate", settings);
  strategy.run(ctx);
  ctx.finish();
  hub.finish();
  const Trace& trace = ctx.trace();
  REQUIRE(trace.size() == 60);

  const auto s = samples(hub.metrics_text());
  CHECK(sum_of(s, "gpuforecast_measurements_total{") == 60);
  std::size_t failed = 0;
  for (const auto& e : trace.entries()) failed += e.measurement.ok() ? 0 : 1;
  CHECK(s.at(R"(gpuforecast_measurements_total{run="surrogate seed 3",status="ok"})") == static_cast<double>(60 - failed));
  CHECK(s.at(R"(gpuforecast_best_time_seconds{run="surrogate seed 3"})") ==
        Approx(trace.best()->measurement.median_ms / 1000.0));
  CHECK(s.at(R"(gpuforecast_run_finished{run="surrogate seed 3"})") == 1);
  // An online model has no calibration: it decides on thousands of proposals, answers none.
  CHECK(s.at(R"(gpuforecast_forecasts_total{decision="deferred",run="surrogate seed 3"})") > 1000);
  CHECK(s.at(R"(gpuforecast_forecasts_total{decision="answered",run="surrogate seed 3"})") == 0);
  CHECK(s.at(R"(gpuforecast_measurement_duration_seconds_count{run="surrogate seed 3"})") == 60);
  CHECK(s.at(R"(gpuforecast_forecast_round_duration_seconds_count{run="surrogate seed 3"})") > 0);
  CHECK(s.at("gpuforecast_answered_risk_alpha_ratio") == Approx(0.1));
  CHECK(s.count(R"(gpuforecast_answered_risk_ratio{run="surrogate seed 3"})") == 0);  // nothing answered: no series

  const auto state = nlohmann::json::parse(hub.state_json());
  CHECK(state["finished"] == true);
  REQUIRE(state["runs"].size() == 1);
  const auto& run = state["runs"][0];
  CHECK(run["kernel"] == "convolution_milo");
  CHECK(run["measured"].size() == 60);
  CHECK(run["incumbent"]["ms"].get<double>() == Approx(trace.best()->measurement.median_ms));
  CHECK(run["incumbent"]["i"] == trace.best()->index);
  CHECK_FALSE(run["rounds"].empty());
  std::size_t forecast_before = 0;
  for (const auto& m : run["measured"]) forecast_before += m.contains("forecast_ms") ? 1 : 0;
  CHECK(forecast_before > 20);  // every measurement after the initial design was forecast first
  CHECK(run["interval_miss"].is_number());
  CHECK(run["screening"]["considered"] == 0);  // this search does not screen
}

TEST_CASE("the realised risk counts answered forecasts only, and the interval miss every measured one", "[monitor][data]") {
  auto data = milo_a100();
  CalibrationOptions calibration;
  calibration.tolerance = 0.1;
  calibration.risk_alpha = 0.2;
  MonitorHub hub({.title = "arithmetic", .calibration = calibration});
  RunObserver run = hub.observer("hand-made");
  const Candidate& prototype = data->observations.front().candidate;
  run.on_begin(SearchBegin{data->space, prototype, Budget{4}});

  std::vector<Config> proposed;
  for (std::size_t i = 0; i < 4; ++i) proposed.push_back(data->observations[i].candidate.config);
  // Forecasts of 1 ms, intervals [0.8, 1.25]: two answered, two deferred.
  std::vector<Decision> decisions(4);
  for (std::size_t i = 0; i < 4; ++i) {
    decisions[i].forecast.median_ms = 1.0;
    decisions[i].interval_low_ms = 0.8;
    decisions[i].interval_high_ms = 1.25;
    decisions[i].defer = i >= 2;
  }
  run.on_forecasted(SearchForecasted{proposed, decisions, 0.002});
  // Measured: 1.05 (answered, no loss, inside), 1.5 (answered, loss, outside),
  // 0.5 (deferred, outside), 1.0 (deferred, inside).
  const double measured[] = {1.05, 1.5, 0.5, 1.0};
  Trace trace;
  for (std::size_t i = 0; i < 4; ++i) {
    Measurement m;
    m.status = Status::ok;
    m.median_ms = measured[i];
    m.samples_ms = {measured[i]};
    m.cost_s = 1.5;
    run.on_measured(SearchMeasured{i + 1, proposed[i], m, trace});
  }
  const auto s = samples(hub.metrics_text());
  CHECK(s.at(R"(gpuforecast_answered_risk_ratio{run="hand-made"})") == Approx(0.5));   // 1 loss of 2 answered
  CHECK(s.at(R"(gpuforecast_interval_miss_ratio{run="hand-made"})") == Approx(0.5));   // 2 of 4 outside
  CHECK(s.at("gpuforecast_answered_risk_alpha_ratio") == Approx(0.2));
  CHECK(s.at(R"(gpuforecast_forecasts_total{decision="answered",run="hand-made"})") == 2);
  CHECK(s.at(R"(gpuforecast_best_time_seconds{run="hand-made"})") == Approx(0.0005));
  CHECK(s.at(R"(gpuforecast_run_finished{run="hand-made"})") == 0);

  const auto state = nlohmann::json::parse(hub.state_json());
  const auto& points = state["runs"][0]["measured"];
  REQUIRE(points.size() == 4);
  CHECK(points[0]["loss"] == false);
  CHECK(points[1]["loss"] == true);
  CHECK_FALSE(points[2].contains("loss"));  // deferred: measured, so it carries no risk
  CHECK(points[2]["answered"] == false);
}

TEST_CASE("failed measurements count as faults by kind, and a kernel's invalid configuration does not", "[monitor][data]") {
  auto data = milo_a100();
  MonitorHub hub;
  RunObserver run = hub.observer("faults");
  run.on_begin(SearchBegin{data->space, data->observations.front().candidate, Budget{3}});
  const Config& c = data->observations.front().candidate.config;
  Trace trace;
  for (const Status status : {Status::timeout, Status::runtime_failed, Status::invalid}) {
    Measurement m;
    m.status = status;
    m.reason = "injected";
    run.on_measured(SearchMeasured{1, c, m, trace});
  }
  const auto s = samples(hub.metrics_text());
  CHECK(s.at(R"(gpuforecast_faults_total{kind="timeout",run="faults"})") == 1);
  CHECK(s.at(R"(gpuforecast_faults_total{kind="runtime_failed",run="faults"})") == 1);
  CHECK(s.count(R"(gpuforecast_faults_total{kind="invalid",run="faults"})") == 0);
  CHECK(s.at(R"(gpuforecast_measurements_total{run="faults",status="invalid"})") == 1);
  CHECK(s.count(R"(gpuforecast_best_time_seconds{run="faults"})") == 0);  // nothing timed: no best yet
}

TEST_CASE("the server answers the page, the metrics and the state on a free port of 127.0.0.1", "[monitor][data]") {
  auto data = milo_a100();
  MonitorHub hub;
  RunObserver run = hub.observer("served");
  run.on_begin(SearchBegin{data->space, data->observations.front().candidate, Budget{1}});
  DashboardServer server(hub, "127.0.0.1", 0);
  REQUIRE(server.port() > 0);
  CHECK(server.url() == "http://127.0.0.1:" + std::to_string(server.port()) + "/");
  httplib::Client client("127.0.0.1", server.port());
  const auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
  CHECK_THAT(metrics->get_header_value("Content-Type"), Contains("text/plain; version=0.0.4"));
  CHECK_THAT(metrics->body, Contains("# TYPE gpuforecast_forecasts_total counter"));
  CHECK_THAT(metrics->body, Contains(R"(gpuforecast_measurement_duration_seconds_bucket{run="served",le="2.5"} 0)"));
  const auto state = client.Get("/api/state");
  REQUIRE(state);
  CHECK(nlohmann::json::parse(state->body)["runs"][0]["run"] == "served");
  const auto page = client.Get("/");
  REQUIRE(page);
  CHECK_THAT(page->body, Contains("api/state"));
  CHECK_THAT(page->body, Contains("<svg class=\"chart\" id=\"best\""));
  const auto missing = client.Get("/nothing-here");
  REQUIRE(missing);
  CHECK(missing->status == 404);

  SECTION("a port already taken is refused, naming it") {
    CHECK_THROWS_WITH(DashboardServer(hub, "127.0.0.1", server.port()),
                      Contains("127.0.0.1:" + std::to_string(server.port())));
  }
}

TEST_CASE("the static report embeds its state without letting it close the script", "[monitor]") {
  const std::string state = R"({"version":1,"title":"x</script><script>alert(1)</script>","finished":true,"runs":[]})";
  const std::string page = static_report(state);
  CHECK_THAT(page, Contains("window.GPUFORECAST_STATE = "));
  CHECK_THAT(page, Contains(R"(x<\/script><script>alert(1)<\/script>)"));
  CHECK(page.find("<!--gpuforecast:state-->") == std::string::npos);
  // The state's own text never ends the script element it sits in.
  const auto begin = page.find("window.GPUFORECAST_STATE");
  CHECK(page.find("</script>", begin) == page.find(";</script>", begin) + 1);
  CHECK_THROWS_WITH(write_static_report("/nonexistent-folder/report.html", state), Contains("/nonexistent-folder/report.html"));
}
