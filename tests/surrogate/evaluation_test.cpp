// The protocols on real data (../shared/datasets): numbers in plausible ranges, seeds reproduce.
#include <catch2/catch.hpp>

#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "core/warning.hpp"
#include "surrogate/evaluation.hpp"
#include "surrogate/feature_encoder.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "support/data.hpp"
#include "support/wild_cache.hpp"
#include "data/temp_dir.hpp"

using namespace gpuforecast;

TEST_CASE("interpolation on dedispersion_milo A100 ranks well above chance", "[data]") {
  const auto space = load_space(test::cache_file("dedispersion_milo", "A100").string());
  const SurrogateFactory ridge = [](std::uint64_t seed) { return make_surrogate("ridge", seed); };
  const auto run = evaluate_interpolation(space, "ridge", ridge, 0.05, 1);
  CHECK(run.protocol == "interpolate");
  CHECK(run.train_count == static_cast<std::size_t>(std::llround(0.05 * static_cast<double>(space.observations.size()))));
  CHECK(run.test_count + run.train_count <= space.observations.size());
  CHECK(run.scores.spearman > 0.5);
  CHECK(run.scores.utility >= 1.0);
  CHECK(run.scores.bins.pairs > 0);
  const auto again = evaluate_interpolation(space, "ridge", ridge, 0.05, 1);
  CHECK(again.scores.spearman == run.scores.spearman);
  CHECK_THROWS_AS(evaluate_interpolation(space, "ridge", ridge, 1.5, 1), invalid_argument_error);
}

TEST_CASE("transfer to an unseen device: A4000 from A6000 with 20 target points", "[data]") {
  const auto a6000 = load_space(test::cache_file("convolution_milo", "A6000").string());
  const auto a4000 = load_space(test::cache_file("convolution_milo", "A4000").string());
  const SurrogateFactory knn = [](std::uint64_t seed) { return make_surrogate("knn", seed); };
  const SpaceData* train[] = {&a6000};
  const auto run = evaluate_transfer(train, a4000, 20, "knn", knn, 2, "transfer-device");
  CHECK(run.train_count == a6000.observations.size() + 20);
  CHECK(run.scores.spearman > 0.6);  // same-vendor devices agree strongly in this data
  const EvaluationRun runs[] = {run, run};
  CHECK(mean_run(runs).scores.spearman == Approx(run.scores.spearman));
}

TEST_CASE("interpolation within a device the table lacks: its device features are missing, forecasts work", "[data]") {
  const test::TempDir dir;
  const auto path = test::write_wild_cache(test::cache_file("dedispersion_milo", "A100"), dir.path() / "wild.json",
                                           "Imaginary GPU 9000");
  std::size_t warnings = 0;
  const auto previous = set_warning_handler([&](const std::string&) { ++warnings; });
  const auto wild = load_space(path.string());
  set_warning_handler(previous);
  CHECK(warnings == 1);
  // The encoder sees the unknown device exactly as a candidate without a device.
  CHECK(FeatureEncoder::device_features(wild.device.get()) == FeatureEncoder::device_features(nullptr) );
  const auto shared = load_space(test::cache_file("dedispersion_milo", "A100").string());
  const SurrogateFactory ridge = [](std::uint64_t seed) { return make_surrogate("ridge", seed); };
  const auto run = evaluate_interpolation(wild, "ridge", ridge, 0.05, 1);
  CHECK(run.scores.spearman > 0.5);
  // Within one device the device features are constant: the same scores as with the A100's numbers.
  CHECK(run.scores.spearman == Approx(evaluate_interpolation(shared, "ridge", ridge, 0.05, 1).scores.spearman));
}
