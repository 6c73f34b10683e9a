// load(), Model.forecast(), train() and calibrate(): the application-facing API of forecast.hpp.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

#include "bindings.hpp"
#include "convert.hpp"
#include "calibration/calibrate_model_file.hpp"
#include "calibration/deferral.hpp"
#include "calibration/mondrian_conformal.hpp"
#include "calibration/nonconformity.hpp"
#include "api/new_device_file.hpp"
#include "calibration/rehearsal_file.hpp"
#include "gpuforecast/stats/screening.hpp"
#include "calibration/selective_calibrator.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/forecast.hpp"
#include "gpuforecast/surrogate/model_file.hpp"
#include "gpuforecast/surrogate/registry.hpp"

namespace gpuforecast::python {

namespace {

// Decisions for every candidate: forecast()'s own path, which checks each against the model (and
// the space when given); a reference runtime adds the eight speedup-bin probabilities.
std::vector<Decision> decide_all(const Model& model, std::span<const Candidate> c, std::optional<double> reference_ms,
                                 const TuningSpace* space) {
  return model.decide(c, space, reference_ms);
}

nb::dict to_arrays(const std::vector<Decision>& d, bool with_bins) {
  const std::size_t n = d.size();
  std::vector<double> median(n), lower(n), upper(n), low(n), high(n), p_fail(n), confidence(n), spread(n);
  std::vector<std::uint8_t> defer(n);
  nb::list extrapolation;
  std::vector<double> bins(with_bins ? n * speedup_bin_count : 0, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& x = d[i];
    median[i] = x.forecast.median_ms;
    lower[i] = x.forecast.lower_ms;
    upper[i] = x.forecast.upper_ms;
    low[i] = x.interval_low_ms;
    high[i] = x.interval_high_ms;
    p_fail[i] = x.forecast.p_fail;
    confidence[i] = x.confidence;
    spread[i] = x.forecast.spread;
    defer[i] = x.defer ? 1 : 0;
    extrapolation.append(nb::str(x.extrapolation.c_str(), x.extrapolation.size()));
    if (with_bins && x.forecast.bin_probabilities)
      for (int b = 0; b < speedup_bin_count; ++b) bins[i * speedup_bin_count + b] = (*x.forecast.bin_probabilities)[b];
  }
  nb::dict out;
  out["median_ms"] = owned(std::move(median), {n});
  out["lower_ms"] = owned(std::move(lower), {n});
  out["upper_ms"] = owned(std::move(upper), {n});
  out["interval_low_ms"] = owned(std::move(low), {n});
  out["interval_high_ms"] = owned(std::move(high), {n});
  out["p_fail"] = owned(std::move(p_fail), {n});
  out["confidence"] = owned(std::move(confidence), {n});
  out["spread"] = owned(std::move(spread), {n});
  out["defer"] = bool_array(std::move(defer));
  out["extrapolation"] = extrapolation;
  if (with_bins) out["bin_probabilities"] = owned(std::move(bins), {n, static_cast<std::size_t>(speedup_bin_count)});
  return out;
}

nb::dict info_dict(const Model& m) {
  const ModelInfo& i = m.info();
  nb::dict d;
  d["path"] = i.path;
  d["surrogate_kind"] = i.surrogate_kind;
  d["calibrated"] = i.calibrated;
  d["alpha"] = i.alpha;
  d["risk_alpha"] = i.risk_alpha;
  d["delta"] = i.delta;
  d["acceptance_rate"] = i.acceptance_rate;
  d["kernels"] = i.kernels;
  d["devices"] = i.devices;
  d["training_observations"] = i.training_observations;
  d["calibration"] = i.calibration;
  nb::dict parameters;  // kernel -> {parameter: values seen in training}
  for (const auto& k : i.parameters) {
    nb::dict ps;
    for (const auto& p : k.parameters) {
      nb::list values;
      for (const auto& v : p.values) values.append(from_value(v));
      ps[nb::str(p.name.c_str(), p.name.size())] = values;
    }
    parameters[nb::str(k.kernel.c_str(), k.kernel.size())] = ps;
  }
  d["parameters"] = parameters;
  return d;
}

std::string train_file(const std::vector<std::string>& files, const std::string& out, const std::string& surrogate,
                       std::uint64_t seed) {
  auto model = make_surrogate(surrogate, seed);  // unknown names fail before reading data
  const Dataset data = Dataset::load(files);
  const auto observations = data.observations(false);
  if (observations.empty()) throw invalid_argument_error("train: the files hold no measurements");
  model.fit(observations);
  save_surrogate(out, model, TrainingSummary::of(observations));
  return model.kind();
}

// gpuforecast.calibrate(): the options by name, as the command line takes them; returns the
// warnings for Python to raise.
std::vector<std::string> calibrate_file(const std::string& model_path, const std::vector<std::string>& files,
                                        const std::string& out, double alpha, double delta,
                                        std::optional<double> risk_alpha, const std::string& method,
                                        const std::string& group_by, const std::string& loss, double tolerance,
                                        const std::string& confidence, double deferral_fraction, std::uint64_t seed,
                                        std::size_t device_samples, double adapt_fraction, bool use_views) {
  CalibrationOptions o;
  o.alpha = alpha;
  o.risk_alpha = risk_alpha.value_or(alpha);
  o.delta = delta;
  o.score = parse_conformal_score(method);
  o.group_by = parse_group_by(group_by);
  o.loss = parse_deferral_loss(loss);
  o.tolerance = tolerance;
  o.confidence = parse_confidence_score(confidence);
  o.deferral_fraction = deferral_fraction;
  o.seed = seed;
  if (device_samples == 0) return calibrate_model_file(model_path, files, out, o).warnings;
  if (files.size() != 1)
    throw invalid_argument_error(
        fmt::format("calibrate with device_samples takes one file (one device), got {}", files.size()));
  DeviceAdaptationOptions d;
  d.calibration = o;
  d.adapt_fraction = adapt_fraction;
  return adapt_model_file(model_path, files.front(), out, device_samples, d, use_views).calibration.warnings;
}

}  // namespace

void bind_model(nb::module_& m) {
  nb::class_<Model>(m, "Model", "A trained (and possibly calibrated) model file in memory; immutable, thread-safe.")
      .def_prop_ro("info", &info_dict, "What the model is: surrogate kind, calibration, kernels and devices trained on.")
      .def(
          "_forecast",
          [](const Model& model, const std::string& kernel, const std::string& device,
             const std::vector<std::int64_t>& problem_size, const std::vector<std::string>& names, nb::handle columns,
             std::optional<double> reference_ms, const TuningSpace* space, std::size_t rows) {
            const Candidate proto = prototype(kernel, device, problem_size);
            const auto cands = candidates_from(proto, names, columns, rows);
            std::vector<Decision> decisions;
            {
              nb::gil_scoped_release release;
              decisions = decide_all(model, cands, reference_ms, space);
            }
            return to_arrays(decisions, reference_ms.has_value());
          },
          nb::arg("kernel"), nb::arg("device"), nb::arg("problem_size"), nb::arg("names"), nb::arg("columns"),
          nb::arg("reference_ms").none() = nb::none(), nb::arg("space").none() = nb::none(), nb::arg("rows") = 0)
      .def(
          "_time_forecast_in_cpp",
          [](const Model& model, const std::string& kernel, const std::string& device,
             const std::vector<std::int64_t>& problem_size, const std::vector<std::string>& names, nb::handle columns,
             int repeats) {
            // Seconds per batch of forecast() on candidates already built in C++: the reference
            // the Python call is compared with (benchmarks/python_forecast_speed.py).
            const Candidate proto = prototype(kernel, device, problem_size);
            const auto cands = candidates_from(proto, names, columns);
            nb::gil_scoped_release release;
            std::vector<double> seconds;
            for (int r = 0; r < repeats; ++r) {
              const auto t0 = std::chrono::steady_clock::now();
              auto d = forecast(model, cands);
              seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
              if (d.size() != cands.size()) throw error("forecast returned a wrong count");
            }
            return seconds;
          },
          nb::arg("kernel"), nb::arg("device"), nb::arg("problem_size"), nb::arg("names"), nb::arg("columns"),
          nb::arg("repeats"));

  m.def(
      "_load",
      [](const std::string& path) {
        nb::gil_scoped_release release;
        return load(path);
      },
      nb::arg("path"));
  m.def(
      "_train",
      [](const std::vector<std::string>& files, const std::string& out, const std::string& surrogate, std::uint64_t seed) {
        nb::gil_scoped_release release;
        return train_file(files, out, surrogate, seed);
      },
      nb::arg("files"), nb::arg("out"), nb::arg("surrogate"), nb::arg("seed"));
  m.def(
      "_calibrate",
      [](const std::string& model_path, const std::vector<std::string>& files, const std::string& out, double alpha,
         double delta, std::optional<double> risk_alpha, const std::string& method, const std::string& group_by,
         const std::string& loss, double tolerance, const std::string& confidence, double deferral_fraction,
         std::uint64_t seed, std::size_t device_samples, double adapt_fraction, bool use_views) {
        nb::gil_scoped_release release;
        return calibrate_file(model_path, files, out, alpha, delta, risk_alpha, method, group_by, loss, tolerance,
                              confidence, deferral_fraction, seed, device_samples, adapt_fraction, use_views);
      },
      nb::arg("model"), nb::arg("files"), nb::arg("out"), nb::arg("alpha"), nb::arg("delta"),
      nb::arg("risk_alpha").none(), nb::arg("method"), nb::arg("group_by"), nb::arg("loss"), nb::arg("tolerance"),
      nb::arg("confidence"), nb::arg("deferral_fraction"), nb::arg("seed"), nb::arg("device_samples"),
      nb::arg("adapt_fraction"), nb::arg("views"));
  m.def(
      "_rehearse",
      [](const std::string& model_path, const std::vector<std::string>& files, const std::string& out,
         const std::string& surrogate, std::uint64_t seed, std::size_t max_configurations) {
        nb::gil_scoped_release release;
        RehearsalFitOptions o;
        o.surrogate = surrogate;
        o.seed = seed;
        o.max_configurations = max_configurations;
        (void)rehearse_model_file(model_path, files, out, o);
      },
      nb::arg("model"), nb::arg("files"), nb::arg("out"), nb::arg("surrogate"), nb::arg("seed"),
      nb::arg("max_configurations"));
  m.def(
      "_for_new_device",
      [](const Model& model, const std::vector<std::string>& files, const std::string& ratio_surrogate,
         std::uint64_t seed) {
        nb::gil_scoped_release release;
        const Dataset data = Dataset::load(files);
        return for_new_device(model, data.observations(), {ratio_surrogate, seed});
      },
      nb::arg("model"), nb::arg("files"), nb::arg("ratio_surrogate"), nb::arg("seed"));
  m.def(
      "_write_new_device_model",
      [](const std::string& model_path, const std::vector<std::string>& files, const std::string& out,
         const std::string& ratio_surrogate, std::uint64_t seed) {
        nb::gil_scoped_release release;
        return write_new_device_model(model_path, files, out, {ratio_surrogate, seed});
      },
      nb::arg("model"), nb::arg("files"), nb::arg("out"), nb::arg("ratio_surrogate"), nb::arg("seed"));
  m.def(
      "_screen",
      [](const std::vector<double>& calibration_forecast_ms, const std::vector<double>& calibration_measured_ms,
         const std::vector<double>& forecast_ms, double incumbent_ms, double alpha, double delta, double tolerance) {
        const ScreeningRule rule = certify_screening(calibration_forecast_ms, calibration_measured_ms, incumbent_ms,
                                                     ScreeningOptions{alpha, delta, tolerance});
        std::vector<std::uint8_t> skip(forecast_ms.size());
        for (std::size_t i = 0; i < forecast_ms.size(); ++i) {
          const double f = forecast_ms[i];
          // A forecast that is no time (a model that cannot forecast the row) is measured.
          skip[i] = std::isfinite(f) && f > 0 && rule.skip(f, incumbent_ms) ? 1 : 0;
        }
        nb::dict out;
        out["skip"] = bool_array(std::move(skip));
        out["certified"] = rule.certified;
        out["margin"] = rule.margin;
        out["improvements"] = rule.improvements;
        out["misses"] = rule.misses;
        out["risk_upper_bound"] = rule.risk_upper_bound;
        out["reason"] = rule.reason;
        return out;
      },
      nb::arg("calibration_forecast_ms"), nb::arg("calibration_measured_ms"), nb::arg("forecast_ms"),
      nb::arg("incumbent_ms"), nb::arg("alpha"), nb::arg("delta"), nb::arg("tolerance"));
  m.def("_dict_columns", &dict_rows_to_columns, nb::arg("rows"), nb::arg("keys"),
        "Columns of a list of dicts that all hold exactly `keys` (None if any does not).");
  m.def("surrogate_names", &surrogate_names, "Surrogate kinds train() accepts in this build (besides \"default\").");
}

}  // namespace gpuforecast::python
