#include "runtime/statistics.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;

TEST_CASE("median and order-statistic interval of known samples", "[runtime][statistics]") {
  // 1..20: median 10.5; at 95% the order index is k = 6 -> [x_6, x_15] = [6, 15]
  // (P(Bin(20, 1/2) <= 5) = 0.0207 <= 0.025 < P(<= 6) = 0.0577).
  std::vector<double> s;
  for (int i = 20; i >= 1; --i) s.push_back(i);
  const auto mi = median_interval(s, 0.95);
  CHECK(mi.median == 10.5);
  CHECK(mi.low == 6);
  CHECK(mi.high == 15);
  CHECK(mi.relative_half_width == Approx(4.5 / 10.5));
}

TEST_CASE("too few samples give an infinite relative width", "[runtime][statistics]") {
  const std::vector<double> s{1.0, 1.0, 1.0, 1.0, 1.0};
  CHECK(std::isinf(median_interval(s).relative_half_width));
  CHECK(min_samples_for_interval(0.95) == 9);  // first n with P(Bin(n,1/2) <= 1) <= 2.5%
  const std::vector<double> nine(9, 2.0);
  CHECK(median_interval(nine).relative_half_width == 0);
}

TEST_CASE("statistics reject bad input", "[runtime][statistics]") {
  const std::vector<double> bad{1.0, NAN};
  CHECK_THROWS_AS(median_interval(bad), invalid_argument_error);
  const std::vector<double> neg{1.0, -1.0};
  CHECK_THROWS_AS(median_interval(neg), invalid_argument_error);
  CHECK_THROWS_AS(median_interval(std::vector<double>{1.0}, 1.5), invalid_argument_error);
  CHECK(median_interval(std::vector<double>{}).median == 0);
}
