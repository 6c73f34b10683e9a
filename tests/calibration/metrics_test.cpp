// Coverage, ECE, Brier, CRPS, NLL, risk-coverage and AURC against hand-computed cases.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "calibration/metrics.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;

namespace {
BinProbabilities one_hot(int bin) {
  BinProbabilities p{};
  p[static_cast<std::size_t>(bin - 1)] = 1.0;
  return p;
}
BinProbabilities uniform() {
  BinProbabilities p;
  p.fill(1.0 / 8);
  return p;
}
}  // namespace

TEST_CASE("coverage and widths") {
  const std::vector<Interval> iv{{1, 2}, {1, 3}, {2, 4}, {0.5, 1}};
  const std::vector<double> t{1.5, 3.5, 2, 0.7};
  CHECK(empirical_coverage(iv, t) == Approx(0.75));
  CHECK(mean_interval_width(iv) == Approx((1 + 2 + 2 + 0.5) / 4.0));
  CHECK(mean_log_interval_width(iv) == Approx((std::log(2) + std::log(3) + std::log(2) + std::log(2)) / 4));
  CHECK_THROWS_AS(empirical_coverage(iv, std::vector<double>{1}), invalid_argument_error);
}

TEST_CASE("ECE of two points by hand") {
  BinProbabilities a{}, b{};
  a[0] = 0.9;  // top bin 1 with 0.9, truth 1: right
  a[1] = 0.1;
  b[1] = 0.6;  // top bin 2 with 0.6, truth 3: wrong
  b[2] = 0.4;
  const std::vector<BinProbabilities> p{a, b};
  const std::vector<int> y{1, 3};
  // 0.5 * |1 - 0.9| + 0.5 * |0 - 0.6| = 0.35
  CHECK(expected_calibration_error(p, y) == Approx(0.35));
  const auto rb = reliability_bins(p, y);
  CHECK(rb[9].count == 1);
  CHECK(rb[6].count == 1);
  CHECK(rb[6].accuracy == 0);
}

TEST_CASE("Brier, CRPS and NLL of the eight bins") {
  const std::vector<BinProbabilities> right{one_hot(3)};
  const std::vector<int> y3{3};
  CHECK(brier_score(right, y3) == 0);
  CHECK(crps_ordinal(right, y3) == 0);
  CHECK(negative_log_likelihood(right, y3) == Approx(0).margin(1e-9));
  const std::vector<BinProbabilities> u{uniform()};
  CHECK(brier_score(u, y3) == Approx(56.0 / 64));
  CHECK(negative_log_likelihood(u, y3) == Approx(std::log(8.0)));
  const std::vector<BinProbabilities> far{one_hot(1)};
  const std::vector<int> y8{8};
  CHECK(crps_ordinal(far, y8) == Approx(1.0));
  CHECK(brier_score(far, y8) == Approx(2.0));
  // one bin off costs 1/7 of the farthest miss
  const std::vector<int> y2{2};
  CHECK(crps_ordinal(far, y2) == Approx(1.0 / 7));
  CHECK_THROWS_AS(brier_score(far, std::vector<int>{9}), invalid_argument_error);
}

TEST_CASE("risk-coverage curve and AURC") {
  const std::vector<double> c{3, 2, 1}, l{0, 1, 1};
  const auto curve = risk_coverage_curve(c, l);
  REQUIRE(curve.size() == 3);
  CHECK(curve[0].risk == 0);
  CHECK(curve[1].risk == Approx(0.5));
  CHECK(curve[2].coverage == Approx(1.0));
  CHECK(aurc(c, l) == Approx((0 + 0.5 + 2.0 / 3) / 3));
  // ties are accepted together
  const std::vector<double> tied{1, 1, 1};
  const auto flat = risk_coverage_curve(tied, l);
  REQUIRE(flat.size() == 1);
  CHECK(aurc(tied, l) == Approx(2.0 / 3));
}
