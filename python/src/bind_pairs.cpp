// Model.calibrate_pairs() and Model.compare(): the pairwise selective layer of compare.hpp.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "gpuforecast/compare.hpp"
#include "gpuforecast/data/dataset.hpp"

namespace gpuforecast::python {

namespace {

PairCalibration calibrate(const Model& model, const std::vector<std::string>& files, double alpha, double delta,
                           const std::string& kind, std::size_t pairs, const std::string& loss,
                           const std::string& confidence, std::uint64_t seed) {
  PairCalibrationOptions o;
  o.selective.alpha = alpha;
  o.selective.delta = delta;
  o.selective.loss = parse_pair_loss(loss);
  o.selective.confidence = parse_pair_confidence(confidence);
  o.kind = parse_pair_kind(kind);
  o.pairs = pairs;
  o.seed = seed;
  const Dataset data = Dataset::load(files);
  return calibrate_pairs(model, data.observations(), o);
}

nb::dict to_arrays(const std::vector<Comparison>& c) {
  const std::size_t n = c.size();
  std::vector<double> bins(n * speedup_bin_count), confidence(n);
  std::vector<std::int64_t> predicted(n), low(n), high(n);
  std::vector<std::uint8_t> faster(n), defer(n);
  nb::list extrapolation;
  for (std::size_t i = 0; i < n; ++i) {
    const PairDecision& d = c[i].decision;
    for (int b = 0; b < speedup_bin_count; ++b) bins[i * speedup_bin_count + b] = d.probabilities[b];
    confidence[i] = d.confidence;
    predicted[i] = d.predicted_bin;
    low[i] = d.set.low;
    high[i] = d.set.high;
    faster[i] = d.faster;
    defer[i] = d.defer;
    extrapolation.append(nb::str(c[i].extrapolation.c_str(), c[i].extrapolation.size()));
  }
  nb::dict out;
  out["bin_probabilities"] = owned(std::move(bins), {n, static_cast<std::size_t>(speedup_bin_count)});
  out["predicted_bin"] = owned(std::move(predicted), {n});
  out["set_low"] = owned(std::move(low), {n});
  out["set_high"] = owned(std::move(high), {n});
  out["faster"] = bool_array(std::move(faster));
  out["confidence"] = owned(std::move(confidence), {n});
  out["defer"] = bool_array(std::move(defer));
  out["extrapolation"] = extrapolation;
  return out;
}

}  // namespace

void bind_pairs(nb::module_& m) {
  nb::class_<PairCalibration>(m, "PairCalibration",
                              "Bin sets and the deferral rule of pairs, fitted by Model.calibrate_pairs().")
      .def_prop_ro("alpha", [](const PairCalibration& s) { return s.options().alpha; })
      .def_prop_ro("delta", [](const PairCalibration& s) { return s.options().delta; })
      .def_prop_ro("loss", [](const PairCalibration& s) { return std::string(to_string(s.options().loss)); })
      .def_prop_ro("confidence", [](const PairCalibration& s) { return std::string(to_string(s.options().confidence)); })
      .def_prop_ro(
          "kind", [](const PairCalibration& s) { return std::string(to_string(s.kind())); },
          "The pairs it was calibrated on: \"child\" answers compare(reference_ms=...), the others a forecast reference.")
      .def_prop_ro("threshold", &PairCalibration::threshold,
                   "Answer a pair without measuring iff its confidence >= this (+inf: defer every pair).")
      .def_prop_ro("calibration_pairs", &PairCalibration::calibration_pairs)
      .def_prop_ro("answered_fraction", &PairCalibration::answered_fraction,
                   "Fraction of the calibration pairs answered without measuring.")
      .def_prop_ro("risk_upper_bound", &PairCalibration::risk_upper_bound,
                   "1 - delta upper bound of the loss among answered calibration pairs.")
      .def("__repr__", [](const PairCalibration& s) {
        return "<gpuforecast.PairCalibration alpha=" + std::to_string(s.options().alpha) + " delta=" +
               std::to_string(s.options().delta) + " on " + std::to_string(s.calibration_pairs()) + " pairs>";
      });

  m.def(
      "_calibrate_pairs",
      [](const Model& model, const std::vector<std::string>& files, double alpha, double delta, const std::string& kind,
         std::size_t pairs, const std::string& loss, const std::string& confidence, std::uint64_t seed) {
        nb::gil_scoped_release release;
        return calibrate(model, files, alpha, delta, kind, pairs, loss, confidence, seed);
      },
      nb::arg("model"), nb::arg("files"), nb::arg("alpha"), nb::arg("delta"), nb::arg("kind"), nb::arg("pairs"),
      nb::arg("loss"), nb::arg("confidence"), nb::arg("seed"));
  m.def(
      "_compare",
      [](const Model& model, const PairCalibration& pairs, const std::string& kernel, const std::string& device,
         const std::vector<std::int64_t>& problem_size, const std::vector<std::string>& reference_names,
         nb::handle reference_columns, const std::vector<std::string>& names, nb::handle columns,
         const TuningSpace* space, std::size_t rows, std::optional<double> reference_ms) {
        const Candidate proto = prototype(kernel, device, problem_size);
        const auto reference = candidates_from(proto, reference_names, reference_columns, 1);
        const auto candidates = candidates_from(proto, names, columns, rows);
        std::vector<Comparison> out;
        {
          nb::gil_scoped_release release;
          out = reference_ms ? compare(model, pairs, reference.front(), *reference_ms, candidates, space)
                             : compare(model, pairs, reference.front(), candidates, space);
        }
        return to_arrays(out);
      },
      nb::arg("model"), nb::arg("pairs"), nb::arg("kernel"), nb::arg("device"), nb::arg("problem_size"),
      nb::arg("reference_names"), nb::arg("reference_columns"), nb::arg("names"), nb::arg("columns"),
      nb::arg("space").none(), nb::arg("rows"), nb::arg("reference_ms").none());
}

}  // namespace gpuforecast::python
