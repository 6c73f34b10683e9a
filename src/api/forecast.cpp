#include "gpuforecast/forecast.hpp"

#include <fmt/core.h>

#include "api/model_impl.hpp"
#include "gpuforecast/calibration/model_bundle.hpp"
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

Decision uncalibrated(const Forecast& f) {
  Decision d;
  d.forecast = f;
  d.interval_low_ms = f.lower_ms;
  d.interval_high_ms = f.upper_ms;
  d.confidence = 0;
  d.defer = true;
  d.reason = "model is not calibrated (run gpuforecast calibrate): measure";
  return d;
}
}  // namespace

namespace {
Model build(AnySurrogate surrogate, std::optional<SelectiveCalibrator> calibrator, std::string path,
            const TrainingSummary& trained) {
  if (surrogate.empty()) throw invalid_argument_error("a model needs a surrogate");
  auto impl = std::make_shared<Model::Impl>();
  impl->info = describe(surrogate, calibrator, std::move(path));
  impl->info.kernels = trained.kernels;
  impl->info.devices = trained.devices;
  impl->info.training_observations = trained.observations;
  impl->surrogate = std::move(surrogate);
  impl->calibrator = std::move(calibrator);
  return Model(std::move(impl));
}
}  // namespace

Model make_model(AnySurrogate surrogate, std::optional<SelectiveCalibrator> calibrator, std::string path) {
  return build(std::move(surrogate), std::move(calibrator), std::move(path), {});
}

Model load(const std::string& path) {
  const ModelFile file = read_model_file(path);
  AnySurrogate s = surrogate_from(file, path);
  auto c = calibration_from(file, path);
  return build(std::move(s), std::move(c), path, training_summary_from(file, path));
}

std::vector<Decision> forecast(const Model& model, std::span<const Candidate> candidates) {
  const auto& m = model.impl();
  const std::vector<Forecast> f = m.surrogate.predict(candidates);
  if (f.size() != candidates.size())
    throw error(fmt::format("surrogate {} returned {} forecasts for {} candidates", m.surrogate.kind(), f.size(),
                            candidates.size()));
  std::vector<Decision> out;
  out.reserve(f.size());
  for (std::size_t i = 0; i < f.size(); ++i)
    out.push_back(m.calibrator ? m.calibrator->decide(candidates[i], f[i]) : uncalibrated(f[i]));
  return out;
}

Decision forecast(const Model& model, const Candidate& candidate) {
  return forecast(model, std::span<const Candidate>(&candidate, 1)).front();
}

Decision forecast(const Model& model, const Candidate& candidate, double reference_ms) {
  const auto& m = model.impl();
  const std::vector<Forecast> f = m.surrogate.predict(std::span<const Candidate>(&candidate, 1));
  if (f.size() != 1) throw error(fmt::format("surrogate {} returned {} forecasts for 1 candidate", m.surrogate.kind(), f.size()));
  if (!m.calibrator) return uncalibrated(f[0]);
  return m.calibrator->decide(candidate, f[0], reference_ms);
}

}  // namespace gpuforecast
