// The LLM as a surrogate against the fake server (fake_llm_server.py) on convolution_milo A100:
// forecasts around the fastest measured reference, failed queries flagged (no bin distribution)
// and never thrown, and the API key kept out of everything but the Authorization header.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "llm/llm_surrogate.hpp"
#include "fake_server.hpp"
#include "support/data.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string secret = "sk-secret-surrogate-key";

LlmSurrogateOptions options(const std::string& url, const fs::path& cache) {
  LlmSurrogateOptions o;
  o.endpoint.base_url = url;
  o.endpoint.model = "fake";
  o.endpoint.api_key = secret;
  o.endpoint.timeout_seconds = 2;
  o.endpoint.retries = 1;
  o.endpoint.backoff_seconds = 0.01;
  o.endpoint.cache_dir = cache;
  o.examples = 3;
  return o;
}

std::vector<Observation> ok_rows(const SpaceData& space, std::size_t n) {
  std::vector<Observation> out;
  for (const auto& o : space.observations)
    if (o.measurement.ok() && out.size() < n) out.push_back(o);
  return out;
}

}  // namespace

TEST_CASE("a bin distribution becomes a runtime distribution around the reference") {
  std::array<double, speedup_bin_count> sure_d{};
  sure_d[3] = 1;  // bin 4: speedup in [1, 1.41)
  const Forecast d = forecast_from_bins(sure_d, 10.0);
  CHECK(d.median_ms == Approx(10.0 / std::exp2(0.25)));
  CHECK(d.lower_ms < d.median_ms);
  CHECK(d.upper_ms > d.median_ms);
  REQUIRE(d.bin_probabilities);
  std::array<double, speedup_bin_count> split{};
  split[0] = split[7] = 0.5;  // either much slower or much faster: same median, far wider
  const Forecast w = forecast_from_bins(split, 10.0);
  CHECK(w.spread > 4 * d.spread);
  std::array<double, speedup_bin_count> slower{};
  slower[1] = 1;  // bin 2: slower than the reference
  CHECK(forecast_from_bins(slower, 10.0).median_ms > 10.0);
  CHECK_THROWS_AS(forecast_from_bins({}, 10.0), invalid_argument_error);
  CHECK_THROWS_AS(forecast_from_bins(sure_d, 0.0), invalid_argument_error);
}

TEST_CASE("the LLM surrogate forecasts against the fastest measurement and flags failed queries") {
  const SpaceData space = load_space(test::cache_file("convolution_milo", "A100").string());
  test::FakeServer server;
  const fs::path cache = server.dir() / "cache";
  LlmSurrogate s(options(server.url(), cache));
  CHECK_FALSE(s.ready());
  const auto rows = ok_rows(space, 40);
  REQUIRE(rows.size() == 40);
  std::vector<Candidate> asked;
  for (std::size_t i = 0; i < 5; ++i) asked.push_back(rows[30 + i].candidate);
  CHECK_THROWS_WITH(s.predict(asked), Contains("no reference"));

  std::vector<Observation> learned(rows.begin(), rows.begin() + 30);
  Observation broken = learned.back();
  broken.measurement.status = Status::runtime_failed;
  learned.push_back(broken);
  s.update(learned);
  REQUIRE(s.ready());
  const auto fastest = std::min_element(rows.begin(), rows.begin() + 30, [](const auto& a, const auto& b) {
    return a.measurement.median_ms < b.measurement.median_ms;
  });
  CHECK(s.reference()->measurement.median_ms == fastest->measurement.median_ms);

  // A candidate the fake endpoint fails on (HTTP 500 after the retries): flagged, not thrown.
  Candidate faulty = asked[0];
  auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"fault"});
  faulty.config = Config(names, {500});
  asked.push_back(faulty);

  const auto f = s.predict(asked);
  REQUIRE(f.size() == asked.size());
  const double t_ref = s.reference()->measurement.median_ms;
  for (std::size_t i = 0; i < 5; ++i) {
    INFO("candidate " << i);
    REQUIRE(f[i].bin_probabilities);
    CHECK(f[i].lower_ms < f[i].median_ms);
    CHECK(f[i].median_ms < f[i].upper_ms);
    CHECK(f[i].p_fail == Approx(1.0 / 31));
    // The answer's most probable bin puts the median inside that bin's speedups (or beyond the
    // open end bins), give or take the neighbours' mass.
    const auto& p = *f[i].bin_probabilities;
    const int top = static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin()) + 1;
    CHECK(std::abs(speedup_bin(t_ref, f[i].median_ms) - top) <= 1);
  }
  CHECK_FALSE(f[5].bin_probabilities);
  CHECK(f[5].median_ms == t_ref);
  CHECK(f[5].upper_ms / f[5].lower_ms == Approx(256));

  const auto pairs = s.predict_pairs(s.reference()->candidate, asked);
  CHECK_FALSE(pairs[5].answered());
  CHECK_THAT(pairs[5].answer.error, Contains("500"));
  const auto counts = s.counts();
  CHECK(counts.failed == 2);
  CHECK(counts.cache_hits == 5);  // the second asking of the five answered pairs cost nothing

  SECTION("the API key stays in the Authorization header") {
    const std::string seen = test::http_get(server.port(), "/saw-key?key=" + secret);
    CHECK_THAT(seen, Contains("\"header\": true") && Contains("\"body\": false"));
    CHECK_THAT(s.describe(), Contains("fake") && Contains("set (not shown)") && !Contains(secret));
    for (const auto& pf : pairs) CHECK_THAT(pf.answer.error, !Contains(secret));
    std::size_t files = 0;
    for (const auto& e : fs::recursive_directory_iterator(cache)) {
      std::ifstream in(e.path());
      std::stringstream text;
      text << in.rdbuf();
      CHECK_THAT(text.str(), !Contains(secret));
      ++files;
    }
    CHECK(files == 5);
  }
}

TEST_CASE("worked examples come from the measurements, against the reference") {
  const SpaceData space = load_space(test::cache_file("convolution_milo", "A100").string());
  const auto rows = ok_rows(space, 12);
  test::FakeServer server;
  auto o = options(server.url(), {});
  LlmSurrogate s(o);
  s.set_reference(rows[0].candidate, rows[0].measurement.median_ms);
  CHECK(s.reference()->measurement.median_ms == rows[0].measurement.median_ms);
  CHECK_THROWS_WITH(s.set_reference(rows[0].candidate, 0), Contains("positive runtime"));
  s.update(std::span<const Observation>(rows).subspan(1));
  // The fastest of the measured replaced the given reference unless the given one was faster.
  double fastest = rows[0].measurement.median_ms;
  for (const auto& r : rows) fastest = std::min(fastest, r.measurement.median_ms);
  CHECK(s.reference()->measurement.median_ms == fastest);
  const auto f = s.predict(std::span<const Candidate>(&rows[5].candidate, 1));
  REQUIRE(f.size() == 1);
  CHECK(f[0].bin_probabilities);
}
