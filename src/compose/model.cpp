// A Model: a surrogate, its calibration and what it was trained on, loaded from a model file or
// made from parts; Model::decide is forecast()'s one path.
#include "compose/model_impl.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "calibration/model_bundle.hpp"
#include "compose/complete_forecasts.hpp"
#include "core/parameter_check.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/surrogate/model_file.hpp"

namespace gpuforecast {

const Model::Impl& Model::impl() const {
  if (!m_impl) throw invalid_argument_error("empty gpuforecast::Model: load one with gpuforecast::load(path)");
  return *m_impl;
}

const ModelInfo& Model::info() const { return impl().info; }

namespace {
ModelInfo describe(const AnySurrogate& s, const std::optional<SelectiveCalibrator>& c, std::string path) {
  ModelInfo info;
  info.path = std::move(path);
  info.surrogate_kind = s.kind();
  info.calibrated = c.has_value();
  if (c) {
    info.alpha = c->options().alpha;
    info.risk_alpha = c->options().risk_alpha;
    info.delta = c->options().delta;
    info.acceptance_rate = c->deferral().coverage;
    info.calibration = c->describe();
  } else {
    info.calibration = "not calibrated: every decision defers (run gpuforecast calibrate)";
  }
  return info;
}

// `new_device`'s forecaster may point into `views`: moving a vector keeps its elements in place.
Model build(AnySurrogate surrogate, std::optional<SelectiveCalibrator> calibrator, std::string path,
            const TrainingSummary& trained, std::optional<ViewModels> views = std::nullopt,
            std::optional<NewDeviceForecaster> new_device = std::nullopt) {
  if (surrogate.empty()) throw invalid_argument_error("a model needs a surrogate");
  auto impl = std::make_shared<Model::Impl>();
  impl->info = describe(surrogate, calibrator, std::move(path));
  impl->info.kernels = trained.kernels;
  impl->info.devices = trained.devices;
  impl->info.training_observations = trained.observations;
  impl->info.parameters = trained.schemas;
  impl->surrogate = std::move(surrogate);
  impl->calibrator = std::move(calibrator);
  impl->views = std::move(views);
  impl->new_device = std::move(new_device);
  if (impl->new_device) describe_new_device(*impl);
  return Model(std::move(impl));
}
}  // namespace

void describe_new_device(Model::Impl& m) {
  const NewDeviceForecaster& n = *m.new_device;
  m.info.calibrated = false;
  m.info.acceptance_rate = 0;
  m.info.calibration = fmt::format(
      "{} on {}: {} stacked by {} measurements of it; not calibrated (every decision defers; calibrate_pairs for "
      "compare())",
      n.kernel, n.device, n.forecaster->kind(), n.measurements);
}

Model make_model(AnySurrogate surrogate, std::optional<SelectiveCalibrator> calibrator, std::string path) {
  return build(std::move(surrogate), std::move(calibrator), std::move(path), {});
}

Model make_model(AnySurrogate surrogate, std::optional<SelectiveCalibrator> calibrator, ViewModels views,
                 std::string path) {
  return build(std::move(surrogate), std::move(calibrator), std::move(path), {}, std::move(views));
}

Model load(const std::string& path) {
  const ModelFile file = read_model_file(path);
  AnySurrogate s = surrogate_from(file, path);
  auto c = calibration_from(file, path);
  auto views = views_from(file, path);
  auto new_device = new_device_from(file, path, views ? &*views : nullptr);
  if (new_device && c)
    throw model_file_error(path, fmt::format("it forecasts {} through stacked views and holds a calibration of the "
                                             "model's own forecasts as well; adapt the model again",
                                             new_device->device));
  if (c && c->device_scope())
    for (const auto& device : c->device_scope()->view_devices)
      if (!views || !views->find(device))
        throw model_file_error(path, fmt::format("its calibration for {} stacks the view of {}, which its \"views\" "
                                                 "section does not hold: calibrate --cross-device again",
                                                 c->device_scope()->device, device));
  return build(std::move(s), std::move(c), path, training_summary_from(file, path), std::move(views),
               std::move(new_device));
}

std::vector<std::string> check_candidates(const Model::Impl& m, std::span<const Candidate> candidates,
                                          const TuningSpace* space) {
  const auto& kernels = m.info.kernels;
  const auto& schemas = m.info.parameters;
  std::vector<std::string> notes(candidates.size());
  detail::NameMatch match;
  const KernelSchema* schema = nullptr;
  const std::string* kernel = nullptr;  // the kernel `schema` was looked up for
  for (std::size_t row = 0; row < candidates.size(); ++row) {
    const Candidate& c = candidates[row];
    if (!kernel || *kernel != c.kernel) {
      kernel = &c.kernel;
      const auto it = std::find_if(schemas.begin(), schemas.end(), [&](const KernelSchema& k) { return k.kernel == c.kernel; });
      schema = it == schemas.end() ? nullptr : &*it;
    }
    if (space) check_configuration(*space, c.config, row);
    if (schema) {
      notes[row] = detail::check_configuration(*schema, c.config, row, match);
    } else if (!kernels.empty() && std::find(kernels.begin(), kernels.end(), c.kernel) == kernels.end()) {
      std::string trained;
      for (const auto& k : kernels) trained += (trained.empty() ? "" : ", ") + k;
      notes[row] = fmt::format("kernel \"{}\" never seen in training (trained on {})", c.kernel, trained);
    }
  }
  return notes;
}

namespace {
// The surrogate's forecasts, one per candidate (anything else is a surrogate's bug).
std::vector<Forecast> surrogate_forecasts(const Model::Impl& m, std::span<const Candidate> candidates) {
  std::vector<Forecast> f = m.surrogate.predict(candidates);
  if (f.size() != candidates.size())
    throw error(fmt::format("surrogate {} returned {} forecasts for {} candidate{}", m.surrogate.kind(), f.size(),
                            candidates.size(), candidates.size() == 1 ? "" : "s"));
  return f;
}

// The scoped device's candidates forecast by each view model and stacked, as the calibration was.
std::vector<Forecast> stacked_views(const Model::Impl& m, const DeviceScope& scope, std::span<const Candidate> on_device) {
  std::vector<const ViewModel*> views;
  for (const auto& device : scope.view_devices) {
    const ViewModel* v = m.views ? m.views->find(device) : nullptr;
    if (!v)  // load() refuses such a file; a model made from parts may still lack them
      throw invalid_argument_error(fmt::format("the calibration for {} stacks the view of {}, which the model lacks",
                                               scope.device, device));
    views.push_back(v);
  }
  return scope.stacking.apply(forecast_views(views, on_device));
}

// The candidates `owns` picks, forecast by `forecaster`; the others left empty.
template <class Owns, class Forecaster>
std::vector<std::optional<Forecast>> forecasts_of_some(std::span<const Candidate> candidates, Owns owns,
                                                       Forecaster forecaster) {
  std::vector<std::size_t> rows;
  std::vector<Candidate> picked;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (owns(candidates[i])) {
      rows.push_back(i);
      picked.push_back(candidates[i]);
    }
  std::vector<std::optional<Forecast>> out(candidates.size());
  if (picked.empty()) return out;
  auto f = forecaster(std::span<const Candidate>(picked));
  for (std::size_t j = 0; j < rows.size(); ++j) out[rows[j]] = std::move(f[j]);
  return out;
}

bool on_device(const Candidate& c, const std::string& device) { return c.device && c.device->name == device; }
}  // namespace

std::vector<Forecast> predict_all(const Model::Impl& m, std::span<const Candidate> candidates) {
  const auto* scope = m.calibrator && m.calibrator->device_scope() ? &*m.calibrator->device_scope() : nullptr;
  if (m.new_device) {
    // A new device's candidates are forecast by its stacked views alone, the rest as the model would.
    const auto& n = *m.new_device;
    return detail::compose::complete_forecasts(
        candidates,
        forecasts_of_some(
            candidates, [&](const Candidate& c) { return c.kernel == n.kernel && on_device(c, n.device); },
            [&](std::span<const Candidate> c) { return n.forecaster->predict(c); }),
        [&](std::span<const Candidate> rest) { return surrogate_forecasts(m, rest); });
  }
  if (!scope || scope->view_devices.empty()) return surrogate_forecasts(m, candidates);
  // The scoped device's candidates are forecast by its views alone: the surrogate is asked only
  // for the others (with k-NN views, forecasting every configuration twice doubled the time).
  return detail::compose::complete_forecasts(
      candidates,
      forecasts_of_some(
          candidates, [&](const Candidate& c) { return on_device(c, scope->device); },
          [&](std::span<const Candidate> c) { return stacked_views(m, *scope, c); }),
      [&](std::span<const Candidate> rest) { return surrogate_forecasts(m, rest); });
}

std::vector<Decision> Model::decide(std::span<const Candidate> candidates, const TuningSpace* space,
                                   std::optional<double> reference_ms) const {
  if (reference_ms && !(std::isfinite(*reference_ms) && *reference_ms > 0))
    throw invalid_argument_error(fmt::format("reference_ms must be a positive runtime, got {}", *reference_ms));
  const Impl& m = impl();
  std::vector<std::string> notes = check_candidates(m, candidates, space);
  const std::vector<Forecast> f = predict_all(m, candidates);
  std::vector<Decision> out = decide_all(m.calibrator ? &*m.calibrator : nullptr, candidates, f, reference_ms,
                                         "model is not calibrated (run gpuforecast calibrate): measure");
  for (std::size_t i = 0; i < out.size(); ++i) out[i].extrapolation = std::move(notes[i]);
  return out;
}

}  // namespace gpuforecast
