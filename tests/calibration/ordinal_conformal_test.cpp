// Ordinal conformal sets of speedup bins: runs of adjacent bins grown from the mode, with the
// promised coverage on exchangeable data.
#include <catch2/catch.hpp>

#include <random>

#include "calibration/ordinal_conformal.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;

TEST_CASE("the ordinal score is the mass of the run grown from the mode until it holds the bin") {
  const BinProbabilities p{0.05, 0.1, 0.2, 0.4, 0.15, 0.05, 0.03, 0.02};
  CHECK(ordinal_score(p, 4) == Approx(0.4));
  CHECK(ordinal_score(p, 3) == Approx(0.6));   // 3 (0.2) is more probable than 5 (0.15)
  CHECK(ordinal_score(p, 5) == Approx(0.75));
  CHECK(ordinal_score(p, 2) == Approx(0.85));
  CHECK(ordinal_score(p, 8) == Approx(1.0));
  CHECK_THROWS_AS(ordinal_score(p, 0), invalid_argument_error);
  CHECK_THROWS_AS(ordinal_score(p, 9), invalid_argument_error);
}

TEST_CASE("ordinal sets are runs of adjacent bins") {
  const BinProbabilities p{0.05, 0.1, 0.2, 0.4, 0.15, 0.05, 0.03, 0.02};
  const auto s = ordinal_set(p, 0.76);
  CHECK(s.low == 3);
  CHECK(s.high == 5);
  CHECK(s.size() == 3);
  CHECK(ordinal_set(p, 0.3).empty());
  CHECK(ordinal_set(p, 0.3).size() == 0);
  CHECK(ordinal_set(p, std::numeric_limits<double>::infinity()).size() == 8);
  // Two separate peaks still give one run (the gap between them joins it).
  const BinProbabilities twin{0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.7};
  const auto t = ordinal_set(twin, 1.0);
  CHECK(t.low == 1);
  CHECK(t.high == 8);
}

TEST_CASE("ordinal conformal sets cover 1 - alpha of fresh pairs") {
  // The true bin is drawn from the forecast itself, shifted by one bin 30% of the time.
  std::mt19937_64 rng(11);
  auto draw = [&](std::vector<BinProbabilities>& ps, std::vector<int>& bins, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      BinProbabilities p{};
      const int mode = std::uniform_int_distribution<int>(2, 7)(rng);
      double s = 0;
      for (int b = 1; b <= 8; ++b) s += p[static_cast<std::size_t>(b - 1)] = std::exp(-std::abs(b - mode));
      for (auto& v : p) v /= s;
      std::discrete_distribution<int> d(p.begin(), p.end());
      int bin = d(rng) + 1;
      if (std::bernoulli_distribution(0.3)(rng)) bin = std::clamp(bin + 1, 1, 8);
      ps.push_back(p);
      bins.push_back(bin);
    }
  };
  std::vector<BinProbabilities> cal_p, test_p;
  std::vector<int> cal_b, test_b;
  draw(cal_p, cal_b, 2000);
  draw(test_p, test_b, 5000);
  const auto c = OrdinalConformal::fit(cal_p, cal_b, 0.1);
  double covered = 0;
  for (std::size_t i = 0; i < test_p.size(); ++i) covered += c.predict(test_p[i]).contains(test_b[i]) ? 1 : 0;
  CHECK(covered / 5000 == Approx(0.9).margin(0.02));
  CHECK(c.alpha() == 0.1);
  CHECK_THROWS_AS(OrdinalConformal::fit(cal_p, std::vector<int>{1}, 0.1), invalid_argument_error);
  CHECK_THROWS_AS(OrdinalConformal::fit(cal_p, cal_b, 1.5), invalid_argument_error);
}
