// Adaptive conformal inference: the update rule by hand, and coverage under drift.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "calibration/adaptive_conformal.hpp"
#include "calibration/split_conformal.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {
Forecast unit() {
  Forecast f;
  f.median_ms = 1.0;
  f.spread = 1.0;
  return f;
}
}  // namespace

TEST_CASE("adaptive conformal update rule by hand") {
  const std::vector<double> scores{1, 2, 3};
  AdaptiveConformal a(0.5, 0.1, ConformalScore::normalised_residual, scores);
  // alpha_t = 0.5: ceil(4 * 0.5) = 2nd smallest = 2
  CHECK(a.interval(unit()).high_ms == Approx(std::exp(2.0)));
  CHECK(a.update(unit(), std::exp(3.0)));  // score 3 lies outside: a miss
  CHECK(a.alpha_t() == Approx(0.45));       // 0.5 + 0.1 (0.5 - 1)
  // scores {1, 2, 3, 3}: ceil(5 * 0.55) = 3rd smallest = 3
  CHECK(a.interval(unit()).high_ms == Approx(std::exp(3.0)));
  CHECK_FALSE(a.update(unit(), std::exp(0.5)));
  CHECK(a.alpha_t() == Approx(0.5));  // 0.45 + 0.1 * 0.5
  CHECK(a.miss_rate() == Approx(0.5));
  CHECK(a.steps() == 2);
}

TEST_CASE("adaptive conformal rejects bad parameters") {
  const std::vector<double> s{1, 2};
  CHECK_THROWS_WITH(AdaptiveConformal(1.0, 0.1, ConformalScore::cqr, s), Contains("alpha"));
  CHECK_THROWS_WITH(AdaptiveConformal(0.1, 0.0, ConformalScore::cqr, s), Contains("gamma"));
  CHECK_THROWS_WITH(AdaptiveConformal(0.1, 0.1, ConformalScore::cqr, std::vector<double>{}), Contains("non-empty"));
  CHECK_THROWS_WITH(AdaptiveConformal(0.1, 0.1, ConformalScore::cqr, std::vector<double>{std::nan("")}),
                    Contains("NaN"));
}

TEST_CASE("adaptive conformal keeps coverage where static split conformal loses it under drift") {
  // Calibrated on errors of scale 0.2; along the stream the scale grows to 0.6 (a search moving
  // to configurations the model knows less well).
  std::mt19937_64 rng(3);
  std::normal_distribution<double> z(0, 1);
  std::vector<double> cal;
  std::vector<Forecast> cf;
  std::vector<double> ct;
  for (int i = 0; i < 200; ++i) {
    cf.push_back(unit());
    ct.push_back(std::exp(0.2 * z(rng)));
  }
  SplitConformal split(0.1);
  split.fit(cf, ct);
  AdaptiveConformal aci(0.1, 0.02, ConformalScore::normalised_residual, split.scores(), 500);
  const int T = 3000;
  int split_miss = 0;
  for (int t = 0; t < T; ++t) {
    const double scale = 0.2 + 0.4 * t / T;
    const double y = std::exp(scale * z(rng));
    split_miss += split.interval(unit()).contains(y) ? 0 : 1;
    aci.update(unit(), y);
  }
  CHECK(static_cast<double>(split_miss) / T > 0.3);
  CHECK(std::abs(aci.miss_rate() - 0.1) <= 0.03);
  CHECK(std::abs(aci.miss_rate() - 0.1) <= aci.miss_rate_bound());
}
