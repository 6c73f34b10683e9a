// The compact forecaster on real measurements: its flat trees are XGBoost's trees, a loaded model
// forecasts and updates exactly like the one that was saved, forecasts do not depend on threads,
// a teacher changes what it learns, and options by name are checked.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "data/static_feature_table.hpp"
#include "surrogate/compact.hpp"
#include "surrogate/evaluation.hpp"
#include "surrogate/metrics.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "support/data.hpp"
#include "surrogate/boosting.hpp"
#include "surrogate/compact_weights.hpp"
#include "surrogate/flat_trees.hpp"

using namespace gpuforecast;

namespace {

const SpaceData& convolution_a100() {
  static const SpaceData d = load_space(test::cache_file("convolution_milo", "A100").string());
  return d;
}

std::vector<Candidate> candidates_of(std::span<const Observation> o) {
  std::vector<Candidate> c;
  for (const auto& x : o) c.push_back(x.candidate);
  return c;
}

std::vector<double> medians(const std::vector<Forecast>& f) {
  std::vector<double> m;
  for (const auto& x : f) m.push_back(x.median_ms);
  return m;
}

std::vector<double> times(std::span<const Observation> o) {
  std::vector<double> t;
  for (const auto& x : o) t.push_back(x.measurement.ok() ? x.measurement.median_ms : 0);
  return t;
}

CompactOptions quick(std::size_t members = 2) {
  CompactOptions o;  // fewer rounds keep the test fast; the defaults are measured in benchmarks/
  o.members = members;
  o.rounds = 120;
  o.eta = 0.1;
  o.seed = 5;
  return o;
}

}  // namespace

#if GPUFORECAST_HAVE_XGBOOST
TEST_CASE("flat trees give XGBoost's own predictions", "[surrogate][compact]") {
  // Real rows: the raw parameters of 10% of convolution_milo A100, target its log runtime.
  const auto split = interpolation_split(convolution_a100(), 0.10, 1);
  std::vector<float> x, y;
  std::size_t cols = 0;
  for (const auto& o : split.train) {
    if (!o.measurement.ok()) continue;
    const auto& v = o.candidate.config.values();
    cols = v.size();
    for (const auto& value : v) x.push_back(static_cast<float>(value.as_double()));
    y.push_back(static_cast<float>(std::log(o.measurement.median_ms)));
  }
  REQUIRE(y.size() > 300);
  for (const int depth : {3, 7, 9}) {
    XgboostOptions p;
    p.rounds = 60;
    p.max_depth = depth;
    p.seed = 2;
    std::vector<double> reference;
    const auto trees = detail::boost_flat_trees(x, cols, y, p, false, &reference);
    INFO("depth " << depth << ", " << trees.trees() << " trees");
    CHECK(trees.trees() == 60);
    CHECK(trees.depth() <= depth);
    std::vector<float> mine(y.size());
    trees.predict(x, y.size(), mine);
    REQUIRE(reference.size() == mine.size());
    double worst = 0;
    for (std::size_t i = 0; i < mine.size(); ++i) worst = std::max(worst, std::abs(mine[i] - reference[i]));
    CHECK(worst < 1e-4);

    // The same through an archive.
    ArchiveWriter w;
    trees.save(w);
    ArchiveReader r(w.data(), "memory");
    const auto back = detail::FlatTrees::load(r);
    std::vector<float> again(y.size());
    back.predict(x, y.size(), again);
    CHECK(again == mine);
  }
  // A classifier's margin, through the logistic, is XGBoost's probability.
  std::vector<float> label(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) label[i] = y[i] > y[y.size() / 2] ? 1.0f : 0.0f;
  XgboostOptions p;
  p.failure_rounds = 40;
  std::vector<double> reference;
  const auto classifier = detail::boost_flat_trees(x, cols, label, p, true, &reference);
  std::vector<float> margin(y.size());
  classifier.predict(x, y.size(), margin);
  for (std::size_t i = 0; i < margin.size(); i += 17)
    CHECK(1.0 / (1.0 + std::exp(-static_cast<double>(margin[i]))) == Approx(reference[i]).margin(1e-5));
}

TEST_CASE("compact: a loaded model forecasts and updates like the saved one", "[surrogate][compact]") {
  const auto split = interpolation_split(convolution_a100(), 0.05, 2);
  const auto more = interpolation_split(convolution_a100(), 0.02, 3).train;
  const auto cands = candidates_of(split.test);
  CompactSurrogate model(quick());
  model.fit(split.train);
  const auto f = model.predict(cands);
  CHECK(spearman(medians(f), times(split.test)) > 0.85);
  CHECK(model.tree_bytes() < 2'000'000);

  ArchiveWriter w;
  model.save(w);
  ArchiveReader r(w.data(), "memory");
  auto back = CompactSurrogate::load(r);
  CHECK(r.at_end());
  const auto g = back.predict(cands);
  for (std::size_t i = 0; i < f.size(); ++i) {
    INFO(cands[i].describe());
    CHECK(g[i].median_ms == f[i].median_ms);
    CHECK(g[i].lower_ms == f[i].lower_ms);
    CHECK(g[i].upper_ms == f[i].upper_ms);
    CHECK(g[i].p_fail == f[i].p_fail);
  }
  // The loaded copy decodes its stored rows: updating it is updating the original.
  model.update(more);
  back.update(more);
  const auto fu = model.predict(cands), gu = back.predict(cands);
  CHECK(medians(fu) != medians(f));
  CHECK(medians(gu) == medians(fu));

  // Without stored rows the file is smaller, and update() after a load learns the new rows only.
  auto lean_options = quick();
  lean_options.keep_training_rows = false;
  CompactSurrogate lean(lean_options);
  lean.fit(split.train);
  ArchiveWriter lw;
  lean.save(lw);
  CHECK(lw.data().size() < w.data().size());

  // Every cut of the archive is refused with a model_file_error.
  for (std::size_t cut = 0; cut < w.data().size(); cut += std::max<std::size_t>(1, w.data().size() / 97)) {
    ArchiveReader c(std::string_view(w.data()).substr(0, cut), "cut");
    INFO("cut at " << cut);
    CHECK_THROWS_AS(CompactSurrogate::load(c), model_file_error);
  }
}

TEST_CASE("compact: forecasts do not depend on threads and need no lock", "[surrogate][compact]") {
  const auto split = interpolation_split(convolution_a100(), 0.05, 4);
  CompactSurrogate model(quick());
  model.fit(split.train);
  const auto cands = candidates_of(split.test);
  const auto whole = medians(model.predict(cands));
  // Four threads forecasting pieces at once, each piece in a different batch size.
  std::vector<std::vector<double>> pieces(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t i = t; i < cands.size(); i += 4)
        pieces[t].push_back(model.predict(std::span<const Candidate>(&cands[i], 1)).front().median_ms);
    });
  for (auto& th : threads) th.join();
  for (std::size_t i = 0; i < cands.size(); ++i) {
    INFO(cands[i].describe());
    CHECK(pieces[i % 4][i / 4] == whole[i]);
  }
  // Training is seeded: the same seed gives the same model, another seed another.
  CompactSurrogate same(quick()), other([] {
    auto o = quick();
    o.seed = 6;
    return o;
  }());
  same.fit(split.train);
  other.fit(split.train);
  CHECK(medians(same.predict(cands)) == whole);
  CHECK(medians(other.predict(cands)) != whole);
}

TEST_CASE("compact: a teacher's forecasts of synthetic candidates become training rows", "[surrogate][compact]") {
  const auto split = interpolation_split(convolution_a100(), 0.05, 5);
  const auto cands = candidates_of(split.test);
  auto with_teacher = quick(1);
  with_teacher.teacher = "ensemble(xgboost,xgboost)";
  with_teacher.synthetic_per_observation = 3;
  CompactSurrogate plain(quick(1)), taught(with_teacher);
  plain.fit(split.train);
  taught.fit(split.train);
  const auto fp = medians(plain.predict(cands)), ft = medians(taught.predict(cands));
  CHECK(fp != ft);
  CHECK(spearman(ft, times(split.test)) > 0.85);
  // A teacher that does not exist is named.
  auto bad = quick(1);
  bad.teacher = "oracle";
  CompactSurrogate wrong(bad);
  CHECK_THROWS_WITH(wrong.fit(split.train), Catch::Contains("oracle"));
}
#endif

TEST_CASE("compact: a group's fastest rows weigh more, small groups do not", "[surrogate][compact]") {
  // 10% of convolution_milo A100 (one large group) and 20 points of A4000 (a new device's few points).
  auto observations = interpolation_split(convolution_a100(), 0.10, 1).train;
  const auto a4000 = load_space(test::cache_file("convolution_milo", "A4000").string());
  observations.insert(observations.end(), a4000.observations.begin(), a4000.observations.begin() + 20);
  const auto base = detail::make_base(observations, {}, "test");
  const auto ok = detail::ok_rows(base.rows);
  CompactOptions o;  // the defaults: fast_weight 2, fast_scale 0.1, fast_min_group 200
  const auto w = detail::compact_row_weights(base.rows, ok, o);
  REQUIRE(w.size() == base.rows.rows());
  std::size_t fastest = ok.front(), slowest = ok.front();
  const std::size_t big = base.rows.group[ok.front()];
  for (const auto i : ok) {
    if (base.rows.group[i] != big) {
      INFO("row " << i << " of the 20-point group");
      CHECK(w[i] == 1.0f);
      continue;
    }
    if (base.rows.log_ms[i] < base.rows.log_ms[fastest]) fastest = i;
    if (base.rows.log_ms[i] > base.rows.log_ms[slowest]) slowest = i;
  }
  CHECK(w[fastest] == Approx(3.0));
  CHECK(w[slowest] == Approx(1.0).margin(1e-4));
  for (std::size_t i = 0; i < w.size(); ++i)
    if (!base.rows.ok(i)) CHECK(w[i] == 1.0f);

  // Group balance: the 20 points weigh (largest group / 20)^0.5, within the cap.
  o.fast_weight = 0;
  o.group_balance = 0.5;
  const auto b = detail::compact_row_weights(base.rows, ok, o);
  std::size_t large = 0, small = 0;
  for (const auto i : ok) (base.rows.group[i] == big ? large : small)++;
  REQUIRE(small == 20);
  for (const auto i : ok) {
    INFO("row " << i);
    CHECK(b[i] == Approx(base.rows.group[i] == big ? 1.0 : std::sqrt(static_cast<double>(large) / 20.0)));
  }
  o.max_group_weight = 2;
  for (const auto i : ok)
    if (base.rows.group[i] != big) CHECK(detail::compact_row_weights(base.rows, ok, o)[i] == Approx(2.0));
}

TEST_CASE("compact: docs/surrogates.md lists its options as the table writes them", "[surrogate][compact]") {
  std::ifstream in(test::source_dir() / "docs" / "surrogates.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string table = compact_options_table().markdown();
  INFO("paste into docs/surrogates.md:\n" << table);
  CHECK(text.str().find(table) != std::string::npos);
}

TEST_CASE("compact: options by name", "[surrogate][compact]") {
  CHECK(make_surrogate("compact(members=1,rounds=50,teacher=ensemble(xgboost=0.9,gp=0.1))", 1).kind() == "compact");
  CHECK_THROWS_WITH(make_surrogate("compact(members=0)", 1), Catch::Contains("members"));
  CHECK_THROWS_WITH(make_surrogate("compact(eta=-1)", 1), Catch::Contains("eta"));
  CHECK_THROWS_WITH(make_surrogate("compact(bogus=1)", 1), Catch::Contains("bogus"));
  CHECK_THROWS_WITH(make_surrogate("compact(members)", 1), Catch::Contains("NAME=VALUE"));
  CHECK_THROWS_WITH(make_surrogate("compact(teacher=ensemble(xgboost)", 1), Catch::Contains("parenthes"));
  CHECK_THROWS_WITH(make_surrogate("compact(synthetic=nan)", 1), Catch::Contains("synthetic"));
}

TEST_CASE("compact: kernel-independent forecasts come from the static features alone", "[surrogate][compact]") {
  const auto tables = read_static_feature_tables((test::source_dir() / "data" / "features").string());
  std::vector<SpaceData> spaces{load_space(test::cache_file("pnpoly", "RTX_3090").string()),
                                load_space(test::cache_file("gemm", "RTX_3090").string())};
  attach_static_features(spaces, tables);
  const auto known = [](const SpaceData& s, std::size_t n) {
    std::vector<Observation> out;
    for (const auto& o : s.observations)
      if (o.candidate.features.at("static_features_known") == 1 && out.size() < n) out.push_back(o);
    return out;
  };
  const auto pnpoly = known(spaces[0], 400);
  const auto gemm = known(spaces[1], 200);
  REQUIRE(gemm.size() == 200);
  auto o = quick();
  o.kernel_independent = true;
  CompactSurrogate model(o);
  model.fit(pnpoly);

  // gemm was never measured, and gets forecasts that differ with what the compiler made of it.
  const auto f = model.predict(candidates_of(gemm));
  auto m = medians(f);
  std::sort(m.begin(), m.end());
  CHECK(m.front() < m.back());
  // Two configurations the compiler made the same of are forecast the same, whatever the parameters.
  Candidate same = gemm[0].candidate;
  same.config = gemm[1].candidate.config;
  REQUIRE(same.config != gemm[0].candidate.config);
  const auto pair = model.predict(std::vector<Candidate>{gemm[0].candidate, same});
  CHECK(pair[0].median_ms == pair[1].median_ms);

  // The option survives saving.
  ArchiveWriter w;
  model.save(w);
  ArchiveReader r(w.data(), "memory");
  const auto back = CompactSurrogate::load(r);
  CHECK(back.options().kernel_independent);
  CHECK(medians(back.predict(candidates_of(gemm))) == medians(f));

  // Configurations the tables do not hold teach it nothing: alone they are refused.
  std::vector<Observation> unknown;
  for (const auto& x : spaces[1].observations)
    if (x.candidate.features.at("static_features_known") == 0 && unknown.size() < 200) unknown.push_back(x);
  REQUIRE(unknown.size() == 200);
  CHECK_THROWS_WITH(CompactSurrogate(o).fit(unknown), Catch::Contains("no successful observation has static features"));
  auto with_unknown = pnpoly;
  with_unknown.insert(with_unknown.end(), unknown.begin(), unknown.end());
  CompactSurrogate mixed(o);
  mixed.fit(with_unknown);
  CHECK(mixed.predict(candidates_of(gemm)).size() == gemm.size());

  // Without static features there is nothing to forecast from; a teacher's swapped parameters
  // would carry stale features.
  CHECK_THROWS_WITH(CompactSurrogate(o).fit(interpolation_split(convolution_a100(), 0.05, 1).train),
                    Catch::Contains("static features"));
  CHECK_THROWS_WITH(make_surrogate("compact(kernel_independent=true,teacher=xgboost)", 1),
                    Catch::Contains("kernel_independent"));
}

TEST_CASE("compact: a thinly measured kernel gets a correction of its own", "[surrogate][compact]") {
  const auto tables = read_static_feature_tables((test::source_dir() / "data" / "features").string());
  std::vector<SpaceData> spaces{load_space(test::cache_file("pnpoly", "RTX_3090").string()),
                                load_space(test::cache_file("gemm", "RTX_3090").string())};
  attach_static_features(spaces, tables);
  std::vector<Observation> pnpoly, gemm_seen, gemm_rest;
  for (const auto& x : spaces[0].observations)
    if (x.candidate.features.at("static_features_known") == 1 && pnpoly.size() < 600) pnpoly.push_back(x);
  for (const auto& x : spaces[1].observations)
    if (x.candidate.features.at("static_features_known") == 1 && x.measurement.ok())
      (gemm_seen.size() < 20 ? gemm_seen : gemm_rest).push_back(x);
  REQUIRE(pnpoly.size() == 600);
  REQUIRE(gemm_rest.size() >= 200);
  auto training = pnpoly;
  training.insert(training.end(), gemm_seen.begin(), gemm_seen.end());
  const auto fitted = [&](bool correction) {
    auto o = quick();
    o.kernel_independent = true;
    o.kernel_correction = correction;
    CompactSurrogate model(o);
    model.fit(training);
    return model;
  };
  const auto corrected = fitted(true), plain = fitted(false);

  // gemm's 20 points teach its correction what its parameters do: configurations the compiler
  // made the same of are told apart, and the rest of gemm is ranked better than without.
  Candidate same = gemm_rest[0].candidate;
  same.config = gemm_rest[1].candidate.config;
  const std::vector<Candidate> pair{gemm_rest[0].candidate, same};
  CHECK(medians(plain.predict(pair))[0] == medians(plain.predict(pair))[1]);
  CHECK(medians(corrected.predict(pair))[0] != medians(corrected.predict(pair))[1]);
  const auto rest = candidates_of(gemm_rest);
  const double with = spearman(medians(corrected.predict(rest)), times(gemm_rest));
  const double without = spearman(medians(plain.predict(rest)), times(gemm_rest));
  INFO("gemm RTX_3090, 20 points seen: Spearman with correction " << with << ", without " << without);
  CHECK(with > without);

  // pnpoly, measured well, is not corrected; the correction survives saving.
  const auto pnpoly_candidates = candidates_of(pnpoly);
  CHECK(medians(corrected.predict(pnpoly_candidates)) == medians(plain.predict(pnpoly_candidates)));
  ArchiveWriter w;
  corrected.save(w);
  ArchiveReader r(w.data(), "memory");
  CHECK(medians(CompactSurrogate::load(r).predict(rest)) == medians(corrected.predict(rest)));
}

TEST_CASE("compact: a file of version 1, before kernel corrections, still loads", "[surrogate][compact]") {
  const auto split = interpolation_split(convolution_a100(), 0.05, 2);
  CompactSurrogate model(quick());
  model.fit(split.train);
  ArchiveWriter w;
  model.save(w);
  // Version 2 is version 1 with the kernels' corrections appended: a count, 0 here.
  ArchiveWriter tag2, tag1;
  tag2.str("compact");
  tag2.u32(2);
  tag1.str("compact");
  tag1.u32(1);
  const std::string& v2 = w.data();
  REQUIRE(v2.compare(0, tag2.data().size(), tag2.data()) == 0);
  const std::string v1 = tag1.data() + v2.substr(tag2.data().size(), v2.size() - tag2.data().size() - 8);
  ArchiveReader r(v1, "version 1");
  const auto cands = candidates_of(split.test);
  CHECK(medians(CompactSurrogate::load(r).predict(cands)) == medians(model.predict(cands)));
}

TEST_CASE("compact: members past the static feature share read the parameters alone", "[surrogate][compact]") {
  const auto tables = read_static_feature_tables((test::source_dir() / "data" / "features").string());
  std::vector<SpaceData> spaces{load_space(test::cache_file("pnpoly", "RTX_3090").string())};
  attach_static_features(spaces, tables);
  const auto split = interpolation_split(spaces[0], 0.05, 3);
  auto cands = candidates_of(split.test);
  cands.resize(100);
  // The same configurations, with what the compiler made of them changed.
  auto changed = cands;
  for (auto& c : changed) c.features["registers"] += 64;
  const auto forecasts = [&](double share, const std::vector<Candidate>& of) {
    auto o = quick(3);
    o.static_feature_share = share;
    CompactSurrogate model(o);
    model.fit(split.train);
    return medians(model.predict(of));
  };
  CHECK(forecasts(0, cands) == forecasts(0, changed));  // no member sees them
  CHECK(forecasts(0.33, cands) != forecasts(0.33, changed));
  CHECK(forecasts(1, cands) != forecasts(1, changed));
  // Without static features every member sees the same rows, whatever the share.
  const auto plain = interpolation_split(convolution_a100(), 0.05, 3);
  auto o = quick(3);
  o.static_feature_share = 1;
  CompactSurrogate all(o);
  all.fit(plain.train);
  o.static_feature_share = 0.33;
  CompactSurrogate share(o);
  share.fit(plain.train);
  CHECK(medians(all.predict(candidates_of(plain.test))) == medians(share.predict(candidates_of(plain.test))));
  CHECK_THROWS_WITH(make_surrogate("compact(kernel_independent=true,static_features=none)", 1),
                    Catch::Contains("kernel_independent"));
}
