// SelectiveCalibrator on synthetic data: decisions and their reasons, option errors, the
// archive round trip, and decide_all, the loop every selective predictor decides with.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "calibration/selective_calibrator.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/archive.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

// Candidates carry their true log-runtime and the model's noise level in the config values.
struct Toy {
  std::vector<Candidate> c;
  std::vector<Forecast> f;
  std::vector<double> t;
};

Toy make_toy(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.01, 0.3);
  std::normal_distribution<double> z(0, 1);
  auto dev = std::make_shared<Device>();
  dev->name = "toy";
  Toy toy;
  for (std::size_t i = 0; i < n; ++i) {
    const double s = u(rng);
    Candidate c;
    c.kernel = "k";
    c.device = dev;
    Forecast f;
    f.median_ms = 1.0;
    f.spread = s;
    f.lower_ms = std::exp(-1.645 * s);
    f.upper_ms = std::exp(1.645 * s);
    toy.c.push_back(c);
    toy.f.push_back(f);
    toy.t.push_back(std::exp(s * z(rng)));
  }
  return toy;
}

// What a surrogate sure of itself forecasts: 1 ms, spread 0.05.
std::vector<Forecast> confident_forecasts(std::size_t n) {
  std::vector<Forecast> out(n);
  for (auto& f : out) {
    f.median_ms = 1.0;
    f.spread = 0.05;
    f.lower_ms = 0.9;
    f.upper_ms = 1.1;
  }
  return out;
}

}  // namespace

TEST_CASE("the calibrator accepts confident forecasts and says why") {
  const Toy toy = make_toy(2000, 1);
  const auto cal = SelectiveCalibrator::fit(toy.c, toy.f, toy.t, {});
  REQUIRE(cal.deferral().any_valid);
  // Error |s z| > 0.1 happens with probability 2 Phi(-0.1/s): small spreads are safe.
  Forecast sure = toy.f[0];
  sure.spread = 0.02;
  const Decision a = cal.decide(toy.c[0], sure);
  CHECK_FALSE(a.defer);
  CHECK_THAT(a.reason, Contains("accepted"));
  Forecast unsure = sure;
  unsure.spread = 0.3;
  const Decision b = cal.decide(toy.c[0], unsure);
  CHECK(b.defer);
  CHECK_THAT(b.reason, Contains("beyond the certified"));
  Forecast failing = sure;
  failing.p_fail = 0.9;
  CHECK_THAT(cal.decide(toy.c[0], failing).reason, Contains("p_fail"));
  CHECK(cal.decide(toy.c[0], sure, 2.0).forecast.bin_probabilities.has_value());
  CHECK_THAT(cal.describe(), Contains("90% split intervals"));
}

TEST_CASE("calibrator input errors are clear") {
  const Toy toy = make_toy(50, 2);
  CalibrationOptions o;
  o.alpha = 0;
  CHECK_THROWS_WITH(SelectiveCalibrator::fit(toy.c, toy.f, toy.t, o), Contains("interval alpha must lie strictly"));
  o = {};
  o.delta = 1;
  CHECK_THROWS_WITH(SelectiveCalibrator::fit(toy.c, toy.f, toy.t, o), Contains("delta"));
  CHECK_THROWS_WITH(SelectiveCalibrator::fit({}, {}, {}, {}), Contains("empty"));
  auto t = toy.t;
  t[3] = std::nan("");
  CHECK_THROWS_WITH(SelectiveCalibrator::fit(toy.c, toy.f, t, {}), Contains("calibration runtime 3"));
  CHECK_THROWS_WITH(SelectiveCalibrator().decide(toy.c[0], toy.f[0]), Contains("before it was fitted"));
  o = {};
  o.confidence = ConfidenceScore::top_bin_probability;
  const auto c = SelectiveCalibrator::fit(toy.c, toy.f, toy.t, o);
  CHECK_THAT(c.decide(toy.c[0], toy.f[0]).reason, Contains("needs a reference"));
}

TEST_CASE("calibrator archive round trip") {
  const Toy toy = make_toy(500, 3);
  CalibrationOptions o;
  o.group_by = GroupBy::device;
  o.aci_gamma = 0.01;
  o.deferral_fraction = 0.5;
  auto cal = SelectiveCalibrator::fit(toy.c, toy.f, toy.t, o);
  cal.update(toy.c[0], toy.f[0], 1.5);
  ArchiveWriter w;
  cal.save(w);
  ArchiveReader r(w.data(), "test");
  const auto back = SelectiveCalibrator::load(r);
  CHECK(r.at_end());
  for (std::size_t i = 0; i < 20; ++i) {
    const auto a = cal.decide(toy.c[i], toy.f[i]);
    const auto b = back.decide(toy.c[i], toy.f[i]);
    CHECK(a.interval_low_ms == b.interval_low_ms);
    CHECK(a.interval_high_ms == b.interval_high_ms);
    CHECK(a.defer == b.defer);
  }
  CHECK(back.adaptive()->steps() == 1);
  CHECK(back.options().group_by == GroupBy::device);
  // A truncated archive fails cleanly.
  ArchiveReader cut(std::string_view(w.data()).substr(0, w.data().size() / 2), "cut");
  CHECK_THROWS_AS(SelectiveCalibrator::load(cut), model_file_error);
}

TEST_CASE("decide_all gives the calibrator's decision on each forecast, or defers each without one") {
  const Toy toy = make_toy(1000, 4);
  const SelectiveCalibrator calibrator = SelectiveCalibrator::fit(toy.c, toy.f, toy.t, {});
  const std::span<const Candidate> three(toy.c.data(), 3);
  const std::vector<Forecast> f = confident_forecasts(3);
  const auto d = decide_all(&calibrator, three, f, std::nullopt, "unused");
  REQUIRE(d.size() == 3);
  for (std::size_t i = 0; i < d.size(); ++i) {
    const Decision one = calibrator.decide(three[i], f[i]);
    CHECK(d[i].defer == one.defer);
    CHECK(d[i].interval_low_ms == one.interval_low_ms);
    CHECK(d[i].reason == one.reason);
  }
  CHECK_FALSE(d[0].defer);  // spread 0.05: P(error > 10%) = 2 Phi(-2) = 4.6% < alpha
  const auto none = decide_all(nullptr, three, f, std::nullopt, "not calibrated yet");
  for (const Decision& n : none) {
    CHECK(n.defer);
    CHECK(n.reason == "not calibrated yet");
    CHECK(n.interval_low_ms == 0.9);
    CHECK(n.interval_high_ms == 1.1);
  }
  CHECK_THROWS_AS(decide_all(&calibrator, three, std::span(f).first(2), std::nullopt, ""), invalid_argument_error);
}
