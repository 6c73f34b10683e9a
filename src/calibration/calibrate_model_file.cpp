#include "calibration/calibrate_model_file.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>
#include <system_error>

#include "calibration/model_bundle.hpp"
#include "calibration/new_device_section.hpp"
#include "calibration/view_models.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "calibration/calibration_data.hpp"

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

void warn_if_trained_on(const TrainingSummary& trained, std::span<const std::string> data_files,
                        std::vector<std::string>& warnings) {
  for (const auto& d : data_files)
    if (std::any_of(trained.sources.begin(), trained.sources.end(), [&](const auto& s) { return same_file(s, d); }))
      warnings.push_back(fmt::format(
          "{} was used to train the surrogate; the guarantees assume calibration data the surrogate has not seen", d));
}

std::vector<std::size_t> device_sample_order(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

DeviceFile load_device_file(const std::string& data_file) {
  const std::vector<std::string> files{data_file};
  DeviceFile f{Dataset::load(files), {}};
  f.runs = successful_runs(f.data.observations(true));
  if (f.data.spaces().size() != 1)
    throw invalid_argument_error(fmt::format("{}: adapting to a device needs one device's measurements, the file holds {} spaces",
                                             data_file, f.data.spaces().size()));
  return f;
}

void scope_to_views(SelectiveCalibrator& calibrator, std::span<const ViewModel* const> views, ViewStacking stacking) {
  DeviceScope scope = *calibrator.device_scope();
  scope.view_devices.clear();
  for (const ViewModel* v : views) scope.view_devices.push_back(v->device);
  scope.stacking = std::move(stacking);
  calibrator.restrict_to_device(std::move(scope));
}

void judge_held_out(const SelectiveCalibrator& calibrator, const TimedCandidates& runs,
                    std::span<const Forecast> forecasts, std::span<const std::size_t> order, std::size_t samples,
                    ModelFileDeviceAdaptation& out) {
  const CalibrationOptions& used = calibrator.options();
  const auto ref = used.reference_ms > 0 ? std::optional<double>(used.reference_ms) : std::nullopt;
  for (std::size_t k = samples; k < order.size(); ++k) {
    const std::size_t i = order[k];
    const Decision d = calibrator.decide(runs.candidates[i], forecasts[i]);
    ++out.held_out;
    if (d.defer) continue;
    ++out.answered;
    out.losses += deferral_loss(used, d.forecast, runs.median_ms[i], ref) > 0.5;
  }
}

ModelFileCalibration calibrate_model_file(const std::string& model_path, std::span<const std::string> data_files,
                                          const std::string& out_path, const CalibrationOptions& options) {
  ModelFile file = read_model_file(model_path);
  refuse_if_adapted(file, model_path, "calibrate");
  const AnySurrogate surrogate = surrogate_from(file, model_path);
  const TrainingSummary trained = training_summary_from(file, model_path);
  ModelFileCalibration out;
  out.surrogate_kind = surrogate.kind();
  out.files = data_files.size();
  warn_if_trained_on(trained, data_files, out.warnings);

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

ModelFileDeviceAdaptation adapt_model_file(const std::string& model_path, const std::string& data_file,
                                           const std::string& out_path, std::size_t samples,
                                           const DeviceAdaptationOptions& options, bool use_views) {
  ModelFile file = read_model_file(model_path);
  refuse_if_adapted(file, model_path, "calibrate --device-samples");
  const AnySurrogate surrogate = surrogate_from(file, model_path);
  ModelFileDeviceAdaptation out;
  out.calibration.surrogate_kind = surrogate.kind();
  out.calibration.files = 1;
  const std::vector<std::string> files{data_file};
  warn_if_trained_on(training_summary_from(file, model_path), files, out.calibration.warnings);

  const DeviceFile d = load_device_file(data_file);
  out.device = d.device() ? d.device()->name : std::string();
  const auto& cands = d.runs.candidates;
  if (cands.size() < samples)
    throw invalid_argument_error(fmt::format("{}: {} successful runs, fewer than the {} asked for", data_file,
                                             cands.size(), samples));
  const std::vector<std::size_t> order = device_sample_order(cands.size(), options.calibration.seed);
  // Views when the model file has them for the device's kernel and vendor; single forecasts else.
  const auto views = use_views ? views_from(file, model_path) : std::nullopt;
  const std::vector<const ViewModel*> device_views =
      views && d.device() ? views->of(cands.front().kernel, d.device()->vendor, out.device)
                          : std::vector<const ViewModel*>{};
  std::vector<Forecast> forecasts;
  if (device_views.empty()) {
    forecasts = surrogate.predict(cands);
    const auto k = drawn_runs(d.runs, forecasts, order, samples);
    out.calibration.calibrator = adapt_to_device(out.device, k.candidates, k.forecasts, k.times, options);
  } else {
    const std::vector<ViewForecasts> space_views = forecast_views(device_views, cands);
    const auto k = drawn_runs(d.runs, space_views, order, samples);
    StackedDeviceAdaptation adapted = adapt_to_device(out.device, k.candidates, k.forecasts, k.times, options);
    forecasts = adapted.stacking.apply(space_views);
    scope_to_views(adapted.calibrator, device_views, std::move(adapted.stacking));
    out.calibration.calibrator = std::move(adapted.calibrator);
  }
  out.calibration.measurements = samples;
  const SelectiveCalibrator& cal = out.calibration.calibrator;
  judge_held_out(cal, d.runs, forecasts, order, samples, out);
  set_calibration_section(file, cal);
  write_model_file(out_path, file);
  return out;
}

}  // namespace gpuforecast
