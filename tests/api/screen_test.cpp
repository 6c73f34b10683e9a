// screen() with a loaded Model: a k-NN trained on convolution_milo A4000 screens the A100, a
// device it never saw, calibrated on half of the A100's measurements and judged on the rest.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "data/temp_dir.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/screen.hpp"
#include "surrogate/knn.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "support/knn_model.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

Model a4000_model(const test::TempDir& dir) {
  const auto ok = test::successful_observations("convolution_milo", "A4000");
  KnnSurrogate knn;
  knn.fit(ok);
  const auto path = (dir.path() / "a4000.gfm").string();
  save_surrogate(path, AnySurrogate(std::move(knn)), TrainingSummary::of(ok));
  return load(path);
}

}  // namespace

TEST_CASE("screen skips what is certified slow on a new device and keeps its miss rate there") {
  const test::TempDir dir;
  const Model model = a4000_model(dir);
  auto a100 = test::successful_observations("convolution_milo", "A100");
  std::mt19937_64 rng(5);
  std::shuffle(a100.begin(), a100.end(), rng);
  const std::size_t half = a100.size() / 2;
  const std::span<const Observation> calibration(a100.data(), half);
  std::vector<Candidate> candidates;
  std::vector<double> truth;
  for (std::size_t i = half; i < a100.size(); ++i) {
    candidates.push_back(a100[i].candidate);
    truth.push_back(a100[i].measurement.median_ms);
  }
  std::vector<double> sorted = truth;
  std::sort(sorted.begin(), sorted.end());
  const double incumbent = sorted[sorted.size() / 10];
  const auto s = screen(model, candidates, incumbent, calibration);
  REQUIRE(s.skip.size() == candidates.size());
  REQUIRE(s.decisions.size() == candidates.size());
  INFO("convolution_milo A100, incumbent " << incumbent << " ms: " << s.rule.improvements << " improvement pairs, "
                                            << s.rule.reason);
  REQUIRE(s.rule.certified);
  ScreeningTally tally;
  for (std::size_t i = 0; i < candidates.size(); ++i) tally_screening(tally, s.skip[i], truth[i], incumbent);
  INFO(tally.improvements_skipped << " of " << tally.improvements << " improvements skipped, " << tally.skipped
                                  << " of " << tally.considered << " candidates");
  CHECK(tally.miss_rate() <= 0.2);  // one split of an (alpha 0.1, delta 0.1) guarantee
  CHECK(static_cast<double>(tally.skipped) > 0.3 * static_cast<double>(tally.considered));
}

TEST_CASE("screen names a bad incumbent and a calibration row the model refuses") {
  const test::TempDir dir;
  const Model model = a4000_model(dir);
  auto a100 = test::successful_observations("convolution_milo", "A100");
  a100.resize(100);
  std::vector<Candidate> candidates{a100.front().candidate};
  CHECK_THROWS_WITH(screen(model, candidates, -1.0, a100), Contains("incumbent -1"));
  a100[3].candidate.config = Config{};
  CHECK_THROWS_AS(screen(model, candidates, 1.0, a100), invalid_configuration_error);
}
