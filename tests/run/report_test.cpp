// One run measured on a GPU or a farm, as text and JSON (the live and --mpi searches print these).
#include "run/report.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/data.hpp"

using namespace gpuforecast;

namespace {

// Three of a real space's measurements, the second failed.
Trace three_measurements() {
  const SpaceData data = load_space(test::cache_file("pnpoly", "RTX_3090").string());
  Trace trace;
  for (std::size_t i = 0; i < 3; ++i) {
    TraceEntry e;
    e.config = data.observations[i].candidate.config;
    e.measurement = data.observations[i].measurement;
    if (i == 1) e.measurement.status = Status::compile_failed;
    e.cost_s = 1.5;
    trace.add(e);
  }
  return trace;
}

}  // namespace

TEST_CASE("a run on one GPU: measurements, failures, cost and the best", "[run][data]") {
  MeasuredRun run{"random", "NVIDIA H200", three_measurements()};
  run.kernel = "pnpoly.json";
  const std::string text = text_report(run);
  CHECK_THAT(text, Catch::StartsWith("random on NVIDIA H200: 3 measurements (1 failed), 4.5 s of compiling and measuring"));
  const TraceEntry* best = run.trace.best();
  REQUIRE(best);
  CHECK_THAT(text, Catch::Contains("[" + best->config.to_string() + "]"));
  const auto j = nlohmann::json::parse(json_report(run));
  CHECK(j.at("kernel") == "pnpoly.json");
  CHECK(j.at("failed") == 1);
  CHECK(j.at("seconds") == Approx(4.5));
  CHECK(j.at("best").at("found_at") == best->index);
  CHECK_FALSE(j.contains("ranks"));

  MeasuredRun nothing{"random", "NVIDIA H200", {}};
  CHECK_THAT(text_report(nothing), Catch::Contains("no configuration ran successfully"));
  CHECK_FALSE(nlohmann::json::parse(json_report(nothing)).contains("best"));
}

TEST_CASE("a run on a farm: its ranks, the rate and the optimum of a replay", "[run][data]") {
  MeasuredRun run{"random", "RTX 3090", three_measurements()};
  run.replay = "RTX_3090.json.gz";
  run.optimum_ms = 0.25;
  run.wall_seconds = 2;
  run.farm = std::vector<WorkerReport>{{1, "RTX 3090", 2, false, ""}, {2, "RTX 3090", 1, true, "stopped answering"}};
  const std::string text = text_report(run);
  CHECK_THAT(text, Catch::StartsWith("random over 2 worker ranks: 3 measurements (1 failed) in 2.00 s (1.5 per s)"));
  CHECK_THAT(text, Catch::Contains("(optimum 0.25 ms)"));
  CHECK_THAT(text, Catch::Contains("rank 2: 1 measurements, stopped answering"));
  const auto j = nlohmann::json::parse(json_report(run));
  CHECK(j.at("workers") == 2);
  CHECK(j.at("optimum_ms") == Approx(0.25));
  CHECK(j.at("measurements_per_second") == Approx(1.5));
  CHECK(j.at("ranks").at(1).at("lost") == true);
  CHECK_FALSE(j.contains("kernel"));
}
