// for_new_device(): a Model of convolution_milo's RTX A4000, which it was not trained on, from a
// tenth of the A4000's space, through views of the A100 and the A6000; its forecasts, the
// other devices left as they were, child pairs on it through compare(), what it refuses, and the
// model file `gpuforecast adapt` writes of it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "api/new_device_file.hpp"
#include "calibration/calibrate_model_file.hpp"
#include "calibration/candidate_pairs.hpp"
#include "calibration/pairwise_selective.hpp"
#include "calibration/view_models.hpp"
#include "compose/model_impl.hpp"
#include "gpuforecast/compare.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/forecast.hpp"
#include "data/temp_dir.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "support/knn_model.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

std::vector<Observation> successful(const std::string& device) {
  return test::successful_observations("convolution_milo", device);
}

// A k-NN trained on the A100 and the A6000 together, holding a k-NN view of each (k-NN: fast).
const Model& siblings_model() {
  static const Model m = [] {
    std::vector<Observation> both = successful("A100");
    const auto a6000 = successful("A6000");
    both.insert(both.end(), a6000.begin(), a6000.end());
    AnySurrogate knn = make_surrogate("knn", 0);
    knn.fit(both);
    const std::vector<std::string> files{test::cache_file("convolution_milo", "A100").string(),
                                         test::cache_file("convolution_milo", "A6000").string()};
    return make_model(std::move(knn), std::nullopt, fit_view_models(Dataset::load(files), "knn", 0));
  }();
  return m;
}

struct Split {
  std::vector<Observation> tenth, rest;
};

const Split& a4000() {
  static const Split s = [] {
    Split out;
    const auto all = successful("A4000");
    for (std::size_t i = 0; i < all.size(); ++i) (i % 10 == 3 ? out.tenth : out.rest).push_back(all[i]);
    return out;
  }();
  return s;
}

double median_abs_log_error(const Model& m, const std::vector<Observation>& points) {
  std::vector<Candidate> c;
  for (const auto& p : points) c.push_back(p.candidate);
  const auto d = forecast(m, c);
  std::vector<double> e;
  for (std::size_t i = 0; i < d.size(); ++i) e.push_back(std::abs(std::log(d[i].forecast.median_ms / points[i].measurement.median_ms)));
  std::nth_element(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(e.size() / 2), e.end());
  return e[e.size() / 2];
}

NewDeviceOptions knn_ratio() { return {.ratio_surrogate = "knn", .seed = 0}; }

}  // namespace

TEST_CASE("for_new_device forecasts the new GPU through its siblings' views, the others as before", "[api][data]") {
  const Model adapted = for_new_device(siblings_model(), a4000().tenth, knn_ratio());
  const double before = median_abs_log_error(siblings_model(), a4000().rest);
  const double after = median_abs_log_error(adapted, a4000().rest);
  INFO("median |log error| on the A4000's other points: the model " << before << ", adapted " << after);
  CHECK(after < 0.8 * before);

  // Not calibrated: every decision defers, and says the model is not calibrated.
  CHECK_FALSE(adapted.info().calibrated);
  CHECK_THAT(adapted.info().calibration, Contains("A4000") && Contains("not calibrated"));
  const Decision d = forecast(adapted, a4000().rest.front().candidate);
  CHECK(d.defer);

  // Another device's candidates: the model's own forecasts, unchanged.
  const auto a100 = successful("A100");
  const std::vector<Candidate> others{a100[0].candidate, a100[1].candidate};
  const auto mine = forecast(adapted, others), theirs = forecast(siblings_model(), others);
  for (std::size_t i = 0; i < others.size(); ++i) CHECK(mine[i].forecast.median_ms == theirs[i].forecast.median_ms);
}

TEST_CASE("child pairs on the new GPU through compare(): answered, and right as often as the rule says", "[api][data]") {
  const Model adapted = for_new_device(siblings_model(), a4000().tenth, knn_ratio());
  std::vector<Observation> calibration, held_out;
  for (std::size_t i = 0; i < a4000().rest.size(); ++i) (i % 2 ? held_out : calibration).push_back(a4000().rest[i]);
  PairCalibrationOptions o;
  o.kind = PairKind::child;
  o.pairs = 1500;
  o.seed = 5;
  const PairCalibration rule = calibrate_pairs(adapted, calibration, o);
  // The same rule fitted on the model that never saw the A4000 answers less: the views are the point.
  const PairCalibration plain = calibrate_pairs(siblings_model(), calibration, o);
  INFO("answered on the calibration pairs: adapted " << rule.answered_fraction() << ", the model " << plain.answered_fraction());
  CHECK(rule.answered_fraction() > plain.answered_fraction());

  // Held-out children against a measured neighbour as parent, each child once.
  std::vector<Config> configs;
  for (const auto& h : held_out) configs.push_back(h.candidate.config);
  const auto pairs = one_pair_per_child(neighbour_pairs(configs, std::numeric_limits<std::size_t>::max(), 7), 600);
  REQUIRE(pairs.size() >= 300);
  std::size_t answered = 0, wrong = 0;
  for (const auto& p : pairs) {
    const Observation& parent = held_out[p.reference];
    const Observation& child = held_out[p.candidate];
    const auto c = compare(adapted, rule, parent.candidate, parent.measurement.median_ms, std::span(&child.candidate, 1));
    REQUIRE(c.size() == 1);
    if (c[0].decision.defer) continue;
    ++answered;
    const double ms[] = {parent.measurement.median_ms, child.measurement.median_ms};
    const int bin = pair_true_bins(ms, std::vector<CandidatePair>{{0, 1}}).front();
    wrong += pair_loss(PairLoss::wrong_direction, c[0].decision.probabilities, bin) > 0;
  }
  INFO("held-out children answered " << answered << " of " << pairs.size() << ", wrong " << wrong);
  CHECK(answered >= pairs.size() / 4);
  CHECK(static_cast<double>(wrong) / answered <= 0.1 + 3 * std::sqrt(0.09 / answered));
}

TEST_CASE("for_new_device refuses what it cannot adapt to, by name", "[api][data]") {
  const auto& tenth = a4000().tenth;
  SECTION("no measurements") {
    CHECK_THROWS_WITH(for_new_device(siblings_model(), {}, knn_ratio()), Contains("no measurements"));
  }
  SECTION("measurements of two devices") {
    std::vector<Observation> mixed(tenth.begin(), tenth.begin() + 5);
    mixed.push_back(successful("A100").front());
    CHECK_THROWS_WITH(for_new_device(siblings_model(), mixed, knn_ratio()),
                      Contains("measurement 5 is of") && Contains("A100") && Contains("one kernel on one device"));
  }
  SECTION("a model without views") {
    CHECK_THROWS_WITH(for_new_device(test::convolution_knn_model(), tenth, knn_ratio()),
                      Contains("holds no views") && Contains("calibrate --rehearse"));
  }
  SECTION("no view of the device's vendor") {
    const auto w6600 = successful("W6600");
    CHECK_THROWS_WITH(for_new_device(siblings_model(), std::vector<Observation>(w6600.begin(), w6600.begin() + 50), knn_ratio()),
                      Contains("no view of convolution_milo on another AMD GPU") && Contains("(its views: A100"));
  }
  SECTION("too few successful measurements") {
    CHECK_THROWS_WITH(for_new_device(siblings_model(), std::vector<Observation>(tenth.begin(), tenth.begin() + 2), knn_ratio()),
                      Contains("2 successful measurements"));
  }
  SECTION("an unknown ratio surrogate") {
    CHECK_THROWS_WITH(for_new_device(siblings_model(), tenth, {.ratio_surrogate = "nonesuch", .seed = 0}),
                      Contains("nonesuch"));
  }
  SECTION("a configuration the model's check refuses, by row") {
    // (checked before anything else, so a model that knows the kernel's parameters, views or not)
    std::vector<Observation> bad(tenth.begin(), tenth.begin() + 10);
    bad[4].candidate.config = Config::parse("block_size_x=16");
    CHECK_THROWS_AS(for_new_device(test::convolution_knn_model(), bad, knn_ratio()), invalid_configuration_error);
    CHECK_THROWS_WITH(for_new_device(test::convolution_knn_model(), bad, knn_ratio()), Contains("configuration 4"));
  }
}

TEST_CASE("an adapted model file forecasts as the adapted Model does, and is not calibrated again", "[api][data]") {
  const test::TempDir dir;
  const std::string base = (dir.path() / "siblings.gfm").string(), out = (dir.path() / "a4000.gfm").string();
  const std::vector<std::string> siblings{test::cache_file("convolution_milo", "A100").string(),
                                          test::cache_file("convolution_milo", "A6000").string()};
  {
    const Dataset training = Dataset::load(siblings);
    AnySurrogate knn = make_surrogate("knn", 0);
    knn.fit(training.observations());
    save_surrogate(base, knn, TrainingSummary::of(training.observations()));
    ModelFile file = read_model_file(base);
    set_views_section(file, fit_view_models(training, "knn", 0));
    write_model_file(base, file);
  }
  const std::vector<std::string> a4000_file{test::cache_file("convolution_milo", "A4000").string()};
  const Model written = write_new_device_model(base, a4000_file, out, knn_ratio());
  const Model in_memory = for_new_device(load(base), Dataset::load(a4000_file).observations(), knn_ratio());
  std::vector<Candidate> some;
  for (std::size_t i = 0; i < a4000().rest.size(); i += 97) some.push_back(a4000().rest[i].candidate);
  // (the k-NN stores its training data in single precision)
  const auto a = forecast(load(out), some), b = forecast(in_memory, some);
  for (std::size_t i = 0; i < some.size(); ++i) CHECK(a[i].forecast.median_ms == Approx(b[i].forecast.median_ms).epsilon(1e-5));
  CHECK_FALSE(written.info().calibrated);
  CHECK(written.info().path == out);
  CHECK_THAT(written.info().calibration, Contains("RTX A4000") && Contains("not calibrated"));

  SECTION("a calibration of the model's own forecasts is refused") {
    CHECK_THROWS_WITH(calibrate_model_file(out, a4000_file, (dir.path() / "x.gfm").string(), {}),
                      Contains("through views stacked by gpuforecast adapt"));
  }
  SECTION("a file that lost the views it stacks is refused by name") {
    ModelFile file = read_model_file(out);
    std::erase_if(file.sections, [](const auto& s) { return s.first == "views"; });
    write_model_file(out, file);
    CHECK_THROWS_AS(load(out), model_file_error);
    CHECK_THROWS_WITH(load(out), Contains("new_device section") && Contains("does not hold"));
  }
}
