// View models: one k-NN per GPU of real measurement files, which GPUs view a kernel, the views'
// forecasts, the model file's "views" section (round trip, damage, a newer version), and the
// sibling GPU chosen by stacking: an RTX 2080 Ti's pnpoly times from k-NN models of the RTX
// Titan, RTX 3060 laptop and RTX 3090.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "calibration/view_models.hpp"
#include "calibration/view_stacking.hpp"
#include "gpuforecast/core/archive.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "support/data.hpp"
#include "surrogate/knn.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

const Dataset& three_gpus() {
  static const Dataset d = [] {
    const std::vector<std::string> files{test::cache_file("pnpoly", "RTX_3060_laptop").string(),
                                         test::cache_file("pnpoly", "RTX_Titan").string(),
                                         test::cache_file("gemm", "RTX_2080_Ti").string()};
    return Dataset::load(files);
  }();
  return d;
}

const ViewModels& fitted() {
  static const ViewModels v = fit_view_models(three_gpus(), "knn", 3);
  return v;
}

std::vector<std::string> devices_of(const std::vector<const ViewModel*>& views) {
  std::vector<std::string> out;
  for (const auto* v : views) out.push_back(v->device);
  return out;
}

}  // namespace

TEST_CASE("one view model per GPU, and a GPU's views are the other GPUs of its vendor that measured its kernel",
          "[data]") {
  const ViewModels& v = fitted();
  REQUIRE(v.models.size() == 3);
  CHECK(v.surrogate == "knn");
  CHECK(v.models[0].device == "RTX 2080 Ti");
  CHECK(v.models[0].kernels == std::vector<std::string>{"gemm"});
  CHECK(devices_of(v.of("pnpoly", "NVIDIA")) == std::vector<std::string>{"RTX 3060 Laptop GPU", "TITAN RTX"});
  CHECK(devices_of(v.of("pnpoly", "NVIDIA", "TITAN RTX")) == std::vector<std::string>{"RTX 3060 Laptop GPU"});
  CHECK(v.of("pnpoly", "AMD").empty());
  CHECK(v.of("dedispersion_milo", "NVIDIA").empty());
  CHECK(devices_of(v.of("gemm", "NVIDIA")) == std::vector<std::string>{"RTX 2080 Ti"});
  CHECK(v.find("TITAN RTX") == &v.models[2]);
  CHECK(v.find("RTX 3090") == nullptr);

  // A measured space's views leave its own GPU out; a space with no sibling is named.
  for (const auto& space : three_gpus().spaces()) {
    INFO(space.path);
    if (space.kernel == "pnpoly")
      CHECK(v.of_space(space).size() == 1);
    else
      CHECK_THROWS_WITH(v.of_space(space), Contains("RTX_2080_Ti.json.gz has no other GPU of vendor NVIDIA that "
                                                    "measured gemm"));
  }

  // Each view forecasts the candidate as running on its own GPU.
  const auto& space = three_gpus().spaces()[0];
  std::vector<Candidate> some;
  for (std::size_t i = 0; i < 5; ++i) some.push_back(space.observations[i].candidate);
  const auto views = v.of("pnpoly", "NVIDIA");
  const std::vector<ViewForecasts> f = forecast_views(views, some);
  REQUIRE(f.size() == 5);
  REQUIRE(f[3].size() == 2);
  std::vector<Candidate> on_titan = some;
  for (auto& c : on_titan) c.device = view_device("TITAN RTX");
  CHECK(f[3][1].median_ms == v.models[2].model.predict(on_titan)[3].median_ms);
  CHECK(view_device("TITAN RTX")->has_numbers());
  CHECK_FALSE(view_device("a GPU nobody has heard of")->has_numbers());
}

TEST_CASE("the views section keeps every view model, and a damaged or newer one is named", "[data]") {
  ModelFile file;
  set_views_section(file, fitted());
  const auto back = views_from(file, "m.gfm");
  REQUIRE(back);
  REQUIRE(back->models.size() == 3);
  CHECK(back->seed == 3);
  CHECK(back->models[1].device == "RTX 3060 Laptop GPU");
  CHECK(back->models[1].vendor == "NVIDIA");
  CHECK(back->models[1].kernels == std::vector<std::string>{"pnpoly"});
  const auto& space = three_gpus().spaces()[1];
  std::vector<Candidate> some;
  for (std::size_t i = 0; i < 20; ++i) some.push_back(space.observations[i].candidate);
  // The section holds each model's own archive: its forecasts are those of the model saved and
  // loaded alone (a k-NN keeps float features, so not always those of the model before saving).
  std::vector<ViewModel> alone;
  for (const auto* m : fitted().of("pnpoly", "NVIDIA")) {
    ArchiveWriter w;
    m->model.save(w);
    ArchiveReader r(w.data(), "test");
    alone.push_back({m->device, m->vendor, m->kernels, load_surrogate_archive(m->model.kind(), r)});
  }
  const std::vector<const ViewModel*> expected{&alone[0], &alone[1]};
  const auto a = forecast_views(expected, some);
  const auto b = forecast_views(back->of("pnpoly", "NVIDIA"), some);
  for (std::size_t i = 0; i < some.size(); ++i)
    for (std::size_t v = 0; v < 2; ++v) CHECK(a[i][v].median_ms == b[i][v].median_ms);

  CHECK_FALSE(views_from(ModelFile{}, "m.gfm"));
  ModelFile damaged;
  damaged.set("views", file.find("views")->substr(0, 60));
  CHECK_THROWS_WITH(views_from(damaged, "m.gfm"), Contains("m.gfm [views section]"));
  std::string bytes = *file.find("views");
  bytes[0] = static_cast<char>(views_section_version + 1);
  ModelFile newer;
  newer.set("views", bytes);
  CHECK_THROWS_WITH(views_from(newer, "m.gfm"), Contains("newer than this library"));
}

// The RTX 2080 Ti and the Titan RTX are both Turing (sm_75); the RTX 3060 laptop and 3090 are
// Ampere. From 20 random measurements the stacking should find the sibling.
TEST_CASE("on a new GPU, stacking 20 measurements weighs the sibling GPU's view most (pnpoly RTX 2080 Ti)",
          "[data]") {
  const std::vector<std::string> sources{"RTX_3060_laptop", "RTX_3090", "RTX_Titan"};
  const SpaceData target = load_space(test::cache_file("pnpoly", "RTX_2080_Ti").string());
  std::vector<Candidate> candidates;
  std::vector<double> times;
  for (const auto& o : target.observations)
    if (o.measurement.ok() && o.measurement.median_ms > 0) {
      candidates.push_back(o.candidate);
      times.push_back(o.measurement.median_ms);
    }
  std::vector<ViewForecasts> views(candidates.size());
  for (const auto& source : sources) {
    const SpaceData s = load_space(test::cache_file("pnpoly", source).string());
    std::vector<Observation> train;
    for (const auto& o : s.observations)
      if (o.measurement.ok() && o.measurement.median_ms > 0) train.push_back(o);
    KnnSurrogate knn;
    knn.fit(train);
    std::vector<Candidate> as_there = candidates;
    for (auto& c : as_there) c.device = s.device;
    const auto f = knn.predict(as_there);
    for (std::size_t i = 0; i < f.size(); ++i) views[i].push_back(f[i]);
  }

  std::mt19937_64 rng(5);
  std::vector<std::size_t> order(candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<ViewForecasts> k_views;
  std::vector<double> k_times;
  for (std::size_t j = 0; j < 20; ++j) {
    k_views.push_back(views[order[j]]);
    k_times.push_back(times[order[j]]);
  }
  const ViewStacking fit = fit_view_stacking(k_views, k_times);
  INFO("weights " << fit.weights[0] << " " << fit.weights[1] << " " << fit.weights[2]);
  CHECK(fit.weights[2] > fit.weights[0]);
  CHECK(fit.weights[2] > fit.weights[1]);

  // Judged on the configurations the 20 did not include: within 10% far more often than the
  // Titan's view alone, uncorrected, or the three views' geometric mean.
  std::size_t stacked_within = 0, titan_within = 0, mean_within = 0, judged = 0;
  for (std::size_t j = 20; j < order.size(); ++j) {
    const std::size_t i = order[j];
    auto within = [&](double ms) { return std::abs(ms / times[i] - 1) <= 0.1; };
    double log_mean = 0;
    for (const auto& v : views[i]) log_mean += std::log(v.median_ms) / 3;
    stacked_within += within(fit.apply(views[i]).median_ms);
    titan_within += within(views[i][2].median_ms);
    mean_within += within(std::exp(log_mean));
    ++judged;
  }
  const double stacked = static_cast<double>(stacked_within) / static_cast<double>(judged);
  INFO("within 10%: stacked " << stacked << ", Titan's view " << static_cast<double>(titan_within) / judged
                              << ", geometric mean " << static_cast<double>(mean_within) / judged);
  CHECK(stacked > 0.8);
  CHECK(stacked_within > titan_within);
  CHECK(stacked_within > mean_within);
}
