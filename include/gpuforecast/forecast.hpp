#pragma once
// One call, no GPU: a calibrated, selective forecast of a candidate's runtime.
//
//   auto model = gpuforecast::load("model.gfm");
//   gpuforecast::Decision d = gpuforecast::forecast(model, candidate);
//   if (d.defer) measure(candidate); else use(d.forecast.median_ms);
//
// A Model is immutable and cheap to copy (shared); forecast() may be called from any number
// of threads at once on the same Model.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/concepts.hpp"
#include "gpuforecast/core/forecast.hpp"
#include "gpuforecast/core/observation.hpp"
#include "gpuforecast/core/parameter_schema.hpp"
#include "gpuforecast/space/tuning_space.hpp"
#include "gpuforecast/export.hpp"

namespace gpuforecast GPUFORECAST_API {

struct ModelInfo {
  std::string path;
  std::string surrogate_kind;   // "ridge", "knn", "xgboost", "transformer", ...
  bool calibrated = false;      // false: every decision defers (run `gpuforecast calibrate`)
  double alpha = 0;             // intervals cover with probability >= 1 - alpha
  double risk_alpha = 0;        // accepted forecasts: risk <= risk_alpha ...
  double delta = 0;             // ... with probability >= 1 - delta
  double acceptance_rate = 0;   // fraction of the calibration set accepted
  std::vector<std::string> kernels;  // what the surrogate was trained on
  std::vector<std::string> devices;
  std::uint64_t training_observations = 0;
  std::string calibration;      // one-line description of the calibration
  std::vector<KernelSchema> parameters;  // each kernel's parameters and the values trained on
};

class Model {
 public:
  Model() = default;  // empty: forecast() throws
  [[nodiscard]] bool empty() const noexcept { return !m_impl; }
  [[nodiscard]] const ModelInfo& info() const;

  // A Model is a SelectivePredictor (core/concepts.hpp), so a search or a caller's loop takes it
  // as it takes any: the decision on each candidate, checked as forecast() checks it. With
  // `space`, each configuration must also lie in it; with `reference_ms`, each decision carries
  // the speedup-bin probabilities against that measured runtime (invalid_argument_error unless it is
  // finite and positive).
  [[nodiscard]] std::vector<Decision> decide(std::span<const Candidate> candidates, const TuningSpace* space = nullptr,
                                             std::optional<double> reference_ms = std::nullopt) const;

  struct Impl;  // surrogate + calibrator (src/api)
  explicit Model(std::shared_ptr<const Impl> impl) : m_impl(std::move(impl)) {}
  [[nodiscard]] const Impl& impl() const;

 private:
  std::shared_ptr<const Impl> m_impl;
};

static_assert(SelectivePredictor<Model>);

// Reads a model file written by `gpuforecast train` (+ `gpuforecast calibrate`). Throws
// model_file_error for a missing, truncated, corrupted or newer-version file.
[[nodiscard]] Model load(const std::string& path);

// A Model of a GPU it was not trained on, from some measurements of that GPU:
//
//   auto others = gpuforecast::load("others.gfm");  // with views: gpuforecast calibrate --rehearse
//   auto a4000 = gpuforecast::for_new_device(others, a_tenth_of_a4000);
//   auto rule = gpuforecast::calibrate_pairs(a4000, more_of_a4000, {.kind = gpuforecast::PairKind::child});
//   for (const auto& c : gpuforecast::compare(a4000, rule, parent, parent_ms, children)) ...
//
// A new GPU is mostly like one or two of the GPUs a model was trained on. Its forecasts are the
// model's views (one model per training GPU of the kernel and the new GPU's vendor, each fitted on
// that GPU alone) stacked by the measurements, log t = b + sum_v w_v log t_v with w_v >= 0, times
// a surrogate fitted on the same measurements to what the stacking misses (measured / stacked):
// the forecaster behind the child pairs of docs/pairs.md (benchmarks/pairs --views).
struct NewDeviceOptions {
  std::string ratio_surrogate = "default";  // the registry's kind fitted to measured / stacked
  std::uint64_t seed = 0;
};

// The returned Model forecasts candidates of the measurements' kernel on their device as above,
// and every other candidate as `model` does (a new device `model` was adapted to before is not
// kept: one a Model). It is not calibrated (nothing checked its forecasts:
// forecast() defers every candidate); calibrate_pairs() on other measurements of the new GPU gives
// compare() its rule. Throws invalid_configuration_error for a measurement the model's check
// refuses (naming its row), and invalid_argument_error for measurements of more than one kernel
// or device, a model without views of the kernel on another GPU of the device's vendor (naming
// the views it has), fewer than 3 successful measurements, or an unknown ratio_surrogate.
[[nodiscard]] Model for_new_device(const Model& model, std::span<const Observation> measurements,
                                   const NewDeviceOptions& options = {});

// Point forecast, calibrated interval, confidence and defer/accept with its reason.
//
// Every call first checks each candidate against what the model knows of its kernel's
// parameters (ModelInfo::parameters, core/parameter_schema.hpp): a missing, unknown or
// misspelt parameter, a value of the wrong type, NaN, or a negative value where training saw
// none throws invalid_configuration_error naming the row and the parameter. A value or kernel
// never seen in training is forecast and named in Decision::extrapolation.
[[nodiscard]] Decision forecast(const Model& model, const Candidate& candidate);
// The same plus the eight speedup-bin probabilities against a reference of measured runtime
// (invalid_argument_error unless it is finite and positive).
[[nodiscard]] Decision forecast(const Model& model, const Candidate& candidate, double reference_ms);
// Many candidates in one batch (faster than one by one).
[[nodiscard]] std::vector<Decision> forecast(const Model& model, std::span<const Candidate> candidates);
// As above, and every configuration must also lie in `space`: each value in its parameter's
// list and every constraint holding (invalid_configuration_error otherwise).
[[nodiscard]] std::vector<Decision> forecast(const Model& model, std::span<const Candidate> candidates,
                                             const TuningSpace& space);

}  // namespace gpuforecast
