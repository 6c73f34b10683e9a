// Views stacked by a run's own measurements: pnpoly on an RTX 2080 Ti, a GPU the models never saw,
// viewed through k-NN models of the RTX Titan (its sibling: 0.998 correlation in log time) and the
// RTX 3090. The stacking waits for its measurements, leaves the run's own GPU out of its views,
// answers only for the run's kernel and GPU, and a search model started from a Model with views
// forecasts through them once it has measured enough to stack them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "calibration/view_models.hpp"
#include "compose/model_impl.hpp"
#include "compose/run_stacked_views.hpp"
#include "compose/search_model.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "support/data.hpp"
#include "surrogate/metrics.hpp"

using namespace gpuforecast;
using gpuforecast::detail::compose::RunStackedViews;

namespace {

Dataset pnpoly_on(const std::vector<std::string>& devices) {
  std::vector<std::string> files;
  for (const auto& d : devices) files.push_back(test::cache_file("pnpoly", d).string());
  return Dataset::load(files);
}

const Dataset& training_gpus() {
  static const Dataset d = pnpoly_on({"RTX_Titan", "RTX_3090"});
  return d;
}

const Dataset& new_gpu() {
  static const Dataset d = pnpoly_on({"RTX_2080_Ti"});
  return d;
}

Model model_with_views() {
  AnySurrogate joint = make_surrogate("knn", 1);
  joint.fit(training_gpus().observations(false));
  return make_model(joint, std::nullopt, fit_view_models(training_gpus(), "knn", 1));
}

// The successful runs of the file's one space, in a seeded random order: a search's first
// measurements are spread over the space, where the file's order is by parameter.
std::vector<Observation> ok_runs(const Dataset& d) {
  std::vector<Observation> out;
  for (const auto& o : d.spaces().front().observations)
    if (o.measurement.ok()) out.push_back(o);
  std::shuffle(out.begin(), out.end(), std::mt19937_64(7));
  return out;
}

}  // namespace

TEST_CASE("a run's views wait for its measurements and then follow its GPU's sibling", "[data]") {
  const Model model = model_with_views();
  const auto runs = ok_runs(new_gpu());
  REQUIRE(runs.size() > 200);
  RunStackedViews views(model, {.min_measurements = 8});
  std::vector<Candidate> later;
  std::vector<double> later_ms;
  for (std::size_t i = 100; i < 200; ++i) {
    later.push_back(runs[i].candidate);
    later_ms.push_back(runs[i].measurement.median_ms);
  }

  views.update(std::span(runs).first(7));
  CHECK_FALSE(views.fitted());
  CHECK_FALSE(views.predict(later).has_value());
  views.update(std::span(runs).subspan(7, 13));
  REQUIRE(views.fitted());
  CHECK(views.view_devices() == std::vector<std::string>{"RTX 3090", "TITAN RTX"});
  // The Titan carries the stacking: its weight is the larger.
  const auto& w = views.stacking()->weights;
  CHECK(w[1] > w[0]);

  const auto stacked = views.predict(later);
  REQUIRE(stacked.has_value());
  std::size_t within_10 = 0;
  std::vector<double> forecast;
  for (std::size_t i = 0; i < later.size(); ++i) {
    REQUIRE((*stacked)[i].has_value());
    forecast.push_back((*stacked)[i]->median_ms);
    within_10 += std::abs(forecast.back() / later_ms[i] - 1) <= 0.1 ? 1 : 0;
  }
  INFO("within 10%: " << within_10 << " of 100; Spearman " << spearman(forecast, later_ms));
  CHECK(within_10 >= 70);
  CHECK(spearman(forecast, later_ms) > 0.9);
}

TEST_CASE("a run on a training GPU stacks the other GPUs' views, never its own", "[data]") {
  const Model model = model_with_views();
  const Dataset titan = pnpoly_on({"RTX_Titan"});
  RunStackedViews views(model, {.min_measurements = 8});
  const auto titan_runs = ok_runs(titan);
  views.update(std::span(titan_runs).first(30));
  CHECK(views.view_devices() == std::vector<std::string>{"RTX 3090"});
  // Candidates of another GPU or kernel than the run's get no stacking.
  REQUIRE(views.fitted());
  CHECK_FALSE(views.predict(std::vector<Candidate>{ok_runs(new_gpu()).front().candidate}).has_value());
}

TEST_CASE("views forecast by the caller stack as the run's own, and mismatched ones are refused", "[data]") {
  const Model model = model_with_views();
  const auto runs = ok_runs(new_gpu());
  const auto first = std::span(runs).first(20);
  RunStackedViews own(model, {.min_measurements = 8});
  own.update(first);
  RunStackedViews given(model, {.min_measurements = 8});
  given.choose_views_from(first);
  std::vector<Candidate> cands;
  for (const auto& o : first) cands.push_back(o.candidate);
  const auto views = given.view_forecasts(cands);
  given.update(first, views);
  REQUIRE(own.fitted());
  REQUIRE(given.fitted());
  CHECK(given.stacking()->weights == own.stacking()->weights);
  CHECK(given.stacking()->intercept == own.stacking()->intercept);
  CHECK_THROWS_WITH(given.update(first, std::span(views).first(19)),
                    Catch::Matchers::Contains("one view forecast per observation"));
  std::vector<ViewForecasts> short_views(views);
  short_views[3].pop_back();
  CHECK_THROWS_WITH(given.update(first, short_views), Catch::Matchers::Contains("do not match the run's views"));
}

TEST_CASE("a model without views is refused by name", "[data]") {
  AnySurrogate joint = make_surrogate("knn", 1);
  joint.fit(training_gpus().observations(false));
  CHECK_THROWS_AS(RunStackedViews(make_model(joint, std::nullopt)), invalid_argument_error);
}

TEST_CASE("a search started from a Model with views forecasts through them once the run can stack them", "[data]") {
  const Model with = model_with_views();
  const Model without = make_model(with.impl().surrogate, std::nullopt);
  const auto runs = ok_runs(new_gpu());
  std::vector<Candidate> later;
  for (std::size_t i = 100; i < 150; ++i) later.push_back(runs[i].candidate);
  auto forecasts_after = [&](const Model& m, std::size_t measured) {
    AnySelectivePredictor search = make_search_model({.pretrained = m, .online_surrogate = "default", .seed = 1});
    search.update(std::span(runs).first(measured));
    std::vector<double> out;
    for (const auto& d : search.decide(later)) out.push_back(d.forecast.median_ms);
    return out;
  };
  // Seven measurements are too few to stack: the model's own forecasts, corrected alike.
  CHECK(forecasts_after(with, 7) == forecasts_after(without, 7));
  // Twenty are enough: the stacked views, which follow the RTX Titan, replace them.
  const auto stacked = forecasts_after(with, 20), single = forecasts_after(without, 20);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < stacked.size(); ++i) differ += std::abs(stacked[i] / single[i] - 1) > 0.01 ? 1 : 0;
  CHECK(differ > stacked.size() / 2);
}
