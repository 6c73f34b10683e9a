// The libtorch transformer surrogate on real data (small model and few steps: a test checks
// behaviour, benchmarks/transformer_tuning and forecast_quality measure quality).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "gpuforecast/surrogate/any_surrogate.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "surrogate/transformer.hpp"
#include "support/data.hpp"
#include "../../src/surrogate/transformer/inference_path.hpp"  // tests have no src/ include path

using namespace gpuforecast;

namespace {

TransformerOptions small_options() {
  TransformerOptions o;
  o.width = 16;
  o.depth = 1;
  o.heads = 2;
  o.epochs = 1;
  o.min_steps = 300;
  o.max_steps = 300;
  o.seed = 10;
  o.threads = 1;
  return o;
}

const Dataset& dedispersion() {
  static const Dataset ds = [] {
    const std::vector<std::string> paths{test::cache_file("dedispersion_milo", "A100").string()};
    return Dataset::load(paths);
  }();
  return ds;
}

double spearman(std::vector<double> a, std::vector<double> b) {
  auto rank = [](const std::vector<double>& v) {
    std::vector<std::size_t> o(v.size());
    std::iota(o.begin(), o.end(), 0);
    std::sort(o.begin(), o.end(), [&](auto x, auto y) { return v[x] < v[y]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < o.size(); ++i) r[o[i]] = static_cast<double>(i);
    return r;
  };
  const auto ra = rank(a), rb = rank(b);
  const double n = static_cast<double>(a.size()), m = (n - 1) / 2;
  double s = 0, sa = 0, sb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    s += (ra[i] - m) * (rb[i] - m);
    sa += (ra[i] - m) * (ra[i] - m);
    sb += (rb[i] - m) * (rb[i] - m);
  }
  return s / std::sqrt(sa * sb);
}

struct Trained {
  Dataset::Split split;
  TransformerSurrogate model;
  std::vector<Candidate> test;
  std::vector<double> truth;
};

// One trained model shared by the checks that only read it (training is the slow part).
Trained& trained() {
  static Trained t = [] {
    Trained r{dedispersion().split_random(0.05, 3, false), TransformerSurrogate(small_options()), {}, {}};
    r.model.fit(r.split.train);
    for (const auto& o : r.split.test)
      if (o.measurement.ok() && r.test.size() < 2000) {
        r.test.push_back(o.candidate);
        r.truth.push_back(o.measurement.median_ms);
      }
    return r;
  }();
  return t;
}

std::vector<double> medians(const std::vector<Forecast>& f) {
  std::vector<double> m;
  for (const auto& x : f) m.push_back(x.median_ms);
  return m;
}

}  // namespace

TEST_CASE("transformer: models the persistent surrogate concept and says its kind") {
  STATIC_REQUIRE(PersistentSurrogate<TransformerSurrogate>);
  TransformerSurrogate s;
  CHECK(s.kind() == "transformer");
  CHECK_FALSE(s.trained());
}

TEST_CASE("transformer: rejects bad options and use before training") {
  TransformerOptions o;
  o.width = 30;
  o.heads = 4;
  CHECK_THROWS_AS(TransformerSurrogate(o), invalid_argument_error);
  TransformerSurrogate s(small_options());
  const std::vector<Candidate> c{dedispersion().spaces().front().observations.front().candidate};
  CHECK_THROWS_AS(s.predict(c), invalid_argument_error);
  std::vector<Observation> failed{dedispersion().spaces().front().observations.front()};
  failed.front().measurement.status = Status::runtime_failed;
  CHECK_THROWS_AS(s.fit(failed), invalid_argument_error);
}

TEST_CASE("transformer: learns the ranking of a real space from 5% of it") {
  auto& t = trained();
  const auto f = t.model.predict(t.test);
  REQUIRE(f.size() == t.test.size());
  for (const auto& x : f) {
    REQUIRE(std::isfinite(x.median_ms));
    CHECK(x.lower_ms <= x.median_ms);
    CHECK(x.median_ms <= x.upper_ms);
    CHECK(x.p_fail >= 0.0);
    CHECK(x.p_fail <= 1.0);
    CHECK(x.spread > 0.0);
    CHECK_FALSE(x.bin_probabilities.has_value());
  }
  const double rho = spearman(medians(f), t.truth);
  INFO("Spearman " << rho);
  CHECK(rho > 0.5);
  // Runtimes come back in milliseconds of the right magnitude (per-group normaliser).
  std::vector<double> m = medians(f);
  std::sort(m.begin(), m.end());
  std::vector<double> truth = t.truth;
  std::sort(truth.begin(), truth.end());
  CHECK(m[m.size() / 2] == Approx(truth[truth.size() / 2]).epsilon(0.5));
}

TEST_CASE("transformer: the same seed gives the same model") {
  const auto split = dedispersion().split_random(0.01, 5, false);
  TransformerOptions o = small_options();
  o.min_steps = o.max_steps = 30;
  TransformerSurrogate a(o), b(o);
  a.fit(split.train);
  b.fit(split.train);
  const std::vector<Candidate> c{split.test[0].candidate, split.test[1].candidate, split.test[2].candidate};
  const auto fa = a.predict(c), fb = b.predict(c);
  for (std::size_t i = 0; i < c.size(); ++i) CHECK(fa[i].median_ms == fb[i].median_ms);
}

TEST_CASE("transformer: speedup-bin probabilities against a reference") {
  auto& t = trained();
  std::vector<Candidate> cands(t.test.begin(), t.test.begin() + 50);
  const std::vector<Candidate> ref{t.test[100]};
  const auto bins = t.model.predict_bins(ref, cands);
  REQUIRE(bins.size() == cands.size());
  for (const auto& p : bins) {
    CHECK(std::accumulate(p.begin(), p.end(), 0.0) == Approx(1.0).epsilon(1e-4));
    CHECK(*std::min_element(p.begin(), p.end()) >= 0.0);
  }
  CHECK_THROWS_AS(t.model.predict_bins(std::vector<Candidate>(2, t.test[0]), cands), invalid_argument_error);
  TransformerSurrogate copy = t.model;
  copy.set_reference(t.test[100]);
  const auto f = copy.predict(cands);
  for (std::size_t i = 0; i < f.size(); ++i) {
    REQUIRE(f[i].bin_probabilities.has_value());
    for (std::size_t j = 0; j < 8; ++j) CHECK((*f[i].bin_probabilities)[j] == Approx(bins[i][j]).margin(1e-5));
  }
  copy.clear_reference();
  CHECK_FALSE(copy.predict(cands).front().bin_probabilities.has_value());
}

TEST_CASE("transformer: save and load give the same forecasts, damaged payloads fail cleanly") {
  auto& t = trained();
  ArchiveWriter w;
  t.model.save(w);
  ArchiveReader r(w.data(), "memory.gfm");
  const auto loaded = TransformerSurrogate::load(r);
  CHECK(r.at_end());
  const std::vector<Candidate> c(t.test.begin(), t.test.begin() + 20);
  const auto a = t.model.predict(c), b = loaded.predict(c);
  for (std::size_t i = 0; i < c.size(); ++i) CHECK(a[i].median_ms == Approx(b[i].median_ms).epsilon(1e-6));
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, w.data().size() / 2, w.data().size() - 1}) {
    const std::string part = w.data().substr(0, cut);
    ArchiveReader rr(part, "cut.gfm");
    CHECK_THROWS_AS(TransformerSurrogate::load(rr), model_file_error);
  }
  std::string future = w.data();
  future[0] = static_cast<char>(99);
  ArchiveReader rf(future, "future.gfm");
  CHECK_THROWS_WITH(TransformerSurrogate::load(rf), Catch::Contains("version"));
}

TEST_CASE("transformer: a model file gives the same forecasts, loaded through the registry") {
  auto& t = trained();
  const auto path = (std::filesystem::temp_directory_path() / "gpuforecast_transformer_surrogate_test.gfm").string();
  save_surrogate(path, AnySurrogate(t.model));
  const auto loaded = load_surrogate(path);  // the "transformer" kind, registered by its library
  std::filesystem::remove(path);
  REQUIRE(loaded.get<TransformerSurrogate>() != nullptr);
  const std::vector<Candidate> c(t.test.begin(), t.test.begin() + 50);
  const auto a = t.model.predict(c), b = loaded.predict(c);
  for (std::size_t i = 0; i < c.size(); ++i) {
    CHECK(b[i].median_ms == Approx(a[i].median_ms).epsilon(1e-5));
    CHECK(b[i].lower_ms == Approx(a[i].lower_ms).epsilon(1e-5));
    CHECK(b[i].upper_ms == Approx(a[i].upper_ms).epsilon(1e-5));
    CHECK(b[i].p_fail == Approx(a[i].p_fail).margin(1e-5));
  }
}

TEST_CASE("transformer: copies are deep and update() fine-tunes only the copy") {
  auto& t = trained();
  const std::vector<Candidate> c(t.test.begin(), t.test.begin() + 10);
  const auto before = t.model.predict(c);
  AnySurrogate any(t.model);
  AnySurrogate shared = any;  // copy-on-write clones the transformer before update
  std::vector<Observation> fresh;
  for (const auto& o : t.split.test)
    if (fresh.size() < 100) fresh.push_back(o);
  shared.update(fresh);
  const auto after_orig = t.model.predict(c), after_any = any.predict(c), after_shared = shared.predict(c);
  bool changed = false;
  for (std::size_t i = 0; i < c.size(); ++i) {
    CHECK(after_orig[i].median_ms == before[i].median_ms);
    CHECK(after_any[i].median_ms == before[i].median_ms);
    changed = changed || after_shared[i].median_ms != before[i].median_ms;
  }
  CHECK(changed);
}

TEST_CASE("transformer: transfer to an unseen device, then fine-tune on a few of its points") {
  const std::vector<std::string> paths{test::cache_file("dedispersion_milo", "A4000").string(),
                                       test::cache_file("dedispersion_milo", "A6000").string()};
  const auto ds = Dataset::load(paths);
  const auto split = ds.split_by_device(ds.spaces()[1].device->name, false);
  std::vector<Observation> train;
  for (std::size_t i = 0; i < split.train.size(); i += 10) train.push_back(split.train[i]);
  TransformerSurrogate s(small_options());
  s.fit(train);
  std::vector<Candidate> target;
  std::vector<double> truth;
  for (std::size_t i = 0; i < split.test.size() && target.size() < 1000; i += 3)
    if (split.test[i].measurement.ok()) {
      target.push_back(split.test[i].candidate);
      truth.push_back(split.test[i].measurement.median_ms);
    }
  const auto zero_shot = s.predict(target);
  for (const auto& f : zero_shot) REQUIRE(std::isfinite(f.median_ms));
  INFO("zero-shot Spearman " << spearman(medians(zero_shot), truth));
  CHECK(spearman(medians(zero_shot), truth) > 0.3);
  std::vector<Observation> few(split.test.begin(), split.test.begin() + 20);
  s.fine_tune(few, 30);
  for (const auto& f : s.predict(target)) REQUIRE(std::isfinite(f.median_ms));
}

TEST_CASE("transformer: the reinforcement stage runs for every reward and keeps distributions valid") {
  auto& t = trained();
  for (auto reward : {TransformerRlOptions::Reward::correctness, TransformerRlOptions::Reward::correctness_brier,
                      TransformerRlOptions::Reward::correctness_crps}) {
    TransformerSurrogate copy = t.model;
    TransformerRlOptions ro;
    ro.reward = reward;
    ro.steps = 10;
    const auto rep = copy.reinforce(t.split.train, ro);
    CHECK(rep.mean_reward.size() == 10);
    const std::vector<Candidate> ref{t.test[0]};
    const std::vector<Candidate> c(t.test.begin() + 1, t.test.begin() + 20);
    for (const auto& p : copy.predict_bins(ref, c))
      CHECK(std::accumulate(p.begin(), p.end(), 0.0) == Approx(1.0).epsilon(1e-4));
  }
}

TEST_CASE("transformer: launch geometry from a T1 spec and CUDA source tokens") {
  const std::vector<std::string> paths{test::cache_file("convolution_milo", "A100").string()};
  const auto ds = Dataset::load(paths);
  const auto t1 = read_t1(test::t1_file("convolution_milo").string());
  auto spec = std::make_shared<KernelSpec>(t1.kernel);
  spec->source = "__global__ void convolution_kernel(float* out, const float* in) {\n"
                 "  // comment\n  int x = blockIdx.x * block_size_x + threadIdx.x; out[x] = in[x] * 2.0f;\n}\n";
  std::vector<Observation> obs;
  for (std::size_t i = 0; i < ds.spaces().front().observations.size() && obs.size() < 300; i += 7) {
    obs.push_back(ds.spaces().front().observations[i]);
    obs.back().candidate.spec = spec;
  }
  TransformerOptions o = small_options();
  o.min_steps = o.max_steps = 20;
  o.source_tokens = true;
  TransformerSurrogate s(o);
  s.fit(obs);
  std::vector<Candidate> with, without;
  for (std::size_t i = 0; i < 20; ++i) {
    with.push_back(obs[i].candidate);
    without.push_back(obs[i].candidate);
    without.back().spec.reset();
  }
  const auto a = s.predict(with), b = s.predict(without);
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(std::isfinite(a[i].median_ms));
    REQUIRE(std::isfinite(b[i].median_ms));
    differs = differs || a[i].median_ms != b[i].median_ms;
  }
  CHECK(differs);  // geometry and source tokens reach the model
}

namespace {

void check_training_paths_agree(std::span<const Observation> train, const std::vector<Candidate>& c);

// Forecasts of the fast inference path and of the torch::nn modules (training's forward pass)
// agree to float rounding: 1e-5 relative on times, 1e-5 absolute on probabilities.
void check_paths_agree(const TransformerSurrogate& model, const std::vector<Candidate>& cands) {
  const auto fast = model.predict(cands);
  detail::transformer::set_module_path(true);
  std::vector<Forecast> slow;
  try {
    slow = model.predict(cands);
  } catch (...) {
    detail::transformer::set_module_path(false);
    throw;
  }
  detail::transformer::set_module_path(false);
  REQUIRE(fast.size() == slow.size());
  for (std::size_t i = 0; i < fast.size(); ++i) {
    INFO("candidate " << i);
    CHECK(fast[i].median_ms == Approx(slow[i].median_ms).epsilon(1e-5));
    CHECK(fast[i].lower_ms == Approx(slow[i].lower_ms).epsilon(1e-5));
    CHECK(fast[i].upper_ms == Approx(slow[i].upper_ms).epsilon(1e-5));
    CHECK(fast[i].p_fail == Approx(slow[i].p_fail).margin(1e-5));
    REQUIRE(fast[i].bin_probabilities.has_value() == slow[i].bin_probabilities.has_value());
    if (fast[i].bin_probabilities)
      for (std::size_t j = 0; j < 8; ++j)
        CHECK((*fast[i].bin_probabilities)[j] == Approx((*slow[i].bin_probabilities)[j]).margin(1e-5));
  }
}

}  // namespace

TEST_CASE("transformer: the fast inference path gives the modules' forecasts") {
  auto& t = trained();
  check_paths_agree(t.model, t.test);
  TransformerSurrogate copy = t.model;
  copy.set_reference(t.test[7]);
  check_paths_agree(copy, std::vector<Candidate>(t.test.begin(), t.test.begin() + 300));
  const std::vector<Candidate> ref{t.test[3]};
  const std::vector<Candidate> c(t.test.begin() + 10, t.test.begin() + 60);
  const auto fast = t.model.predict_bins(ref, c);
  detail::transformer::set_module_path(true);
  const auto slow = t.model.predict_bins(ref, c);
  detail::transformer::set_module_path(false);
  for (std::size_t i = 0; i < c.size(); ++i)
    for (std::size_t j = 0; j < 8; ++j) CHECK(fast[i][j] == Approx(slow[i][j]).margin(1e-5));
}

TEST_CASE("transformer: the fast inference path pads and masks like the modules") {
  // Geometry that cannot be evaluated for tile_size_x = 1 (division by zero): those candidates
  // have three tokens fewer, so batches mix lengths and need padding and key masks.
  const std::vector<std::string> paths{test::cache_file("convolution_milo", "A100").string()};
  const auto ds = Dataset::load(paths);
  auto spec = std::make_shared<KernelSpec>();
  spec->kernel_name = "convolution_kernel";
  spec->local_size = {"block_size_x / (tile_size_x - 1)", "block_size_y", "1"};
  spec->global_size = {"ProblemSize[0] / block_size_x", "ProblemSize[1] / block_size_y", "1"};
  std::vector<Observation> obs;
  const auto& all = ds.spaces().front().observations;
  for (std::size_t i = 0; i < all.size() && obs.size() < 400; i += 5) {
    obs.push_back(all[i]);
    obs.back().candidate.spec = spec;
  }
  TransformerOptions o = small_options();
  o.width = 32;
  o.depth = 2;
  o.heads = 4;
  o.min_steps = o.max_steps = 40;
  o.inference_batch = 37;  // several batches, some of them all one length
  o.threads = 2;
  TransformerSurrogate s(o);
  s.fit(obs);
  std::vector<Candidate> cands;
  bool short_one = false, long_one = false;
  for (const auto& x : obs) {
    cands.push_back(x.candidate);
    const bool geometry_fails = x.candidate.config.values()[2].as_double() == 1.0;  // tile_size_x
    short_one = short_one || geometry_fails;
    long_one = long_one || !geometry_fails;
  }
  REQUIRE(ds.spaces().front().observations.front().candidate.config.names()[2] == "tile_size_x");
  REQUIRE(short_one);
  REQUIRE(long_one);
  check_paths_agree(s, cands);
  s.set_reference(cands[1]);
  check_paths_agree(s, cands);
  check_training_paths_agree(obs, cands);  // padded training batches too
}

namespace {

// A few optimiser steps from the same seed with training's batch-first forward and with the
// modules' forward give the same model up to float rounding (differences would grow over a long
// schedule, as they do between thread counts).
void check_training_paths_agree(std::span<const Observation> train, const std::vector<Candidate>& c) {
  TransformerOptions o = small_options();
  o.width = 32;
  o.depth = 2;
  o.heads = 4;
  o.min_steps = o.max_steps = 3;
  o.validation_fraction = 0;
  TransformerSurrogate batch_first(o), modules(o);
  batch_first.fit(train);
  detail::transformer::set_module_path(true);
  try {
    modules.fit(train);
  } catch (...) {
    detail::transformer::set_module_path(false);
    throw;
  }
  detail::transformer::set_module_path(false);
  const auto a = batch_first.predict(c), b = modules.predict(c);
  for (std::size_t i = 0; i < c.size(); ++i) {
    CHECK(a[i].median_ms == Approx(b[i].median_ms).epsilon(1e-4));
    CHECK(a[i].p_fail == Approx(b[i].p_fail).margin(1e-4));
  }
}

}  // namespace

TEST_CASE("transformer: training's batch-first forward is the modules' forward") {
  const auto split = dedispersion().split_random(0.02, 7, false);
  std::vector<Candidate> c;
  for (std::size_t i = 0; i < 200; ++i) c.push_back(split.test[i].candidate);
  check_training_paths_agree(split.train, c);
}
