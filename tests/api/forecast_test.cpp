// load() and forecast(): the model bundle round trip, concurrent calls, and damaged files.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <random>
#include <thread>

#include "calibration/fixed_predictions.hpp"
#include "calibration/model_bundle.hpp"
#include "calibration/selective_calibrator.hpp"
#include "calibration/view_models.hpp"
#include "compose/model_impl.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/forecast.hpp"
#include "surrogate/knn.hpp"
#include "gpuforecast/surrogate/model_file.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;


namespace {

struct Fixture {
  AnySurrogate surrogate;
  SelectiveCalibrator calibrator;
  std::vector<Candidate> test;
  std::vector<double> test_ms;
  std::vector<Observation> test_obs;
  std::vector<Candidate> cal_c;
  std::vector<Forecast> cal_f;
  std::vector<double> cal_t;
  std::string path;
};

const Fixture& fixture() {
  static const Fixture fx = [] {
    Fixture f;
    const SpaceData space = load_space(test::cache_file("convolution_milo", "A100").string());
    std::vector<Observation> ok;
    for (const auto& o : space.observations)
      if (o.measurement.ok()) ok.push_back(o);
    std::mt19937_64 rng(5);
    std::shuffle(ok.begin(), ok.end(), rng);
    const std::size_t n_train = ok.size() / 10, n_cal = ok.size() / 10;
    KnnSurrogate knn;
    knn.fit(std::span<const Observation>(ok.data(), n_train));
    std::vector<Candidate> cc;
    std::vector<double> ct;
    for (std::size_t i = n_train; i < n_train + n_cal; ++i) {
      cc.push_back(ok[i].candidate);
      ct.push_back(ok[i].measurement.median_ms);
    }
    const auto cf = knn.predict(cc);
    f.calibrator = SelectiveCalibrator::fit(cc, cf, ct, {});
    f.cal_c = cc;
    f.cal_f = cf;
    f.cal_t = ct;
    for (std::size_t i = n_train + n_cal; i < ok.size(); ++i) {
      f.test.push_back(ok[i].candidate);
      f.test_ms.push_back(ok[i].measurement.median_ms);
      f.test_obs.push_back(ok[i]);
    }
    f.surrogate = AnySurrogate(std::move(knn));
    f.path = (std::filesystem::temp_directory_path() / "gpuforecast_api_test.gfm").string();
    save_model_bundle(f.path, f.surrogate, f.calibrator,
                      TrainingSummary::of(std::span<const Observation>(ok.data(), n_train)));
    return f;
  }();
  return fx;
}

// A saved surrogate may keep weights as float, and batches may round differently from single
// calls: equal up to 1e-6 relative is the same forecast.
bool close(double a, double b) { return a == b || std::abs(a - b) <= 1e-6 * std::max(std::abs(a), std::abs(b)); }
bool same(const Decision& a, const Decision& b) {
  return close(a.forecast.median_ms, b.forecast.median_ms) && close(a.interval_low_ms, b.interval_low_ms) &&
         close(a.interval_high_ms, b.interval_high_ms) && close(a.confidence, b.confidence) && a.defer == b.defer;
}
bool identical(const Decision& a, const Decision& b) {
  return a.forecast.median_ms == b.forecast.median_ms && a.interval_low_ms == b.interval_low_ms &&
         a.interval_high_ms == b.interval_high_ms && a.confidence == b.confidence && a.defer == b.defer &&
         a.reason == b.reason && a.forecast.bin_probabilities == b.forecast.bin_probabilities;
}

}  // namespace

TEST_CASE("a calibrated model file loads and forecasts like the parts it was made of", "[data]") {
  const auto& fx = fixture();
  const Model model = load(fx.path);
  CHECK(model.info().calibrated);
  CHECK(model.info().surrogate_kind == "knn");
  CHECK(model.info().alpha == Approx(0.1));
  CHECK(model.info().kernels == std::vector<std::string>{"convolution_milo"});
  const std::vector<Candidate> some(fx.test.begin(), fx.test.begin() + 50);
  const auto expected = decide_all(&fx.calibrator, some, fx.surrogate.predict(some), std::nullopt, "");
  const auto batch = forecast(model, some);
  for (std::size_t i = 0; i < some.size(); ++i) {
    CHECK(same(batch[i], expected[i]));
    CHECK(same(forecast(model, some[i]), expected[i]));
    CHECK(batch[i].interval_low_ms <= batch[i].forecast.median_ms);
    CHECK(batch[i].interval_high_ms >= batch[i].forecast.median_ms);
    CHECK_FALSE(batch[i].reason.empty());
  }
  const Decision with_ref = forecast(model, some[0], fx.test_ms[1]);
  REQUIRE(with_ref.forecast.bin_probabilities);
  double sum = 0;
  for (double p : *with_ref.forecast.bin_probabilities) sum += p;
  CHECK(sum == Approx(1.0));
}

TEST_CASE("a Model is a SelectivePredictor: decide() is forecast(), space and reference included", "[data]") {
  static_assert(SelectivePredictor<Model>);
  const auto& fx = fixture();
  const Model model = load(fx.path);
  const std::vector<Candidate> some(fx.test.begin(), fx.test.begin() + 20);
  const auto decided = model.decide(some);
  const auto forecast_batch = forecast(model, some);
  REQUIRE(decided.size() == some.size());
  for (std::size_t i = 0; i < some.size(); ++i) CHECK(identical(decided[i], forecast_batch[i]));
  const auto against = model.decide(std::span<const Candidate>(some.data(), 1), nullptr, fx.test_ms[1]);
  CHECK(identical(against.front(), forecast(model, some[0], fx.test_ms[1])));
  for (double bad : {0.0, -1.0, std::nan("")}) {
    INFO("reference_ms " << bad);
    CHECK_THROWS_WITH(model.decide(some, nullptr, bad), Catch::Matchers::Contains("reference_ms must be a positive runtime"));
    CHECK_THROWS_WITH(forecast(model, some[0], bad), Catch::Matchers::Contains("reference_ms must be a positive runtime"));
  }
}

TEST_CASE("forecast() is safe from many threads at once", "[data]") {
  const auto& fx = fixture();
  const Model model = load(fx.path);
  const std::size_t n = std::min<std::size_t>(fx.test.size(), 400);
  std::vector<Candidate> cands(fx.test.begin(), fx.test.begin() + static_cast<std::ptrdiff_t>(n));
  // Reference answers from one thread, with the same calls the threads make.
  std::vector<Decision> plain, with_ref;
  for (const auto& c : cands) {
    plain.push_back(forecast(model, c));
    with_ref.push_back(forecast(model, c, 1.0));
  }
  const int threads = 16;
  std::atomic<int> mismatches{0}, failures{0}, calls{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (int rep = 0; rep < 3; ++rep)
          for (std::size_t i = static_cast<std::size_t>(t) % 7; i < n; i += 3) {
            const bool ref = (i + static_cast<std::size_t>(rep)) % 2 == 0;
            const Decision d = ref ? forecast(model, cands[i], 1.0) : forecast(model, cands[i]);
            if (!identical(d, ref ? with_ref[i] : plain[i])) ++mismatches;
            ++calls;
          }
      } catch (...) {
        ++failures;
      }
    });
  for (auto& th : pool) th.join();
  CHECK(failures == 0);
  CHECK(mismatches == 0);
  CHECK(calls > 5000);
}

TEST_CASE("uncalibrated, empty and damaged models", "[data]") {
  const auto& fx = fixture();
  const std::string raw = (std::filesystem::temp_directory_path() / "gpuforecast_api_raw.gfm").string();
  save_surrogate(raw, fx.surrogate);
  const Model m = load(raw);
  CHECK_FALSE(m.info().calibrated);
  const Decision d = forecast(m, fx.test[0]);
  CHECK(d.defer);
  CHECK_THAT(d.reason, Contains("not calibrated"));

  CHECK_THROWS_WITH(forecast(Model{}, fx.test[0]), Contains("empty gpuforecast::Model"));
  CHECK_THROWS_AS(load("/nonexistent/model.gfm"), model_file_error);

  ModelFile file = read_model_file(fx.path);
  const std::string* cal = file.find("calibration");
  REQUIRE(cal);
  file.set("calibration", cal->substr(0, cal->size() / 2));
  const std::string broken = (std::filesystem::temp_directory_path() / "gpuforecast_api_broken.gfm").string();
  write_model_file(broken, file);
  CHECK_THROWS_AS(load(broken), model_file_error);

  ArchiveWriter w;
  w.u32(calibration_section_version + 1);
  file.set("calibration", w.data());
  write_model_file(broken, file);
  CHECK_THROWS_WITH(load(broken), Contains("newer"));
}

TEST_CASE("the calibrator adapts online through update()", "[data]") {
  const auto& fx = fixture();
  CalibrationOptions o;
  o.aci_gamma = 0.05;
  SelectiveCalibrator calibrator = SelectiveCalibrator::fit(fx.cal_c, fx.cal_f, fx.cal_t, o);
  REQUIRE(calibrator.adaptive().has_value());
  const std::vector<Candidate> batch(fx.test.begin(), fx.test.begin() + 100);
  const auto f = fx.surrogate.predict(batch);
  for (std::size_t i = 0; i < batch.size(); ++i) calibrator.update(batch[i], f[i], fx.test_ms[i]);
  CHECK(calibrator.adaptive()->steps() == 100);
  const Decision d = calibrator.decide(fx.test[200], fx.surrogate.predict(std::span(&fx.test[200], 1)).front());
  CHECK(d.interval_low_ms <= d.interval_high_ms);
}

TEST_CASE("a Model made from parts in memory decides as the file made of them", "[data]") {
  const auto& fx = fixture();
  const Model parts = make_model(fx.surrogate, fx.calibrator);
  CHECK(parts.info().calibrated);
  const std::vector<Candidate> some(fx.test.begin(), fx.test.begin() + 20);
  const auto a = parts.decide(some);
  const auto b = load(fx.path).decide(some);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(same(a[i], b[i]));
  const auto uncalibrated = make_model(fx.surrogate, std::nullopt).decide(some);
  for (const Decision& d : uncalibrated) {
    CHECK(d.defer);
    CHECK_THAT(d.reason, Catch::Matchers::Contains("not calibrated"));
  }
}

TEST_CASE("a model calibrated on views forecasts its device through them, and a file without them is refused",
          "[data]") {
  const auto& fx = fixture();
  // A scope as cross-device calibration on views leaves it: the A100's forecasts are the TITAN
  // RTX view's, doubled (log t = log 2 + 1 log t_TITAN).
  SelectiveCalibrator scoped = fx.calibrator;
  DeviceScope scope;
  scope.device = fx.test.front().device->name;
  scope.adapt_points = 20;
  scope.view_devices = {"TITAN RTX"};
  scope.stacking.intercept = std::log(2.0);
  scope.stacking.weights = {1.0};
  scoped.restrict_to_device(scope);
  ViewModels views;
  views.surrogate = "knn";
  views.models.push_back({"TITAN RTX", "NVIDIA", {"convolution_milo"}, fx.surrogate});

  const std::string path = (std::filesystem::temp_directory_path() / "gpuforecast_api_views_test.gfm").string();
  save_model_bundle(path, fx.surrogate, scoped, {});
  CHECK_THROWS_WITH(load(path), Contains(path) && Contains("stacks the view of TITAN RTX"));
  ModelFile file = read_model_file(path);
  set_views_section(file, views);
  write_model_file(path, file);

  const Model model = load(path);
  const std::vector<Candidate> some(fx.test.begin(), fx.test.begin() + 20);
  std::vector<Candidate> on_titan = some;
  for (auto& c : on_titan) c.device = view_device("TITAN RTX");
  const auto titan = fx.surrogate.predict(on_titan);
  const auto decisions = forecast(model, some);
  for (std::size_t i = 0; i < some.size(); ++i) {
    INFO("candidate " << i);
    CHECK(close(decisions[i].forecast.median_ms, 2 * titan[i].median_ms));
  }
  std::filesystem::remove(path);
  // Made from parts in memory without the view models: refused when it would need them.
  const Model parts = make_model(fx.surrogate, scoped);
  CHECK_THROWS_WITH(forecast(parts, some), Contains("stacks the view of TITAN RTX, which the model lacks"));
}
