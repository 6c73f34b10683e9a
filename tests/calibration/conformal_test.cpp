// Split conformal, CQR and Mondrian calibration against hand-computed cases.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "stats/conformal_quantile.hpp"
#include "calibration/cqr.hpp"
#include "calibration/mondrian_conformal.hpp"
#include "calibration/nonconformity.hpp"
#include "calibration/split_conformal.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {
Forecast point(double median, double spread = 1.0) {
  Forecast f;
  f.median_ms = median;
  f.lower_ms = median / 2;
  f.upper_ms = median * 2;
  f.spread = spread;
  return f;
}
}  // namespace

TEST_CASE("conformal quantile is the ceil((n+1)(1-alpha))-th smallest score") {
  const std::vector<double> nine{9, 1, 8, 2, 7, 3, 6, 4, 5};
  CHECK(conformal_rank(9, 0.1) == 9);  // 10 * 0.9 = 9 exactly, not 10 through rounding
  CHECK(conformal_quantile(nine, 0.1) == 9);
  CHECK(conformal_quantile(nine, 0.2) == 8);  // ceil(8.0)
  CHECK(conformal_quantile(nine, 0.25) == 8); // ceil(7.5)
  const std::vector<double> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CHECK(conformal_quantile(ten, 0.1) == 10);  // ceil(9.9)
  const std::vector<double> four{4, 1, 3, 2};
  CHECK(conformal_quantile(four, 0.5) == 3);  // ceil(2.5)
  const std::vector<double> five{1, 2, 3, 4, 5};
  CHECK(conformal_quantile(five, 0.1) == std::numeric_limits<double>::infinity());  // ceil(5.4) > 5
}

TEST_CASE("bad calibration input gets clear errors") {
  const std::vector<double> s{1, 2, 3};
  for (double a : {0.0, 1.0, -0.1, 1.5, std::nan("")})
    CHECK_THROWS_WITH(conformal_quantile(s, a), Contains("alpha must lie strictly between 0 and 1"));
  CHECK_THROWS_AS(SplitConformal(1.2), invalid_argument_error);
  CHECK_THROWS_WITH(conformal_quantile(std::vector<double>{}, 0.1), Contains("empty"));
  CHECK_THROWS_WITH(conformal_quantile(std::vector<double>{1, std::nan(""), 3}, 0.1), Contains("score 1 of 3 is NaN"));
  SplitConformal c(0.1);
  CHECK_THROWS_WITH(c.fit({}, {}), Contains("empty"));
  const std::vector<Forecast> f{point(1), point(1)};
  CHECK_THROWS_WITH(c.fit(f, std::vector<double>{1.0}), Contains("one runtime per forecast"));
  CHECK_THROWS_WITH(c.fit(f, std::vector<double>{1.0, std::nan("")}), Contains("calibration point 1"));
  CHECK_THROWS_WITH(c.interval(point(1)), Contains("before fit"));
}

TEST_CASE("normalised residual score and its interval") {
  const Forecast f = point(10.0, 0.5);
  CHECK(nonconformity(ConformalScore::normalised_residual, f, 10.0 * std::exp(1.0)) == Approx(2.0));
  CHECK(nonconformity(ConformalScore::normalised_residual, f, 10.0 * std::exp(-1.0)) == Approx(2.0));
  const Interval iv = conformal_interval(ConformalScore::normalised_residual, f, 2.0);
  CHECK(iv.low_ms == Approx(10.0 * std::exp(-1.0)));
  CHECK(iv.high_ms == Approx(10.0 * std::exp(1.0)));
  // Without a spread, the quantile head sets the scale: (log 20 - log 5) / 3.29.
  Forecast g = point(10.0, 0.0);
  CHECK(effective_spread(g) == Approx(std::log(4.0) / 3.289707253902945));
  g.lower_ms = g.upper_ms = 0;
  CHECK(effective_spread(g) == 1.0);
}

TEST_CASE("CQR score and interval on the quantile head") {
  Forecast f = point(10.0);  // head [5, 20]
  CHECK(nonconformity(ConformalScore::cqr, f, 40.0) == Approx(std::log(2.0)));
  CHECK(nonconformity(ConformalScore::cqr, f, 10.0) == Approx(-std::log(2.0)));
  CHECK(nonconformity(ConformalScore::cqr, f, 2.5) == Approx(std::log(2.0)));
  const Interval wider = conformal_interval(ConformalScore::cqr, f, std::log(2.0));
  CHECK(wider.low_ms == Approx(2.5));
  CHECK(wider.high_ms == Approx(40.0));
  const Interval narrower = conformal_interval(ConformalScore::cqr, f, -std::log(2.0));
  CHECK(narrower.low_ms == Approx(10.0));
  CHECK(narrower.high_ms == Approx(10.0));
}

TEST_CASE("split conformal end to end on a hand-made calibration set") {
  std::vector<Forecast> f;
  std::vector<double> t;
  for (int i = 1; i <= 10; ++i) {
    f.push_back(point(1.0, 1.0));
    t.push_back(std::exp(0.1 * i * (i % 2 ? 1 : -1)));  // scores 0.1 ... 1.0
  }
  SplitConformal c(0.2);
  c.fit(f, t);
  CHECK(c.quantile() == Approx(0.9));  // ceil(11 * 0.8) = 9th smallest
  const Interval iv = c.interval(point(3.0, 2.0));
  CHECK(iv.low_ms == Approx(3.0 * std::exp(-1.8)));
  CHECK(iv.high_ms == Approx(3.0 * std::exp(1.8)));
  SplitConformal q = make_cqr(0.2);
  q.fit(f, t);
  CHECK(q.score() == ConformalScore::cqr);
  // CQR scores: max(log 0.5 - s, s - log 2) = |s| - log 2 for |s| <= 1: 9th smallest 0.9 - log 2.
  CHECK(q.quantile() == Approx(0.9 - std::log(2.0)));
}

TEST_CASE("split conformal covers at 1 - alpha on exchangeable synthetic data") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0.0, 1.0);
  double covered = 0, trials = 0;
  for (int rep = 0; rep < 200; ++rep) {
    std::vector<Forecast> f;
    std::vector<double> t;
    for (int i = 0; i < 50; ++i) {
      const double s = 0.1 + 0.4 * (i % 5);
      f.push_back(point(1.0, s));
      t.push_back(std::exp(s * noise(rng)));
    }
    SplitConformal c(0.1);
    c.fit(f, t);
    for (int i = 0; i < 50; ++i) {
      const double s = 0.1 + 0.4 * (i % 5);
      covered += c.interval(point(1.0, s)).contains(std::exp(s * noise(rng))) ? 1 : 0;
      trials += 1;
    }
  }
  // Expected 1 - alpha <= coverage <= 1 - alpha + 1/(n+1): [0.90, 0.92]; allow sampling noise.
  CHECK(covered / trials >= 0.885);
  CHECK(covered / trials <= 0.935);
}

TEST_CASE("Mondrian calibrates each group and falls back to the pooled one for small groups") {
  auto dev_a = std::make_shared<Device>();
  dev_a->name = "A";
  auto dev_b = std::make_shared<Device>();
  dev_b->name = "B";
  std::vector<Candidate> c;
  std::vector<Forecast> f;
  std::vector<double> t;
  for (int i = 1; i <= 40; ++i) {  // device A: small errors 0.01..0.40
    Candidate x;
    x.kernel = "k";
    x.device = dev_a;
    c.push_back(x);
    f.push_back(point(1.0, 1.0));
    t.push_back(std::exp(0.01 * i));
  }
  for (int i = 1; i <= 40; ++i) {  // device B: large errors 0.1..4.0
    Candidate x;
    x.kernel = "k";
    x.device = dev_b;
    c.push_back(x);
    f.push_back(point(1.0, 1.0));
    t.push_back(std::exp(0.1 * i));
  }
  MondrianConformal m(0.1, ConformalScore::normalised_residual, GroupBy::device, 30);
  m.fit(c, f, t);
  REQUIRE(m.groups().size() == 2);
  // ceil(41 * 0.9) = 37th smallest of each group
  CHECK(m.calibration_for(c[0]).quantile() == Approx(0.37));
  CHECK(m.calibration_for(c[40]).quantile() == Approx(3.7));
  CHECK(group_key(GroupBy::kernel_and_device, c[0]) == "k@A");
  CHECK(group_key(GroupBy::kernel, c[0]) == "k");
  Candidate unknown;
  unknown.kernel = "k";
  auto dev_c = std::make_shared<Device>();
  dev_c->name = "C";
  unknown.device = dev_c;
  CHECK(m.uses_pooled(unknown));
  CHECK(m.calibration_for(unknown).quantile() == Approx(3.3));  // ceil(81 * 0.9) = 73rd of 80: 3.3

  MondrianConformal small(0.1, ConformalScore::normalised_residual, GroupBy::device, 50);
  small.fit(c, f, t);
  CHECK(small.groups().empty());
  CHECK(small.uses_pooled(c[0]));
  CHECK_THROWS_WITH(parse_group_by("gpu"), Contains("kernel_device"));
}
