#include "gpuforecast/calibration/calibrate_model_file.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "gpuforecast/calibration/model_bundle.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/model_file.hpp"

namespace gpuforecast {

namespace {

// The training summary records paths as they were given; compare canonical paths so that
// "./a.json" and "/abs/a.json" are one file, and fall back to the text when either is unreadable.
bool same_file(const std::string& x, const std::string& y) {
  std::error_code ec1, ec2;
  const auto cx = std::filesystem::weakly_canonical(x, ec1), cy = std::filesystem::weakly_canonical(y, ec2);
  return ec1 || ec2 ? x == y : cx == cy;
}

}  // namespace

ModelFileCalibration calibrate_model_file(const std::string& model_path, std::span<const std::string> data_files,
                                          const std::string& out_path, const CalibrationOptions& options) {
  ModelFile file = read_model_file(model_path);
  const AnySurrogate surrogate = surrogate_from(file, model_path);
  const TrainingSummary trained = training_summary_from(file, model_path);
  ModelFileCalibration out;
  out.surrogate_kind = surrogate.kind();
  out.files = data_files.size();
  for (const auto& d : data_files)
    if (std::any_of(trained.sources.begin(), trained.sources.end(), [&](const auto& s) { return same_file(s, d); }))
      out.warnings.push_back(fmt::format(
          "{} was used to train the surrogate; the guarantees assume calibration data the surrogate has not seen", d));

  const Dataset data = Dataset::load(data_files);
  const auto [cands, times] = successful_runs(data.observations(true));
  if (cands.empty())
    throw invalid_argument_error(
        fmt::format("no successful measurements in the {} calibration file(s)", data_files.size()));
  const auto forecasts = surrogate.predict(cands);
  out.calibrator = SelectiveCalibrator::fit(cands, forecasts, times, options);
  out.measurements = cands.size();
  set_calibration_section(file, out.calibrator);
  write_model_file(out_path, file);
  return out;
}

}  // namespace gpuforecast
