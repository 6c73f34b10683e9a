// The views of other GPUs stacked by a new GPU's own measurements and corrected by a surrogate of
// what they miss: convolution_milo's RTX A4000 with a tenth of its space measured, leaning on the
// default surrogate's models of the A100 and the A6000.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "calibration/pairwise_protocol.hpp"
#include "calibration/stacked_views_surrogate.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "support/data.hpp"
#include "surrogate/evaluation.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

const ViewModels& sibling_views() {
  static const ViewModels v = [] {
    const std::vector<std::string> files{test::cache_file("convolution_milo", "A100").string(),
                                         test::cache_file("convolution_milo", "A6000").string()};
    return fit_view_models(Dataset::load(files), "default", 0);
  }();
  return v;
}

const SpaceData& a4000() {
  static const Dataset d = Dataset::load(std::vector<std::string>{test::cache_file("convolution_milo", "A4000").string()});
  return d.spaces().front();
}

std::vector<const ViewModel*> views_of_a4000() {
  const auto& s = a4000();
  return sibling_views().of(s.kernel, s.device->vendor, s.device->name);
}

double median_abs_log_error(const std::vector<Forecast>& f, const std::vector<double>& t) {
  std::vector<double> e;
  for (std::size_t i = 0; i < f.size(); ++i) e.push_back(std::abs(std::log(f[i].median_ms / t[i])));
  std::nth_element(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(e.size() / 2), e.end());
  return e[e.size() / 2];
}

}  // namespace

TEST_CASE("stacked views refuse what they cannot use, by name", "[data]") {
  CHECK_THROWS_WITH(StackedViewsSurrogate({}, make_surrogate("default", 0)), Contains("no view"));
  StackedViewsSurrogate s(views_of_a4000(), make_surrogate("default", 0));
  const auto& o = a4000().observations;
  CHECK_THROWS_WITH(s.predict(std::vector<Candidate>{o.front().candidate}), Contains("before fit"));
  std::vector<Observation> two;
  for (const auto& x : o)
    if (two.size() < 2 && x.measurement.ok()) two.push_back(x);
  CHECK_THROWS_WITH(s.fit(two), Contains("2 successful measurements"));
}

TEST_CASE("a tenth of the A4000 and the views of its siblings forecast its other configurations better than the "
          "tenth alone, and order a measured parent's children more often",
          "[data]") {
  const auto views = views_of_a4000();
  REQUIRE(views.size() == 2);  // A100 and A6000: NVIDIA, measured convolution_milo, not the A4000
  const EvaluationSplit split = interpolation_split(a4000(), 0.1, 1);
  StackedViewsSurrogate stacked(views, make_surrogate("default", 1));
  stacked.fit(split.train);
  REQUIRE(stacked.stacking());
  const auto& w = stacked.stacking()->weights;
  CHECK(std::all_of(w.begin(), w.end(), [](double x) { return x >= 0; }));
  CHECK(std::any_of(w.begin(), w.end(), [](double x) { return x > 0; }));
  AnySurrogate alone = make_surrogate("default", 1);
  alone.fit(split.train);
  const auto test = split.test_candidates();
  const auto times = split.test_times();
  const double e_stacked = median_abs_log_error(stacked.predict(test), times);
  const double e_alone = median_abs_log_error(alone.predict(test), times);
  INFO("median |log error| stacked " << e_stacked << ", tenth alone " << e_alone);
  CHECK(e_stacked < e_alone);

  // update() learns beside what it has: the same forecasts as one fit on everything.
  const std::size_t half = split.train.size() / 2;
  StackedViewsSurrogate in_two(views, make_surrogate("default", 1));
  in_two.fit(std::span<const Observation>(split.train).first(half));
  in_two.update(std::span<const Observation>(split.train).subspan(half));
  const std::vector<Candidate> few(test.begin(), test.begin() + 5);
  const auto a = stacked.predict(few), b = in_two.predict(few);
  for (std::size_t i = 0; i < few.size(); ++i) CHECK(a[i].median_ms == Approx(b[i].median_ms));

  // Child pairs (a measured parent, a held-out neighbour) under the direction loss.
  PairProtocolOptions o;
  o.kinds = {PairKind::child};
  o.pairs = 1000;
  o.evaluation.rules = {{0.1, 0.1, PairLoss::wrong_direction, PairConfidence::direction_probability}};
  const SurrogateFactory make = [](std::uint64_t seed) { return make_surrogate("default", seed); };
  const auto plain = evaluate_pairs_interpolation(a4000(), "default", make, o, 1).front().evaluation;
  o.views = views;
  const auto leaned = evaluate_pairs_interpolation(a4000(), "default+views", make, o, 1).front().evaluation;
  INFO("direction accuracy " << leaned.direction_accuracy << " against " << plain.direction_accuracy << "; answered "
                             << leaned.rules[0].answered << " against " << plain.rules[0].answered);
  CHECK(leaned.direction_accuracy > plain.direction_accuracy + 0.01);
  CHECK(leaned.rules[0].answered > plain.rules[0].answered);
  CHECK(leaned.rules[0].violations <= 5);  // delta = 0.1 of 20 splits, with slack for chance
  // Judged on every child pair of a child the calibration did not see (each child with each of its
  // measured neighbours), the realised risk is far less noisy than the test half's.
  CHECK(leaned.population_pairs > leaned.pairs);
  CHECK(leaned.rules[0].population_violations <= 4);
  CHECK(leaned.rules[0].population_risk <= 0.1);
}
