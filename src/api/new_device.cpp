// for_new_device(): a Model of a GPU it was not trained on, through its views stacked by
// measurements of that GPU and corrected by a ratio model.
#include "gpuforecast/forecast.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/new_device_file.hpp"
#include "calibration/model_bundle.hpp"
#include "compose/model_impl.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/surrogate/registry.hpp"

namespace gpuforecast {

namespace {

// The one kernel and device of the measurements (invalid_argument_error naming the first row of
// another).
std::pair<std::string, std::shared_ptr<const Device>> kernel_and_device(std::span<const Observation> measurements) {
  if (measurements.empty()) throw invalid_argument_error("for_new_device: no measurements of the new device");
  const Candidate& first = measurements.front().candidate;
  if (!first.device) throw invalid_argument_error("for_new_device: measurement 0 names no device");
  for (std::size_t i = 1; i < measurements.size(); ++i) {
    const Candidate& c = measurements[i].candidate;
    if (c.kernel != first.kernel || !c.device || c.device->name != first.device->name)
      throw invalid_argument_error(fmt::format(
          "for_new_device: measurement {} is of {} on {}, measurement 0 of {} on {}: one kernel on one device", i,
          c.kernel, c.device ? c.device->name : "no device", first.kernel, first.device->name));
  }
  return {first.kernel, first.device};
}

std::string views_held(const ViewModels& views) {
  std::vector<std::string> held;
  for (const auto& v : views.models) held.push_back(fmt::format("{} ({}: {})", v.device, v.vendor, fmt::join(v.kernels, ", ")));
  return held.empty() ? "none" : fmt::format("{}", fmt::join(held, "; "));
}

}  // namespace

Model for_new_device(const Model& model, std::span<const Observation> measurements, const NewDeviceOptions& options) {
  const Model::Impl& base = model.impl();
  const auto [kernel, device] = kernel_and_device(measurements);
  std::vector<Candidate> candidates;
  for (const auto& o : measurements) candidates.push_back(o.candidate);
  (void)check_candidates(base, candidates);
  if (!base.views)
    throw invalid_argument_error(fmt::format(
        "for_new_device: {} holds no views (one model per training GPU): gpuforecast calibrate --rehearse stores them",
        base.info.path));

  auto impl = std::make_shared<Model::Impl>(base);
  impl->calibrator.reset();  // it judged the model's own forecasts, not the stacked views'
  impl->new_device.reset();  // one new device a Model; an earlier one's views were the copied model's
  const std::vector<const ViewModel*> views = impl->views->of(kernel, device->vendor, device->name);
  if (views.empty())
    throw invalid_argument_error(fmt::format(
        "for_new_device: {} has no view of {} on another {} GPU to stack for {} (its views: {})", base.info.path, kernel,
        device->vendor.empty() ? "known" : device->vendor, device->name, views_held(*impl->views)));
  auto forecaster = std::make_shared<StackedViewsSurrogate>(views, make_surrogate(options.ratio_surrogate, options.seed));
  forecaster->fit(measurements);

  impl->new_device = NewDeviceForecaster{kernel, device->name, measurements.size(), std::move(forecaster)};
  // Not the model's file any more: calibrating "it" would calibrate the model it came from.
  impl->info.path = fmt::format("{} for {} (in memory)", base.info.path, device->name);
  describe_new_device(*impl);
  return Model(std::move(impl));
}

Model write_new_device_model(const std::string& model_path, std::span<const std::string> data_files,
                             const std::string& out_path, const NewDeviceOptions& options) {
  ModelFile file = read_model_file(model_path);
  const Dataset data = Dataset::load(data_files);
  const Model adapted = for_new_device(load(model_path), data.observations(), options);
  remove_calibration_section(file);
  set_new_device_section(file, *adapted.impl().new_device);
  write_model_file(out_path, file);
  return load(out_path);
}

}  // namespace gpuforecast
