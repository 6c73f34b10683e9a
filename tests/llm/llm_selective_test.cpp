// The LLM as the surrogate strategy's filter, against the fake server (fake_llm_server.py):
// failed queries deferred with their reason, the deferral rule fitted on the search's own
// prequential pairs, and a replayed search on convolution_milo A100 that asks the LLM and
// reports its calls beside the measurements (library and command line), and screened evolution
// ranking its children with the LLM.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compose/search_model.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "llm/llm_selective.hpp"
#include "gpuforecast/run/search_target.hpp"
#include "gpuforecast/run/run.hpp"
#include "fake_server.hpp"
#include "support/data.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

LlmSelectiveOptions options(const std::string& url) {
  LlmSelectiveOptions o;
  o.surrogate.endpoint.base_url = url;
  o.surrogate.endpoint.model = "fake";
  o.surrogate.endpoint.timeout_seconds = 2;
  o.surrogate.endpoint.retries = 1;
  o.surrogate.endpoint.backoff_seconds = 0.01;
  return o;
}

}  // namespace

TEST_CASE("the LLM filter defers failed queries and certifies answers once it has calibration pairs") {
  const SpaceData space = load_space(test::cache_file("convolution_milo", "A100").string());
  std::vector<Observation> rows;
  for (const auto& o : space.observations)
    if (o.measurement.ok() && rows.size() < 200) rows.push_back(o);
  test::FakeServer server;
  LlmSelective model(options(server.url()));
  CHECK_FALSE(model.ready());
  model.update(std::span<const Observation>(rows).first(10));
  REQUIRE(model.ready());

  std::vector<Candidate> asked;
  for (std::size_t i = 10; i < 40; ++i) asked.push_back(rows[i].candidate);
  Candidate faulty = asked.front();
  faulty.config = Config(std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"fault"}), {500});
  asked.push_back(faulty);
  auto d = model.decide(asked);
  REQUIRE(d.size() == asked.size());
  CHECK(d.back().defer);
  CHECK_THAT(d.back().reason, Contains("LLM query failed") && Contains("500"));
  CHECK(d.back().forecast.spread == 0);  // no optimism for an unanswered query
  for (std::size_t i = 0; i + 1 < d.size(); ++i) {
    CHECK(d[i].defer);  // nothing certified yet
    CHECK_THAT(d[i].reason, Contains("no certificate yet"));
  }
  // The measurements of what was asked become calibration pairs; then the rule decides.
  model.update(std::span<const Observation>(rows).subspan(10, 30));
  CHECK(model.calibration_pairs() == 30);
  CHECK(model.certified());
  std::vector<Candidate> next;
  for (std::size_t i = 40; i < 60; ++i) next.push_back(rows[i].candidate);
  d = model.decide(next);
  for (const auto& x : d) CHECK_THAT(x.reason, Contains("certified threshold"));
  CHECK(model.counts().failed == 1);
}

TEST_CASE("a replayed surrogate search with --surrogate llm asks the LLM and reports its calls") {
  test::FakeServer server;
  ::setenv("GPUFORECAST_LLM_BASE_URL", server.url().c_str(), 1);
  ::setenv("GPUFORECAST_LLM_MODEL", "fake", 1);
  const std::string file = test::cache_file("convolution_milo", "A100").string();

  SECTION("library") {
    Plan e;
    e.replay().data = std::make_shared<const SpaceData>(load_replay_space(file));
    e.strategy = "surrogate";
    e.settings.surrogate = "llm";
    e.budget = 20;
    e.seeds = 1;
    const auto before = llm_process_counts();
    const auto result = gpuforecast::run(e);
    const auto after = llm_process_counts();
    REQUIRE(result.runs.size() == 1);
    CHECK(result.runs.front().trace.size() == 20);
    CHECK(after.prompts > before.prompts);
    CHECK(after.failed == before.failed);
  }
  SECTION("screened evolution asks the LLM about the children") {
    Plan e;
    e.replay().data = std::make_shared<const SpaceData>(load_replay_space(file));
    e.strategy = "genetic";
    e.settings.surrogate = "llm";
    e.settings.options = {{"children_per_measurement", "4"}, {"screen", "true"}};
    e.budget = 30;
    e.seeds = 1;
    const auto before = llm_process_counts();
    const auto result = gpuforecast::run(e);
    const auto after = llm_process_counts();
    REQUIRE(result.runs.size() == 1);
    const auto& run = result.runs.front();
    CHECK(run.trace.size() == 30);
    CHECK(after.prompts > before.prompts);
    CHECK(after.failed == before.failed);
    CHECK(run.screened_rounds > 0);
    CHECK(run.screening.considered >= 4 * 10);  // four children per place after the first generation
  }
  SECTION("command line, --json") {
    const std::string out = (server.dir() / "search.json").string();
    const std::string cmd = std::string(GPUFORECAST_CLI) + " search --replay " + file +
                            " --strategy surrogate --surrogate llm --budget 20 --seeds 1 --json > " + out;
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::ifstream in(out);
    const auto j = nlohmann::json::parse(in);
    const auto& llm = j.at("strategies").at(0).at("llm");
    CHECK(llm.at("measurements").get<int>() == 20);
    CHECK(llm.at("prompts").get<int>() > 0);
    CHECK(llm.at("failed_deferred").get<int>() == 0);
  }
  SECTION("without an endpoint the model is refused with the variables to set") {
    ::unsetenv("GPUFORECAST_LLM_BASE_URL");
    CHECK_THROWS_WITH(make_search_model({.online_surrogate = "llm"}), Contains("GPUFORECAST_LLM_BASE_URL"));
    CHECK_THROWS_WITH(make_search_model({.model_path = "x.model", .online_surrogate = "llm"}),
                      Contains("no pre-trained model"));
  }
  ::unsetenv("GPUFORECAST_LLM_BASE_URL");
  ::unsetenv("GPUFORECAST_LLM_MODEL");
}
