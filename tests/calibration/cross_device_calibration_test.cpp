// Cross-device calibration: the walk over shares and its allowance k against rehearsal GPUs whose
// forecasts are known to be right or wrong, the check, the input checks, the archive round trip
// and the model file's rehearsal section. The rotation on real spaces is in
// cross_device_calibration_rotation_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "calibration/cross_device_calibration.hpp"
#include "calibration/rehearsal_file.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

// A GPU of 200 configurations whose forecasts are `factor` times too slow on the `wrong` most
// confident of them (narrowest spread) and within 3% elsewhere.
RehearsalDevice synthetic_gpu(const std::string& name, std::size_t wrong = 0, double factor = 2) {
  RehearsalDevice d;
  d.name = name;
  const auto device = std::make_shared<const Device>(Device::unknown(name));
  const auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"x"});
  for (std::size_t i = 0; i < 200; ++i) {
    Candidate c;
    c.kernel = "k";
    c.device = device;
    c.config = Config(names, {Value(static_cast<std::int64_t>(i))});
    const double t = 1 + 0.01 * static_cast<double>(i);
    Forecast f;
    f.median_ms = i < wrong ? t * factor : t;
    f.spread = 0.05 + 0.001 * static_cast<double>(i);  // the first are the most confident
    f.lower_ms = f.median_ms * std::exp(-f.spread);
    f.upper_ms = f.median_ms * std::exp(f.spread);
    d.candidates.push_back(c);
    d.forecasts.push_back(f);
    // A few percent off, within the 10% tolerance: the intervals get a width to rank by.
    d.observed_ms.push_back(t * (1 + 0.03 * std::sin(static_cast<double>(i))));
  }
  return d;
}

CrossDeviceOptions relative_error_options(std::size_t k, std::uint64_t seed = 1) {
  CrossDeviceOptions o;
  o.samples = k;
  o.calibration.seed = seed;
  return o;  // relative_error, interval width, alpha = delta = 0.1
}

std::vector<RehearsalDevice> synthetic_gpus(std::size_t n) {
  std::vector<RehearsalDevice> gpus;
  for (std::size_t i = 0; i < n; ++i) gpus.push_back(synthetic_gpu("gpu" + std::to_string(i)));
  return gpus;
}

}  // namespace

TEST_CASE("cross-device rule: k of n rehearsal GPUs may fail, with (k + 1) / (n + 1) <= delta") {
  // Nine exact GPUs: k = 0, everything certified.
  auto gpus = synthetic_gpus(9);
  auto rule = rehearse_new_device(gpus, relative_error_options(0));
  CHECK(rule.devices == 9);
  CHECK(rule.allowed_failures == 0);
  REQUIRE(rule.any_valid);
  CHECK(rule.share == Approx(1.0));
  CHECK_THAT(rule.describe(), Contains("100% most confident"));

  // One GPU wrong on its 30 most confident (15% of it): it fails from the first share on, and
  // with k = 0 nothing is certified.
  gpus[4] = synthetic_gpu("gpu4", 30);
  rule = rehearse_new_device(gpus, relative_error_options(0));
  CHECK(rule.outcomes[4].failed_at == 0);
  CHECK_FALSE(rule.any_valid);
  CHECK_THAT(rule.describe(), Contains("more than 0 of them exceed 0.1"));

  // Nineteen GPUs allow one failure (0.1 * 20 = 2 slots): the same bad GPU no longer blocks.
  for (std::size_t i = 9; i < 19; ++i) gpus.push_back(synthetic_gpu("gpu" + std::to_string(i)));
  rule = rehearse_new_device(gpus, relative_error_options(0));
  CHECK(rule.allowed_failures == 1);
  REQUIRE(rule.any_valid);
  CHECK(rule.share == Approx(1.0));

  // A second GPU wrong on its 60 most confident (30%) fails at every share up to about 0.3/0.1:
  // the walk stops before the first share at which two have failed.
  gpus[11] = synthetic_gpu("gpu11", 60);
  rule = rehearse_new_device(gpus, relative_error_options(0));
  REQUIRE_FALSE(rule.any_valid);
  // Wrong only on its 10 most confident (5%): its risk falls below 0.1 from a share of 0.5 on
  // (10 of 100 answered is not above 0.1), so it fails at the first share only.
  gpus[11] = synthetic_gpu("gpu11", 10);
  rule = rehearse_new_device(gpus, relative_error_options(0));
  CHECK(rule.outcomes[11].failed_at == 0);
  CHECK(rule.steps.front().failed == 2);
  CHECK_FALSE(rule.any_valid);  // a failure counts from the share it first happened at
}

TEST_CASE("cross-device rule: a GPU whose own K measurements fail the check answers nothing, rehearsing or new") {
  // A GPU whose forecasts are off by a factor that varies from configuration to configuration:
  // no correction fitted on the others saves a left-out measurement.
  auto erratic = [](const std::string& name) {
    RehearsalDevice d = synthetic_gpu(name);
    for (std::size_t i = 0; i < d.observed_ms.size(); ++i) d.observed_ms[i] *= i % 2 ? 1.6 : 0.6;
    return d;
  };
  auto gpus = synthetic_gpus(9);
  gpus[2] = erratic("gpu2");
  const auto rule = rehearse_new_device(gpus, relative_error_options(10));
  CHECK(rule.outcomes[2].check_loss > 0.5);
  CHECK(rule.outcomes[2].answered == 0);
  CHECK(rule.outcomes[2].failed_at == static_cast<std::size_t>(-1));
  CHECK(rule.outcomes[0].check_loss == 0);
  REQUIRE(rule.any_valid);  // it deferred instead of failing
  CHECK(rule.share == Approx(1.0));

  const auto target = erratic("new");
  const auto c = std::span(target.candidates).first(10);
  const auto f = std::span(target.forecasts).first(10);
  const auto t = std::span(target.observed_ms).first(10);
  const auto adapted = adapt_with_rule(rule, "new", c, f, t, target.candidates, target.forecasts);
  const auto& [cal, check] = std::tie(adapted.calibrator, adapted.check);
  CHECK_FALSE(check.passed);
  CHECK(check.loss_share > 0.5);
  for (std::size_t i = 10; i < 60; ++i) CHECK(cal.decide(target.candidates[i], target.forecasts[i]).defer);
  CrossDeviceOptions bad = relative_error_options(10);
  bad.check_max_loss = 1.5;
  CHECK_THROWS_WITH(rehearse_new_device(gpus, bad), Contains("check_max_loss"));
}

TEST_CASE("cross-device rule: the rehearsal chooses the check's limit under which its GPUs answer the most") {
  // 50% slow on 24 of 200 configurations (12%; the correction fits an offset alone, which they
  // move by 5%, so the right ones stay right): the least confident (the walk reaches them last)
  // or the most confident (the walk fails at once where such a GPU is let in).
  auto wrong_least_confident = [](const std::string& name) {
    RehearsalDevice d = synthetic_gpu(name);
    for (std::size_t i = d.forecasts.size() - 24; i < d.forecasts.size(); ++i) {
      d.forecasts[i].median_ms *= 1.5;
      d.forecasts[i].lower_ms *= 1.5;
      d.forecasts[i].upper_ms *= 1.5;
    }
    return d;
  };
  const auto passing = [](const CrossDeviceRule& rule) {
    std::size_t n = 0;
    for (const auto& o : rule.outcomes) n += o.check_loss <= rule.options.check_max_loss;
    return n;
  };
  CrossDeviceOptions chooses = relative_error_options(20);
  chooses.fit_slope = false;
  CrossDeviceOptions fixed = chooses;
  fixed.choose_check = false;

  // Most GPUs lose more than 10% of K, yet their most confident 95% are right: a looser limit
  // lets them answer.
  std::vector<RehearsalDevice> gpus;
  for (std::size_t i = 0; i < 9; ++i) gpus.push_back(wrong_least_confident("gpu" + std::to_string(i)));
  const auto chosen = rehearse_new_device(gpus, chooses);
  const auto at_ten = rehearse_new_device(gpus, fixed);
  for (const auto& o : chosen.outcomes) UNSCOPED_INFO(o.name << ": check " << o.check_loss << ", fails at step " << o.failed_at);
  CHECK(chosen.options.check_max_loss > 0.1);
  CHECK(passing(chosen) > passing(at_ten));
  REQUIRE(chosen.any_valid);
  CHECK(chosen.share >= 0.8);
  CHECK_THAT(chosen.describe(), Contains("the limit under which the rehearsal GPUs answer the most"));
  CHECK_THAT(at_ten.describe(), Contains("lose more than 10%") && Contains("as given"));

  // Eight exact GPUs and one wrong on its most confident 12%: let in, it would end the walk at
  // the first share; the chosen limit keeps it out and the others answer everything.
  auto mixed = synthetic_gpus(9);
  mixed[1] = synthetic_gpu("gpu1", 24, 1.5);
  const auto guarded = rehearse_new_device(mixed, chooses);
  INFO("gpu1: check " << guarded.outcomes[1].check_loss << ", limit " << guarded.options.check_max_loss);
  CHECK(guarded.options.check_max_loss < guarded.outcomes[1].check_loss);
  REQUIRE(guarded.any_valid);
  CHECK(guarded.share == Approx(1.0));
  CrossDeviceOptions loose = fixed;
  loose.check_max_loss = 0.25;
  CHECK_FALSE(rehearse_new_device(mixed, loose).any_valid);
}

TEST_CASE("cross-device rule: too few rehearsal GPUs for delta defer everything, and say so") {
  const auto gpus = synthetic_gpus(8);
  const auto rule = rehearse_new_device(gpus, relative_error_options(0));
  CHECK_FALSE(rule.any_valid);
  CHECK_THAT(rule.describe(), Contains("8 GPUs are too few for delta 0.1 (need 9)"));
  const auto target = synthetic_gpu("new");
  const auto cal = adapt_with_rule(rule, "new", {}, {}, {}, target.candidates, target.forecasts).calibrator;
  for (std::size_t i = 0; i < 20; ++i) CHECK(cal.decide(target.candidates[i], target.forecasts[i]).defer);
}

TEST_CASE("cross-device calibration: the new GPU answers the certified share of its configurations, corrected") {
  const auto gpus = synthetic_gpus(9);
  // Ten measurements of a narrow range of runtimes say little of a slope: the offset alone.
  CrossDeviceOptions o = relative_error_options(10);
  o.fit_slope = false;
  const auto rule = rehearse_new_device(gpus, o);
  REQUIRE(rule.any_valid);
  // The new GPU runs everything 1.5x slower than forecast: ten measurements correct that.
  auto target = synthetic_gpu("new");
  for (auto& t : target.observed_ms) t *= 1.5;
  const auto k = std::span(target.candidates).first(10);
  const auto adapted = adapt_with_rule(rule, "new", k, std::span(target.forecasts).first(10),
                                       std::span(target.observed_ms).first(10), target.candidates, target.forecasts);
  const auto& [cal, check] = std::tie(adapted.calibrator, adapted.check);
  CHECK(check.passed);
  REQUIRE(cal.device_scope());
  const Forecast corrected = cal.device_scope()->correction.apply(target.forecasts[100]);
  CHECK(corrected.median_ms == Approx(1.5 * target.forecasts[100].median_ms).epsilon(0.05));
  std::size_t answered = 0;
  for (std::size_t i = 0; i < target.candidates.size(); ++i) {
    const Decision d = cal.decide(target.candidates[i], target.forecasts[i]);
    answered += !d.defer;
    if (!d.defer) CHECK(d.forecast.median_ms == Approx(target.observed_ms[i]).epsilon(0.05));
  }
  CHECK(answered == target.candidates.size());
  // Another device's candidate is deferred, as every device-scoped calibration does.
  const auto other = synthetic_gpu("other");
  CHECK(cal.decide(other.candidates[0], other.forecasts[0]).defer);

  // The archive keeps the threshold, the scope and the intervals.
  ArchiveWriter w;
  cal.save(w);
  ArchiveReader r(w.data(), "test");
  const auto back = SelectiveCalibrator::load(r);
  for (std::size_t i = 0; i < target.candidates.size(); i += 7) {
    const Decision a = cal.decide(target.candidates[i], target.forecasts[i]);
    const Decision b = back.decide(target.candidates[i], target.forecasts[i]);
    CHECK(a.defer == b.defer);
    CHECK(a.confidence == b.confidence);
  }
}

TEST_CASE("cross-device calibration names bad input") {
  auto gpus = synthetic_gpus(9);
  CHECK_THROWS_WITH(rehearse_new_device(gpus, relative_error_options(2)), Contains("2 measurements") && Contains("too few"));
  CrossDeviceOptions bins = relative_error_options(0);
  bins.calibration.loss = DeferralLoss::wrong_bin;
  CHECK_THROWS_WITH(rehearse_new_device(gpus, bins), Contains("wrong_bin") && Contains("K >= 3"));
  CHECK_THROWS_WITH(rehearse_new_device(gpus, relative_error_options(200)),
                    Contains("rehearsal device gpu0: 200 successful runs"));
  gpus[3].observed_ms[17] = std::nan("");
  CHECK_THROWS_WITH(rehearse_new_device(gpus, relative_error_options(5)), Contains("gpu3: runtime 17"));
  gpus[3] = synthetic_gpu("gpu3");
  gpus[5].forecasts.pop_back();
  CHECK_THROWS_WITH(rehearse_new_device(gpus, relative_error_options(5)), Contains("gpu5: 200 candidates, 199 forecasts"));
  gpus[5] = synthetic_gpu("gpu5");

  const auto rule = rehearse_new_device(gpus, relative_error_options(5));
  const auto target = synthetic_gpu("new");
  const auto c = std::span(target.candidates);
  const auto f = std::span(target.forecasts);
  const auto t = std::span(target.observed_ms);
  CHECK_THROWS_WITH(adapt_with_rule(rule, "new", c.first(6), f.first(6), t.first(6), c, f),
                    Contains("rehearsed for K = 5") && Contains("got 6 candidates"));
  CHECK_THROWS_WITH(adapt_with_rule(rule, "other", c.first(5), f.first(5), t.first(5), c, f),
                    Contains("measurement 0") && Contains("another device"));
  const auto stranger = synthetic_gpu("stranger");
  CHECK_THROWS_WITH(adapt_with_rule(rule, "new", c.first(5), f.first(5), t.first(5), stranger.candidates, f),
                    Contains("configuration 0") && Contains("another device"));
  CHECK_THROWS_WITH(adapt_with_rule(rule, "new", c.first(5), f.first(5), t.first(5), {}, {}),
                    Contains("0 configurations to decide"));
}

// Views (view_stacking.hpp): every GPU forecast as if on two training GPUs, one whose times it
// follows up to a factor (`sibling`) and one whose times it does not.
RehearsalDevice with_views(RehearsalDevice d, double sibling_factor) {
  for (std::size_t i = 0; i < d.forecasts.size(); ++i) {
    Forecast unlike = d.forecasts[i];
    const double scramble = 1 + 0.9 * std::sin(3.7 * static_cast<double>(i));  // 0.1x to 1.9x
    unlike.median_ms *= scramble;
    unlike.lower_ms *= scramble;
    unlike.upper_ms *= scramble;
    Forecast sibling = d.forecasts[i];
    sibling.median_ms *= sibling_factor;
    sibling.lower_ms *= sibling_factor;
    sibling.upper_ms *= sibling_factor;
    d.views.push_back({unlike, sibling});
  }
  d.forecasts.clear();
  return d;
}

TEST_CASE("cross-device calibration on views: the K measurements weigh each GPU's sibling view") {
  std::vector<RehearsalDevice> gpus;
  for (std::size_t i = 0; i < 9; ++i)
    gpus.push_back(with_views(synthetic_gpu("gpu" + std::to_string(i)), 0.5 + 0.2 * static_cast<double>(i)));
  const auto rule = rehearse_new_device(gpus, relative_error_options(20));
  CHECK(rule.stacked_views);
  REQUIRE(rule.any_valid);
  CHECK(rule.share == Approx(1.0));

  // Every tenth configuration measured: K = 20 across the whole range of runtimes.
  const auto target = with_views(synthetic_gpu("new"), 3.0);
  std::vector<Candidate> measured;
  std::vector<ViewForecasts> measured_views;
  std::vector<double> measured_ms;
  for (std::size_t i = 0; i < target.candidates.size(); i += 10) {
    measured.push_back(target.candidates[i]);
    measured_views.push_back(target.views[i]);
    measured_ms.push_back(target.observed_ms[i]);
  }
  const auto adapted =
      adapt_with_rule(rule, "new", measured, measured_views, measured_ms, target.candidates, target.views);
  CHECK(adapted.check.passed);
  REQUIRE(adapted.stacking);
  CHECK(adapted.stacking->weights[1] == Approx(1.0).margin(0.05));
  CHECK(adapted.stacking->weights[0] < 0.05);
  std::size_t answered = 0;
  for (std::size_t i = 0; i < target.candidates.size(); ++i) {
    if (i % 10 == 0) continue;
    const Decision d = adapted.calibrator.decide(target.candidates[i], adapted.stacking->apply(target.views[i]));
    answered += !d.defer;
    if (!d.defer) CHECK(d.forecast.median_ms == Approx(target.observed_ms[i]).epsilon(0.1));
  }
  CHECK(answered == 180);
  const auto k = std::span(target.candidates).first(20);
  const auto kv = std::span(target.views).first(20);
  const auto kt = std::span(target.observed_ms).first(20);

  // Views and single forecasts do not mix: the procedure must be the rehearsal's own.
  const auto single = synthetic_gpu("new");
  CHECK_THROWS_WITH(adapt_with_rule(rule, "new", k, std::span(single.forecasts).first(20), kt, target.candidates,
                                    single.forecasts),
                    Contains("rehearsed on views"));
  const auto plain = rehearse_new_device(synthetic_gpus(9), relative_error_options(20));
  CHECK_THROWS_WITH(adapt_with_rule(plain, "new", k, kv, kt, target.candidates, target.views),
                    Contains("rehearsed on single forecasts"));
  auto mixed = gpus;
  mixed[4] = synthetic_gpu("gpu4");
  CHECK_THROWS_WITH(rehearse_new_device(mixed, relative_error_options(20)),
                    Contains("rehearsal device gpu4 has no views where gpu0 has views"));
  CHECK_THROWS_WITH(rehearse_new_device(gpus, relative_error_options(3)), Contains("stacking views needs K >= 4"));
  mixed = gpus;
  mixed[2].views.pop_back();
  CHECK_THROWS_WITH(rehearse_new_device(mixed, relative_error_options(20)), Contains("gpu2: 200 candidates, 199 views"));
}

TEST_CASE("the model file's rehearsal section keeps every stored GPU, and a damaged one is named") {
  StoredRehearsal stored;
  stored.surrogate = "knn";
  stored.seed = 7;
  for (const std::string name : {"A100", "RTX 3090"}) {
    RehearsalSpace s{"gemm", name, "NVIDIA", synthetic_gpu(name)};
    s.data.forecasts[3].p_fail = 0.25;
    stored.spaces.push_back(std::move(s));
  }
  ModelFile file;
  set_rehearsal_section(file, stored);
  const auto back = rehearsal_from(file, "m.gfm");
  REQUIRE(back);
  CHECK(back->surrogate == "knn");
  CHECK(back->seed == 7);
  REQUIRE(back->spaces.size() == 2);
  const auto& s = back->spaces[1];
  CHECK(s.kernel == "gemm");
  CHECK(s.device == "RTX 3090");
  CHECK(s.vendor == "NVIDIA");
  CHECK(s.data.name == "gemm/RTX 3090");
  REQUIRE(s.data.forecasts.size() == 200);
  CHECK(s.data.forecasts[3].p_fail == 0.25);
  CHECK(s.data.forecasts[50].median_ms == stored.spaces[1].data.forecasts[50].median_ms);
  CHECK(s.data.forecasts[50].spread == stored.spaces[1].data.forecasts[50].spread);
  CHECK(s.data.observed_ms == stored.spaces[1].data.observed_ms);
  CHECK(s.data.candidates[9].device->name == "RTX 3090");
  // The rule reads the same from the stored forecasts as from the originals.
  std::vector<RehearsalDevice> original, loaded;
  for (std::size_t i = 0; i < 9; ++i) {
    original.push_back(stored.spaces[i % 2].data);
    loaded.push_back(back->spaces[i % 2].data);
  }
  CHECK(rehearse_new_device(original, relative_error_options(10)).share ==
        rehearse_new_device(loaded, relative_error_options(10)).share);

  CHECK_FALSE(rehearsal_from(ModelFile{}, "m.gfm"));
  ModelFile damaged;
  damaged.set("rehearsal", file.find("rehearsal")->substr(0, 40));
  CHECK_THROWS_WITH(rehearsal_from(damaged, "m.gfm"), Contains("m.gfm [rehearsal section]"));
  ModelFile newer;
  std::string bytes = *file.find("rehearsal");
  bytes[0] = static_cast<char>(rehearsal_section_version + 1);  // the version, little-endian
  newer.set("rehearsal", bytes);
  CHECK_THROWS_WITH(rehearsal_from(newer, "m.gfm"), Contains("newer than this library"));
}

TEST_CASE("the rehearsal section keeps each GPU's views, and reads a section written before them") {
  StoredRehearsal stored;
  stored.surrogate = "knn";
  RehearsalSpace viewed{"gemm", "RTX 3090", "NVIDIA", with_views(synthetic_gpu("RTX 3090"), 2.0)};
  viewed.data.forecasts = synthetic_gpu("RTX 3090").forecasts;  // stored beside the views
  viewed.view_devices = {"RTX 3060 Laptop GPU", "TITAN RTX"};
  stored.spaces.push_back(viewed);
  stored.spaces.push_back({"gemm", "TITAN RTX", "NVIDIA", synthetic_gpu("TITAN RTX"), {}});
  ModelFile file;
  set_rehearsal_section(file, stored);
  const auto back = rehearsal_from(file, "m.gfm");
  REQUIRE(back);
  REQUIRE(back->spaces.size() == 2);
  const auto& s = back->spaces[0];
  CHECK(s.view_devices == viewed.view_devices);
  REQUIRE(s.data.views.size() == 200);
  REQUIRE(s.data.views[17].size() == 2);
  CHECK(s.data.views[17][1].median_ms == viewed.data.views[17][1].median_ms);
  CHECK(s.data.views[17][0].upper_ms == viewed.data.views[17][0].upper_ms);
  CHECK(s.data.forecasts[17].median_ms == viewed.data.forecasts[17].median_ms);
  CHECK(back->spaces[1].view_devices.empty());
  CHECK(back->spaces[1].data.views.empty());

  // Version 1 (no views; the forecasts' columns before the runtimes) still reads.
  ArchiveWriter w;
  w.u32(1);
  w.str("knn");
  w.u64(3);
  w.u64(1);
  w.str("gemm");
  w.str("TITAN RTX");
  w.str("NVIDIA");
  for (const double v : {1.0, 0.9, 1.2, 0.0, 0.1}) w.f64s({v, v, v});
  w.f64s({1.1, 1.2, 1.3});
  ModelFile old;
  old.set("rehearsal", w.data());
  const auto v1 = rehearsal_from(old, "old.gfm");
  REQUIRE(v1);
  REQUIRE(v1->spaces.size() == 1);
  CHECK(v1->spaces[0].data.observed_ms == std::vector<double>{1.1, 1.2, 1.3});
  CHECK(v1->spaces[0].data.forecasts[2].upper_ms == 1.2);
  CHECK(v1->spaces[0].data.views.empty());
}
