// Every baseline against the same checks: it ranks a space it saw half of, it says which
// configurations fail, its intervals cover, save/load gives identical forecasts, update learns,
// and copies are independent. Ridge, knn, forest, gp, xgboost, Ensemble<...>, AnyEnsemble, registry.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "gpuforecast/core/error.hpp"
#include "surrogate/compact.hpp"
#include "surrogate/ensemble.hpp"
#include "surrogate/gaussian_process.hpp"
#include "surrogate/knn.hpp"
#include "surrogate/metrics.hpp"
#include "surrogate/random_forest.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "surrogate/ridge.hpp"
#include "surrogate/xgboost.hpp"
#include "synthetic.hpp"

using namespace gpuforecast;

namespace {
std::vector<double> medians(const std::vector<Forecast>& f) {
  std::vector<double> m;
  for (const auto& x : f) m.push_back(x.median_ms);
  return m;
}

template <class S>
void check_surrogate(S model, double min_spearman) {
  const auto dev = test::synthetic_device("GPU-A", 1.0);
  const auto all = test::synthetic_space(dev, 1.0);
  const auto train = test::every_other(all, 0);
  const auto test_half = test::every_other(all, 1);
  model.fit(train);
  const auto cands = test::candidates_of(test_half);
  const auto truth = test::times_of(test_half);
  const auto f = model.predict(cands);
  REQUIRE(f.size() == cands.size());
  INFO(model.kind());
  CHECK(spearman(medians(f), truth) > min_spearman);
  std::size_t covered = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    CHECK(f[i].lower_ms <= f[i].median_ms);
    CHECK(f[i].median_ms <= f[i].upper_ms);
    CHECK(f[i].p_fail >= 0.0);
    CHECK(f[i].p_fail <= 1.0);
    covered += (truth[i] >= f[i].lower_ms && truth[i] <= f[i].upper_ms) ? 1 : 0;
  }
  CHECK(static_cast<double>(covered) / static_cast<double>(f.size()) > 0.6);

  // p_fail: failing configurations look riskier than working ones on average.
  const auto everything = test::candidates_of(test_half, false);
  const auto fe = model.predict(everything);
  double pf_bad = 0, pf_good = 0, n_bad = 0, n_good = 0;
  for (std::size_t i = 0; i < test_half.size(); ++i) {
    if (test_half[i].measurement.ok()) {
      pf_good += fe[i].p_fail;
      ++n_good;
    } else {
      pf_bad += fe[i].p_fail;
      ++n_bad;
    }
  }
  CHECK(pf_bad / n_bad > pf_good / n_good);

  // Save and load: same forecasts.
  ArchiveWriter w;
  model.save(w);
  ArchiveReader r(w.data(), "memory");
  auto back = S::load(r);
  CHECK(r.at_end());
  const auto f2 = back.predict(cands);
  for (std::size_t i = 0; i < f.size(); ++i) {
    CHECK(f2[i].median_ms == Approx(f[i].median_ms).epsilon(1e-5));
    CHECK(f2[i].upper_ms == Approx(f[i].upper_ms).epsilon(1e-5));
    CHECK(f2[i].p_fail == Approx(f[i].p_fail).epsilon(1e-4).margin(1e-9));  // rows are stored as float
  }
  // A truncated archive is a model_file_error, not a crash.
  ArchiveReader cut(std::string_view(w.data()).substr(0, w.data().size() / 2), "cut");
  CHECK_THROWS_AS(S::load(cut), model_file_error);

  // update() on the loaded copy: learns the other half, the original is untouched.
  back.update(test_half);
  const auto f3 = back.predict(cands);
  CHECK(spearman(medians(f3), truth) >= spearman(medians(f), truth) - 0.02);
  const auto f4 = model.predict(cands);
  CHECK(f4[0].median_ms == f[0].median_ms);

  // Transfer: a device twice as fast, never seen: ranks still agree, times shift by the offset
  // fallback (mean of the kernel's groups), which is the best a model with one device can do.
  const auto other = test::synthetic_space(test::synthetic_device("GPU-B", 2.0), 2.0, 0.02, 5);
  const auto fo = model.predict(test::candidates_of(other));
  CHECK(spearman(medians(fo), test::times_of(other)) > min_spearman - 0.05);
}
}  // namespace

TEST_CASE("ridge surrogate") {
  check_surrogate(RidgeSurrogate(), 0.9);
  RidgeSurrogate r;
  CHECK_THROWS_AS(r.predict(std::vector<Candidate>(1)), invalid_argument_error);
  CHECK_THROWS_AS(r.fit(std::span<const Observation>{}), invalid_argument_error);
}

TEST_CASE("knn surrogate") {
  check_surrogate(KnnSurrogate(), 0.8);
  KnnSurrogate k;
  k.fit(test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0));
  CHECK(k.chosen_k() >= 1);
}

TEST_CASE("forest surrogate") {
  check_surrogate(RandomForestSurrogate(), 0.9);
  const auto all = test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0);
  const auto half = test::every_other(all, 0);
  RandomForestOptions o;
  o.seed = 3;
  RandomForestSurrogate a(o), b(o);
  a.fit(half);
  b.fit(half);
  const auto cands = test::candidates_of(test::every_other(all, 1));
  CHECK(medians(a.predict(cands)) == medians(b.predict(cands)));  // seeded
  o.seed = 4;
  RandomForestSurrogate c(o);
  c.fit(half);
  CHECK(medians(c.predict(cands)) != medians(a.predict(cands)));
  // The trees disagree more about configurations they did not see than about those they did:
  // the spread an optimistic search ranks by.
  auto mean_spread = [&](const std::vector<Candidate>& q) {
    double s = 0;
    for (const auto& f : a.predict(q)) s += f.spread;
    return s / static_cast<double>(q.size());
  };
  CHECK(mean_spread(cands) > mean_spread(test::candidates_of(half)));
  CHECK_THROWS_AS(RandomForestSurrogate(RandomForestOptions{.trees = 0}), invalid_argument_error);
  CHECK_THROWS_AS(RandomForestSurrogate(RandomForestOptions{.feature_fraction = 1.5}), invalid_argument_error);
  std::vector<Observation> failed;
  for (const auto& ob : all)
    if (!ob.measurement.ok()) failed.push_back(ob);
  RandomForestSurrogate none;
  CHECK_THROWS_WITH(none.fit(failed), Catch::Contains("forest surrogate") && Catch::Contains("failed"));
  CHECK_THROWS_AS(none.predict(cands), invalid_argument_error);
}

TEST_CASE("gp surrogate") {
  check_surrogate(GaussianProcessSurrogate(), 0.9);
  GaussianProcessSurrogate g;
  CHECK_THROWS_AS(g.predict(std::vector<Candidate>(1)), invalid_argument_error);
  // The marginal likelihood learns which inputs matter: in the synthetic space the runtime does
  // not depend on a parameter that only pads the configuration, so its length scale grows.
  g.fit(test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0));
  CHECK(g.noise_variance() > 0);
  CHECK(g.noise_variance() < g.signal_variance());
  GaussianProcessOptions o;
  o.seed = 4;
  GaussianProcessSurrogate a(o), b(o);
  const auto obs = test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0);
  a.fit(obs);
  b.fit(obs);
  CHECK(a.length_scales() == b.length_scales());  // seeded: same subset, same fit
  CHECK_THROWS_AS(GaussianProcessSurrogate(GaussianProcessOptions{.max_points = 0}), invalid_argument_error);

  // Degenerate training sets: one success among failures still forecasts; no success at all is
  // refused with a message, not a NaN model.
  std::vector<Observation> few;
  for (const auto& ob : obs)
    if (!ob.measurement.ok() || few.empty()) few.push_back(ob);
  GaussianProcessSurrogate one;
  one.fit(few);
  const auto f = one.predict(test::candidates_of(obs));
  CHECK(std::isfinite(f[0].median_ms));
  CHECK(f[0].median_ms > 0);
  std::vector<Observation> failed;
  for (const auto& ob : obs)
    if (!ob.measurement.ok()) failed.push_back(ob);
  GaussianProcessSurrogate none;
  CHECK_THROWS_AS(none.fit(failed), invalid_argument_error);
}

#if GPUFORECAST_HAVE_XGBOOST
TEST_CASE("xgboost surrogate") {
  REQUIRE(xgboost_available());
  XgboostOptions quick;  // fewer rounds keep the test fast; the defaults are measured in benchmarks/
  quick.rounds = 150;
  quick.eta = 0.1;
  check_surrogate(XgboostSurrogate(quick), 0.9);
  // Seeded: the same seed gives the same model.
  const auto obs = test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0);
  XgboostOptions o;
  o.seed = 3;
  o.rounds = 50;
  XgboostSurrogate a(o), b(o);
  a.fit(obs);
  b.fit(obs);
  const auto c = test::candidates_of(obs);
  CHECK(medians(a.predict(c)) == medians(b.predict(c)));
}

TEST_CASE("compact surrogate") {
  CompactOptions quick;  // fewer rounds keep the test fast; the defaults are measured in benchmarks/
  quick.rounds = 150;
  quick.eta = 0.1;
  check_surrogate(CompactSurrogate(quick), 0.9);
  // A handful of observations: no held-out fifth, still forecasts.
  const auto obs = test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0);
  std::vector<Observation> few;
  for (const auto& o : obs)
    if (o.measurement.ok() && few.size() < 5) few.push_back(o);
  CompactSurrogate small(quick);
  small.fit(few);
  const auto f = small.predict(test::candidates_of(obs));
  CHECK(std::all_of(f.begin(), f.end(), [](const Forecast& x) { return x.median_ms > 0 && x.lower_ms <= x.upper_ms; }));
}
#endif

#if GPUFORECAST_HAVE_XGBOOST
TEST_CASE("compact: only failures cannot be fitted") {
  std::vector<Observation> failed;
  for (const auto& o : test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0))
    if (!o.measurement.ok()) failed.push_back(o);
  REQUIRE(!failed.empty());
  CompactSurrogate c;
  CHECK_THROWS_AS(c.fit(failed), invalid_argument_error);
}
#endif

TEST_CASE("Ensemble<ridge, knn> and AnyEnsemble") {
  check_surrogate(Ensemble<RidgeSurrogate, KnnSurrogate>(), 0.9);
  check_surrogate(AnyEnsemble({make_surrogate("ridge"), make_surrogate("knn")}), 0.9);
  CHECK_THROWS_AS(AnyEnsemble(std::vector<AnySurrogate>{}), invalid_argument_error);

  // What Ensemble<...> saves, AnyEnsemble loads.
  const auto obs = test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0);
  Ensemble<RidgeSurrogate, KnnSurrogate> e;
  e.fit(obs);
  ArchiveWriter w;
  e.save(w);
  ArchiveReader r(w.data(), "memory");
  const auto any = AnyEnsemble::load(r);
  REQUIRE(any.members().size() == 2);
  CHECK(any.members()[0].kind() == "ridge");
  const auto c = test::candidates_of(obs);
  CHECK(medians(any.predict(c))[3] == Approx(medians(e.predict(c))[3]));
}

TEST_CASE("combine_forecasts: mean in log space, disagreement widens") {
  std::vector<std::vector<Forecast>> m{{{1.0, 0.5, 2.0, 0.1, 0.2, std::nullopt}}, {{4.0, 2.0, 8.0, 0.3, 0.2, std::nullopt}}};
  const auto f = combine_forecasts(m);
  CHECK(f[0].median_ms == Approx(2.0));
  CHECK(f[0].p_fail == Approx(0.2));
  CHECK(f[0].lower_ms < 1.0);
  CHECK(f[0].upper_ms > 4.0);
  CHECK(f[0].spread == Approx(std::sqrt(0.04 + std::pow(std::log(2.0), 2))));
}

TEST_CASE("combine_forecasts and AnyEnsemble: member weights") {
  std::vector<std::vector<Forecast>> m{{{1.0, 0.5, 2.0, 0.1, 0.2, std::nullopt}}, {{4.0, 2.0, 8.0, 0.3, 0.2, std::nullopt}}};
  const std::vector<double> w{3.0, 1.0};  // normalised to 0.75 / 0.25
  const auto f = combine_forecasts(m, w);
  CHECK(f[0].median_ms == Approx(std::exp(0.25 * std::log(4.0))));
  CHECK(f[0].p_fail == Approx(0.15));
  CHECK(combine_forecasts(m, std::vector<double>{1.0, 0.0})[0].median_ms == Approx(1.0));
  CHECK_THROWS_AS(combine_forecasts(m, std::vector<double>{1.0}), invalid_argument_error);
  CHECK_THROWS_AS(combine_forecasts(m, std::vector<double>{-1.0, 2.0}), invalid_argument_error);
  CHECK_THROWS_AS(combine_forecasts(m, std::vector<double>{0.0, 0.0}), invalid_argument_error);
  CHECK_THROWS_AS(combine_forecasts(m, std::vector<double>{std::nan(""), 1.0}), invalid_argument_error);

  // The weights travel with the model.
  const auto obs = test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0);
  AnyEnsemble e({make_surrogate("ridge"), make_surrogate("knn")}, {0.8, 0.2});
  e.fit(obs);
  ArchiveWriter aw;
  e.save(aw);
  ArchiveReader r(aw.data(), "memory");
  const auto loaded = AnyEnsemble::load(r);
  CHECK(loaded.weights() == e.weights());
  const auto c = test::candidates_of(obs);
  const auto a = medians(loaded.predict(c)), b = medians(e.predict(c));
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).epsilon(1e-6));
  CHECK_THROWS_AS(AnyEnsemble({make_surrogate("ridge")}, {0.5, 0.5}), invalid_argument_error);
}

TEST_CASE("registry: ensembles by recipe") {
  const auto r = ensemble_recipe("ensemble(ridge=0.7, knn = 0.3)");
  REQUIRE(r);
  CHECK(r->members == std::vector<std::string>{"ridge", "knn"});
  CHECK(r->weights == std::vector<double>{0.7, 0.3});
  CHECK(ensemble_recipe("ensemble(ridge,knn)")->weights == std::vector<double>{1.0, 1.0});
  CHECK(ensemble_recipe("ensemble")->members == ensemble_member_names());
  CHECK_FALSE(ensemble_recipe("ridge"));
  for (const char* bad : {"ensemble(ridge=0.7", "ensemble()", "ensemble(ridge=-1)", "ensemble(ridge=x)",
                          "ensemble(ridge=0,knn=0)", "ensemble(nosuch=1)", "ensemble(ensemble=1)", "ensemble(=1)"}) {
    INFO(bad);
    CHECK_THROWS_AS(ensemble_recipe(bad), invalid_argument_error);
  }
  auto e = make_surrogate("ensemble(ridge=3,knn=1)", 2);
  CHECK(e.kind() == "ensemble");
  const auto obs = test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0);
  e.fit(obs);
  ArchiveWriter w;
  e.save(w);
  ArchiveReader rd(w.data(), "memory");
  CHECK(AnyEnsemble::load(rd).weights() == std::vector<double>{0.75, 0.25});
}

TEST_CASE("registry: a member named twice gets a seed of its own") {
  CHECK(ensemble_member_repeats({"xgboost", "gp", "xgboost", "transformer", "xgboost"}) ==
        std::vector<std::size_t>{0, 0, 1, 0, 2});
  CHECK(ensemble_member_seed(7, 0) == 7);  // the first of a kind shares the ensemble's seed
  CHECK(ensemble_member_seed(7, 1) != ensemble_member_seed(7, 2));
#if GPUFORECAST_HAVE_XGBOOST
  // A bag of subsampled trees: each member differs from the others, and the bag from one model.
  const auto obs = test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0);
  const auto c = test::candidates_of(obs);
  auto one = make_surrogate("xgboost", 4);
  auto bag = make_surrogate("ensemble(xgboost,xgboost)", 4);
  one.fit(obs);
  bag.fit(obs);
  CHECK(medians(bag.predict(c)) != medians(one.predict(c)));
  auto again = make_surrogate("ensemble(xgboost,xgboost)", 4);
  again.fit(obs);
  CHECK(medians(again.predict(c)) == medians(bag.predict(c)));  // and seeded
#endif
}

TEST_CASE("registry: every name builds, fits and reports its kind") {
  const auto obs = test::synthetic_space(test::synthetic_device("GPU-A", 1.0), 1.0);
  const auto names = surrogate_names();
  const bool has_transformer = std::find(names.begin(), names.end(), "transformer") != names.end();
  for (const auto& name : names) {
    if (name == "transformer") continue;  // tested with the transformer (label torch)
    INFO(name);
    auto s = make_surrogate(name, 1);
    CHECK(s.kind() == name);
    if (name == "ensemble" && has_transformer) continue;
    s.fit(obs);
    ArchiveWriter w;
    s.save(w);
    ArchiveReader r(w.data(), "memory");
    CHECK(load_surrogate_archive(name, r).kind() == name);
  }
  CHECK(make_surrogate("default").kind() == make_surrogate(default_surrogate_name()).kind());
  CHECK_THROWS_WITH(make_surrogate("gaussian-process"), Catch::Contains("unknown surrogate") && Catch::Contains("ridge"));
  ArchiveReader r("", "m.gfm");
  CHECK_THROWS_AS(load_surrogate_archive("mystery", r), model_file_error);
}
