// Trust on a new GPU after K measurements: the log-affine correction against known maps, the
// device scope (other devices deferred, the archive round trip), the input checks, and the
// guarantee on real data: a k-NN trained on 1,500 runs of convolution_milo's A100 and A6000
// meets the A4000, K = 50 random measurements of which adapt and certify, 100 times; and with
// views, pnpoly's RTX 2080 Ti through a k-NN of each other GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "calibration/device_adaptation.hpp"
#include "calibration/view_stacking.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "support/data.hpp"
#include "support/forecasts.hpp"
#include "surrogate/knn.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

// Every synthetic forecast here has the same relative interval.
Forecast forecast_of(double ms) { return test::forecast_around(ms, 1.5, 0.2); }

// The k-NN's forecasts of every valid A4000 configuration, trained on the other two NVIDIA GPUs.
struct NewDevice {
  std::vector<Candidate> candidates;
  std::vector<Forecast> forecasts;
  std::vector<double> times;
  std::string device;
};

const NewDevice& a4000_from_a100_a6000() {
  static const NewDevice d = [] {
    // A seeded 1,500 of the two GPUs' 8,000 runs: the k-NN's forecasts stay informative and
    // cheap enough for the sanitizer build (every test case is its own process).
    std::vector<Observation> train;
    for (const char* dev : {"A100", "A6000"}) {
      const SpaceData s = load_space(test::cache_file("convolution_milo", dev).string());
      for (const auto& o : s.observations)
        if (o.measurement.ok() && o.measurement.median_ms > 0) train.push_back(o);
    }
    std::mt19937_64 rng(11);
    std::shuffle(train.begin(), train.end(), rng);
    train.resize(1500);
    KnnSurrogate knn;
    knn.fit(train);
    const SpaceData target = load_space(test::cache_file("convolution_milo", "A4000").string());
    NewDevice out;
    out.device = target.device->name;
    for (const auto& o : target.observations)
      if (o.measurement.ok() && o.measurement.median_ms > 0) {
        out.candidates.push_back(o.candidate);
        out.times.push_back(o.measurement.median_ms);
      }
    out.forecasts = knn.predict(out.candidates);
    return out;
  }();
  return d;
}

DeviceAdaptationOptions wrong_bin_options(std::uint64_t seed) {
  DeviceAdaptationOptions o;
  o.calibration.loss = DeferralLoss::wrong_bin;
  o.calibration.confidence = ConfidenceScore::top_bin_probability;
  o.calibration.seed = seed;
  return o;
}

}  // namespace

TEST_CASE("the forecast correction recovers a log-affine map, and an offset alone when asked") {
  std::vector<Forecast> f;
  std::vector<double> t;
  for (int i = 1; i <= 20; ++i) {
    f.push_back(forecast_of(0.1 * i));
    t.push_back(std::exp(0.7 + 0.8 * std::log(0.1 * i)));
  }
  const auto c = fit_forecast_correction(f, t);
  CHECK(c.offset == Approx(0.7).margin(1e-9));
  CHECK(c.slope == Approx(0.8).margin(1e-9));
  const Forecast g = c.apply(f[4]);
  CHECK(g.median_ms == Approx(t[4]));
  CHECK(g.lower_ms < g.median_ms);
  CHECK(g.upper_ms > g.median_ms);
  CHECK(g.spread == Approx(0.8 * 0.2));
  // Offset only: the mean log ratio.
  const auto offset_only = fit_forecast_correction(f, t, false);
  CHECK(offset_only.slope == 1.0);
  double mean = 0;
  for (std::size_t i = 0; i < f.size(); ++i) mean += std::log(t[i] / f[i].median_ms) / static_cast<double>(f.size());
  CHECK(offset_only.offset == Approx(mean));
  // Under 8 points the slope stays 1 even when asked for.
  CHECK(fit_forecast_correction(std::span(f).first(5), std::span(t).first(5)).slope == 1.0);
  // A slope far outside what a device shift does is clamped.
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = std::exp(10 * std::log(f[i].median_ms));
  CHECK(fit_forecast_correction(f, t).slope == Approx(3.0));
}

TEST_CASE("the forecast correction and adapt_to_device name bad input") {
  std::vector<Forecast> f{forecast_of(1), forecast_of(2)};
  std::vector<double> t{1, 2};
  CHECK_THROWS_WITH(fit_forecast_correction(f, t), Contains("at least 3 points"));
  f.push_back(forecast_of(3));
  t.push_back(std::nan(""));
  CHECK_THROWS_WITH(fit_forecast_correction(f, t), Contains("measured runtime 2"));
  t.pop_back();
  CHECK_THROWS_WITH(fit_forecast_correction(f, t), Contains("one runtime per forecast"));

  const NewDevice& d = a4000_from_a100_a6000();
  const auto c = std::span(d.candidates).first(50);
  const auto fc = std::span(d.forecasts).first(50);
  const auto tc = std::span(d.times).first(50);
  CHECK_THROWS_WITH(adapt_to_device("RTX A6000", c, fc, tc), Contains("measurement 0") && Contains("another device"));
  CHECK_THROWS_WITH(adapt_to_device(d.device, c.first(8), fc.first(8), tc.first(8)),
                    Contains("8 measurements") && Contains("need 3"));
  CHECK_THROWS_WITH(adapt_to_device(d.device, c, fc, tc.first(49)), Contains("as many candidates"));
  DeviceAdaptationOptions o;
  o.adapt_fraction = 1;
  CHECK_THROWS_WITH(adapt_to_device(d.device, c, fc, tc, o), Contains("adapt_fraction"));
  std::vector<double> bad(tc.begin(), tc.end());
  bad[7] = -1;
  CHECK_THROWS_WITH(adapt_to_device(d.device, c, fc, bad), Contains("measured runtime 7"));
}

TEST_CASE("a device-adapted calibration corrects its device's forecasts and defers every other device") {
  const NewDevice& d = a4000_from_a100_a6000();
  const auto cal = adapt_to_device(d.device, std::span(d.candidates).first(50), std::span(d.forecasts).first(50),
                                   std::span(d.times).first(50), wrong_bin_options(3));
  REQUIRE(cal.device_scope());
  CHECK(cal.device_scope()->device == d.device);
  CHECK(cal.device_scope()->adapt_points == 15);
  CHECK(cal.deferral().calibration_size == 35);
  CHECK(cal.options().reference_ms > 0);
  CHECK_THAT(cal.describe(), Contains("device " + d.device + " only"));
  // The corrected median is what the decision reports.
  const Decision mine = cal.decide(d.candidates[100], d.forecasts[100]);
  CHECK(mine.forecast.median_ms == Approx(cal.device_scope()->correction.apply(d.forecasts[100]).median_ms));
  CHECK(mine.forecast.bin_probabilities.has_value());  // against the certified reference
  Candidate other = d.candidates[100];
  other.device = std::make_shared<const Device>(Device::unknown("RTX A6000"));
  const Decision theirs = cal.decide(other, d.forecasts[100]);
  CHECK(theirs.defer);
  CHECK_THAT(theirs.reason, Contains("calibrated for device " + d.device + " only"));

  // The archive keeps the scope and the reference: identical decisions after a round trip.
  ArchiveWriter w;
  cal.save(w);
  ArchiveReader r(w.data(), "test");
  const auto back = SelectiveCalibrator::load(r);
  CHECK(r.at_end());
  REQUIRE(back.device_scope());
  CHECK(back.device_scope()->correction.slope == cal.device_scope()->correction.slope);
  CHECK(back.options().reference_ms == cal.options().reference_ms);
  for (std::size_t i = 50; i < 150; ++i) {
    const Decision a = cal.decide(d.candidates[i], d.forecasts[i]);
    const Decision b = back.decide(d.candidates[i], d.forecasts[i]);
    CHECK(a.defer == b.defer);
    CHECK(a.confidence == b.confidence);
  }
}

// K = 50 random A4000 measurements adapt and certify; every other A4000 configuration is
// decided. The realised risk among the answered exceeds alpha in at most delta of the runs
// (plus two binomial standard deviations: 16 of 100), and the correction is what makes answers
// possible: it answers some configurations in most runs and shrinks the forecasts' log error.
TEST_CASE("on a new GPU, 50 measurements certify a wrong-bin rule whose realised risk holds (convolution_milo A4000)") {
  const NewDevice& d = a4000_from_a100_a6000();
  const std::size_t k = 50, runs = 100;
  std::size_t over = 0, answering_runs = 0, answered_total = 0;
  double raw_log_error = 0, corrected_log_error = 0;
  for (std::size_t seed = 1; seed <= runs; ++seed) {
    std::vector<std::size_t> order(d.candidates.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<Candidate> c;
    std::vector<Forecast> f;
    std::vector<double> t;
    for (std::size_t i = 0; i < k; ++i) {
      c.push_back(d.candidates[order[i]]);
      f.push_back(d.forecasts[order[i]]);
      t.push_back(d.times[order[i]]);
    }
    const auto cal = adapt_to_device(d.device, c, f, t, wrong_bin_options(seed));
    std::size_t answered = 0, losses = 0;
    for (std::size_t j = k; j < order.size(); ++j) {
      const std::size_t i = order[j];
      const Decision dec = cal.decide(d.candidates[i], d.forecasts[i]);
      raw_log_error += std::abs(std::log(d.forecasts[i].median_ms / d.times[i]));
      corrected_log_error += std::abs(std::log(dec.forecast.median_ms / d.times[i]));
      if (dec.defer) continue;
      ++answered;
      losses += wrong_bin_loss(dec.forecast, d.times[i], cal.options().reference_ms) > 0.5;
    }
    answered_total += answered;
    if (answered) ++answering_runs;
    if (answered && static_cast<double>(losses) > 0.1 * static_cast<double>(answered)) {
      ++over;
      UNSCOPED_INFO("seed " << seed << ": " << losses << " wrong of " << answered << " answered");
    }
  }
  INFO("runs over alpha " << over << ", runs answering " << answering_runs << ", answered " << answered_total
                          << ", summed |log error| raw " << raw_log_error << " corrected " << corrected_log_error);
  CHECK(over <= 16);
  CHECK(answering_runs >= 8);
  CHECK(corrected_log_error < 0.8 * raw_log_error);
}

namespace {

// pnpoly's RTX 2080 Ti forecast by a k-NN of its kernel's other three GPUs together (single) and
// by a k-NN of each (views, in the order Titan, 3060 laptop, 3090); each fitted on a seeded
// 1,500 of its runs.
struct NewDeviceWithViews {
  NewDevice single;
  std::vector<ViewForecasts> views;
};

std::vector<Observation> seeded_runs(const SpaceData& s, std::size_t n, std::uint64_t seed) {
  std::vector<Observation> runs;
  for (const auto& o : s.observations)
    if (o.measurement.ok() && o.measurement.median_ms > 0) runs.push_back(o);
  std::mt19937_64 rng(seed);
  std::shuffle(runs.begin(), runs.end(), rng);
  runs.resize(std::min(n, runs.size()));
  return runs;
}

const NewDeviceWithViews& rtx2080ti_with_views() {
  static const NewDeviceWithViews d = [] {
    const SpaceData target = load_space(test::cache_file("pnpoly", "RTX_2080_Ti").string());
    NewDeviceWithViews out;
    out.single.device = target.device->name;
    for (const auto& o : target.observations)
      if (o.measurement.ok() && o.measurement.median_ms > 0) {
        out.single.candidates.push_back(o.candidate);
        out.single.times.push_back(o.measurement.median_ms);
      }
    std::vector<Observation> together;
    std::vector<std::vector<Forecast>> per_view;
    for (const char* dev : {"RTX_Titan", "RTX_3060_laptop", "RTX_3090"}) {
      const SpaceData s = load_space(test::cache_file("pnpoly", dev).string());
      const auto runs = seeded_runs(s, 1500, 5);
      together.insert(together.end(), runs.begin(), runs.begin() + 500);
      KnnSurrogate view;
      view.fit(runs);
      // A view forecasts the configuration as it runs on its own GPU.
      std::vector<Candidate> as_there = out.single.candidates;
      for (auto& c : as_there) c.device = s.device;
      per_view.push_back(view.predict(as_there));
    }
    KnnSurrogate knn;
    knn.fit(together);
    out.single.forecasts = knn.predict(out.single.candidates);
    for (std::size_t i = 0; i < out.single.candidates.size(); ++i)
      out.views.push_back({per_view[0][i], per_view[1][i], per_view[2][i]});
    return out;
  }();
  return d;
}

}  // namespace

// K = 50 random measurements, 20 times, under the wrong-bin loss. The single model blends the
// three GPUs; the views let the K measurements pick the Titan RTX, the 2080 Ti's sibling. Realised
// risk above alpha in at most 4 of 20 runs (delta * 20 plus two binomial standard deviations).
TEST_CASE("with views, 50 measurements of a new GPU stack its sibling's view and answer more (pnpoly RTX 2080 Ti)") {
  const NewDeviceWithViews& d = rtx2080ti_with_views();
  const std::size_t k = 50, runs = 20;
  std::size_t over = 0, answered_views = 0, answered_single = 0, titan_heaviest = 0;
  for (std::size_t seed = 1; seed <= runs; ++seed) {
    std::vector<std::size_t> order(d.single.candidates.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<Candidate> c;
    std::vector<Forecast> f;
    std::vector<ViewForecasts> v;
    std::vector<double> t;
    for (std::size_t i = 0; i < k; ++i) {
      c.push_back(d.single.candidates[order[i]]);
      f.push_back(d.single.forecasts[order[i]]);
      v.push_back(d.views[order[i]]);
      t.push_back(d.single.times[order[i]]);
    }
    const auto single = adapt_to_device(d.single.device, c, f, t, wrong_bin_options(seed));
    const auto stacked = adapt_to_device(d.single.device, c, v, t, wrong_bin_options(seed));
    const auto& w = stacked.stacking.weights;
    titan_heaviest += w[0] > w[1] && w[0] > w[2];
    CHECK(stacked.calibrator.device_scope()->device == d.single.device);
    std::size_t answered = 0, losses = 0;
    for (std::size_t j = k; j < order.size(); ++j) {
      const std::size_t i = order[j];
      answered_single += !single.decide(d.single.candidates[i], d.single.forecasts[i]).defer;
      const Decision dec = stacked.calibrator.decide(d.single.candidates[i], stacked.stacking.apply(d.views[i]));
      if (dec.defer) continue;
      ++answered;
      losses += wrong_bin_loss(dec.forecast, d.single.times[i], stacked.calibrator.options().reference_ms) > 0.5;
    }
    answered_views += answered;
    if (answered && static_cast<double>(losses) > 0.1 * static_cast<double>(answered)) {
      ++over;
      UNSCOPED_INFO("seed " << seed << ": " << losses << " wrong of " << answered << " answered");
    }
  }
  INFO("answered with views " << answered_views << ", single " << answered_single << "; Titan heaviest in "
                              << titan_heaviest << " of " << runs);
  CHECK(over <= 4);
  CHECK(titan_heaviest >= 15);
  CHECK(answered_views > 2 * answered_single + 1000);
}

TEST_CASE("adapting with views names bad input") {
  const NewDeviceWithViews& d = rtx2080ti_with_views();
  const auto c = std::span(d.single.candidates).first(50);
  const auto v = std::span(d.views).first(50);
  const auto t = std::span(d.single.times).first(50);
  // K = 10 at the default 0.3 leaves 3 to adapt: too few to stack each by the others.
  CHECK_THROWS_WITH(adapt_to_device(d.single.device, c.first(10), v.first(10), t.first(10)),
                    Contains("give 3 to stack the views and fit the correction (need 4; the single forecasts need 3)"));
  CHECK_THROWS_WITH(adapt_to_device(d.single.device, c, v.first(49), t), Contains("as many candidates"));
  CHECK_THROWS_WITH(adapt_to_device("RTX A6000", c, v, t), Contains("measurement 0") && Contains("another device"));
}
