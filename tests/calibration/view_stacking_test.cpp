// View stacking: the weights against views whose relation to the truth is known, the
// leave-each-out forecasts and the input checks. On real data: view_models_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "calibration/view_stacking.hpp"
#include "gpuforecast/core/error.hpp"
#include "support/forecasts.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

// Every synthetic forecast here has the same relative interval.
Forecast forecast_of(double ms) { return test::forecast_around(ms, 1.2, 0.1); }

struct Synthetic {
  std::vector<ViewForecasts> views;
  std::vector<double> times;
};

// 40 configurations; view 0 is twice the truth, view 1 unrelated noise, view 2 the reciprocal.
Synthetic synthetic() {
  Synthetic s;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> noise(0.5, 5.0);
  for (int i = 0; i < 40; ++i) {
    const double t = 0.5 + 0.1 * i;
    s.times.push_back(t);
    s.views.push_back({forecast_of(2 * t), forecast_of(noise(rng)), forecast_of(1 / t)});
  }
  return s;
}

}  // namespace

TEST_CASE("view stacking weighs the view the times follow and gives none to a view against them") {
  const Synthetic s = synthetic();
  const ViewStacking fit = fit_view_stacking(s.views, s.times);
  REQUIRE(fit.weights.size() == 3);
  CHECK(fit.weights[0] == Approx(1.0).margin(1e-6));
  CHECK(fit.weights[1] == Approx(0.0).margin(1e-6));
  CHECK(fit.weights[2] == Approx(0.0).margin(1e-9));  // negatively related: never subtracted
  CHECK(fit.intercept == Approx(-std::log(2.0)).margin(1e-6));
  for (std::size_t i = 0; i < s.times.size(); ++i) {
    INFO("point " << i);
    const Forecast f = fit.apply(s.views[i]);
    CHECK(f.median_ms == Approx(s.times[i]).epsilon(1e-6));
    CHECK(f.lower_ms == Approx(s.times[i] / 1.2).epsilon(1e-6));
    CHECK(f.upper_ms == Approx(s.times[i] * 1.2).epsilon(1e-6));
    CHECK_FALSE(f.bin_probabilities.has_value());
  }

  // Only the reciprocal view: no weight at all, and a flat forecast at the times' geometric mean.
  std::vector<ViewForecasts> against;
  for (const auto& v : s.views) against.push_back({v[2]});
  const ViewStacking flat = fit_view_stacking(against, s.times);
  CHECK(flat.weights[0] == Approx(0.0).margin(1e-9));
  double log_mean = 0;
  for (const double t : s.times) log_mean += std::log(t) / static_cast<double>(s.times.size());
  CHECK(flat.apply(against[0]).median_ms == Approx(std::exp(log_mean)));
  CHECK(flat.apply(against[7]).median_ms == Approx(std::exp(log_mean)));
}

TEST_CASE("leaving each point out, a point's own time never moves its stacked forecast") {
  Synthetic s = synthetic();
  s.times[5] *= 10;  // one point far off the relation the others follow
  const std::vector<Forecast> left_out = stack_leaving_each_out(s.views, s.times);
  REQUIRE(left_out.size() == s.times.size());
  // The others say t = view0 / 2: the point's forecast keeps to it and shows the 10x miss...
  CHECK(left_out[5].median_ms == Approx(s.views[5][0].median_ms / 2).epsilon(1e-6));
  // ...where a fit that saw it is pulled towards it.
  const double in_sample = fit_view_stacking(s.views, s.times).apply(s.views[5]).median_ms;
  CHECK(in_sample > 1.05 * left_out[5].median_ms);
}

TEST_CASE("view stacking names bad input") {
  Synthetic s = synthetic();
  CHECK_THROWS_WITH(fit_view_stacking(std::span(s.views).first(2), std::span(s.times).first(2)),
                    Contains("at least 3 points, got 2"));
  CHECK_THROWS_WITH(fit_view_stacking(s.views, std::span(s.times).first(10)), Contains("40 points and 10 runtimes"));
  auto missing = s.views;
  missing[7].pop_back();
  CHECK_THROWS_AS(fit_view_stacking(missing, s.times), invalid_argument_error);
  CHECK_THROWS_WITH(fit_view_stacking(missing, s.times), Contains("point 7 has 2 views, the first has 3"));
  auto zero = s.views;
  zero[4][1].median_ms = 0;
  CHECK_THROWS_WITH(fit_view_stacking(zero, s.times), Contains("point 4's forecast in view 1 is 0 ms"));
  auto nan_time = s.times;
  nan_time[9] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(fit_view_stacking(s.views, nan_time), Contains("point 9's measured runtime is nan ms"));
  const ViewStacking fit = fit_view_stacking(s.views, s.times);
  CHECK_THROWS_WITH(fit.apply({forecast_of(1)}), Contains("1 views given to a stacking of 3"));
  CHECK_THROWS_WITH(stack_leaving_each_out(std::span(s.views).first(3), std::span(s.times).first(3)),
                    Contains("at least 4 points"));
}
