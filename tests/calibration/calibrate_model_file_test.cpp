// calibrate_model_file: what `gpuforecast calibrate` and Python's calibrate() do, on the shared
// data: the written model carries the calibrator fitted on the successful runs, a file the
// surrogate was trained on is warned about, and bad input fails without writing anything.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/temp_dir.hpp"
#include "calibration/calibrate_model_file.hpp"
#include "calibration/model_bundle.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "gpuforecast/surrogate/registry.hpp"
#include "support/data.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

// A ridge model trained on convolution_milo A4000, saved with its training summary.
std::string trained_model(const test::TempDir& dir, const std::string& training_file) {
  const std::vector<std::string> files{training_file};
  const auto observations = Dataset::load(files).observations(false);
  AnySurrogate model = make_surrogate("ridge", 1);
  model.fit(observations);
  const auto path = (dir.path() / "ridge.gfm").string();
  save_surrogate(path, model, TrainingSummary::of(observations));
  return path;
}

}  // namespace

TEST_CASE("calibrate_model_file writes the calibrator fitted on the successful runs", "[data]") {
  const test::TempDir dir;
  const std::string a4000 = test::cache_file("convolution_milo", "A4000").string();
  const std::string a6000 = test::cache_file("convolution_milo", "A6000").string();
  const std::string model = trained_model(dir, a4000);
  const std::string out = (dir.path() / "calibrated.gfm").string();
  CalibrationOptions o;
  o.alpha = 0.2;
  o.delta = 0.2;
  o.risk_alpha = 0.2;
  o.tolerance = 0.5;
  o.seed = 7;
  const std::vector<std::string> files{a6000};
  const ModelFileCalibration r = calibrate_model_file(model, files, out, o);

  // The same calibrator as fitting by hand on the same runs.
  const auto [cands, times] = successful_runs(Dataset::load(files).observations(true));
  const AnySurrogate surrogate = load_surrogate(model);
  const auto by_hand = SelectiveCalibrator::fit(cands, surrogate.predict(cands), times, o);
  CHECK(r.surrogate_kind == "ridge");
  CHECK(r.measurements == cands.size());
  CHECK(r.files == 1);
  CHECK(r.warnings.empty());
  CHECK(r.calibrator.describe() == by_hand.describe());
  CHECK(r.calibrator.deferral().threshold == by_hand.deferral().threshold);

  // The file holds it next to the surrogate; the input model is left as it was.
  const auto stored = calibration_from(read_model_file(out), out);
  REQUIRE(stored.has_value());
  CHECK(stored->describe() == by_hand.describe());
  CHECK_FALSE(calibration_from(read_model_file(model), model).has_value());
}

TEST_CASE("calibrate_model_file warns about a file the surrogate was trained on", "[data]") {
  const test::TempDir dir;
  const std::string a4000 = test::cache_file("convolution_milo", "A4000").string();
  const std::string model = trained_model(dir, a4000);
  // The same file by another spelling is still the same file.
  const std::string respelled = (std::filesystem::path(a4000).parent_path() / "." / "A4000.json.gz").string();
  const std::vector<std::string> files{respelled, test::cache_file("convolution_milo", "A6000").string()};
  const ModelFileCalibration r = calibrate_model_file(model, files, model);  // out may equal the model
  REQUIRE(r.warnings.size() == 1);
  CHECK_THAT(r.warnings[0], Contains(respelled) && Contains("was used to train the surrogate"));
  CHECK(r.files == 2);
  CHECK(calibration_from(read_model_file(model), model).has_value());
}

TEST_CASE("calibrate_model_file refuses data without a successful run and writes nothing", "[data]") {
  const test::TempDir dir;
  const std::string model = trained_model(dir, test::cache_file("convolution_milo", "A4000").string());
  // A Kernel Tuner cache whose every entry failed.
  const auto failed = (dir.path() / "failed.json").string();
  std::ofstream(failed) << R"({"device_name": "NVIDIA RTX A4000", "kernel_name": "convolution_kernel",
"problem_size": [4096, 4096], "tune_params_keys": ["block_size_x"], "tune_params": {"block_size_x": [16, 32]},
"objective": "time", "cache": {
"16": {"block_size_x": 16, "time": "RuntimeFailedConfig", "times": [], "compile_time": 1.0},
"32": {"block_size_x": 32, "time": "CompilationFailedConfig", "times": [], "compile_time": 1.0}}})";
  const auto out = (dir.path() / "out.gfm").string();
  const std::vector<std::string> files{failed};
  CHECK_THROWS_WITH(calibrate_model_file(model, files, out),
                    Contains("no successful measurements in the 1 calibration file(s)"));
  CHECK_FALSE(std::filesystem::exists(out));

  CalibrationOptions bad;
  bad.alpha = 1.5;
  const std::vector<std::string> good{test::cache_file("convolution_milo", "A6000").string()};
  CHECK_THROWS_AS(calibrate_model_file(model, good, out, bad), invalid_argument_error);
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK_THROWS_AS(calibrate_model_file((dir.path() / "missing.gfm").string(), good, out), model_file_error);
}
