// The surrogate-filtered search (make_strategy("surrogate")) measuring through a Python
// callable: the C++ search runs without the GIL and takes it back only to measure.
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/core.h>

#include <cmath>
#include <exception>

#include "bindings.hpp"
#include "convert.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/run/replay_space.hpp"
#include "gpuforecast/run/run.hpp"
#include "gpuforecast/search/trace.hpp"

namespace gpuforecast::python {

namespace {

// A Python exception raised while measuring (e.g. Kernel Tuner's StopCriterionReached),
// carried out of the C++ search and raised again once the search has unwound.
struct PendingPythonError {
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
};
struct python_raised : std::exception {
  const char* what() const noexcept override { return "a Python exception was raised while measuring"; }
};

// Benchmarker: calls measure(list of value tuples) -> list of (status, time_ms or None, cost_s).
// Holds the callable without a reference (the caller keeps it alive) so that copies and the
// destructor never touch Python objects without the GIL.
struct PythonBenchmarker {
  PyObject* measure_fn = nullptr;
  PendingPythonError* pending = nullptr;

  std::vector<Measurement> measure(std::span<const Candidate> candidates) {
    nb::gil_scoped_acquire gil;
    try {
      nb::list batch;
      for (const auto& c : candidates) {
        nb::list values;
        for (const auto& v : c.config.values()) values.append(from_value(v));
        batch.append(nb::tuple(values));
      }
      nb::object returned = nb::borrow(measure_fn)(batch);
      PyObject* as_list = PySequence_List(returned.ptr());
      if (!as_list) throw nb::python_error();
      nb::list results = nb::steal<nb::list>(as_list);
      if (results.size() != candidates.size())
        throw invalid_argument_error(fmt::format("measure returned {} results for {} configurations",
                                                 results.size(), candidates.size()));
      std::vector<Measurement> out;
      out.reserve(candidates.size());
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        nb::object item = results[i];
        PyObject* as_tuple = PySequence_Check(item.ptr()) ? PySequence_Tuple(item.ptr()) : nullptr;
        if (!as_tuple) PyErr_Clear();
        if (!as_tuple || PyTuple_GET_SIZE(as_tuple) != 3) {
          Py_XDECREF(as_tuple);
          throw invalid_argument_error(fmt::format("measure: result {} is not a (status, time_ms, cost_s) triple: {}", i,
                                                   repr_of(item)));
        }
        nb::tuple r = nb::steal<nb::tuple>(as_tuple);
        Measurement m;
        if (!PyUnicode_Check(r[0].ptr()))
          throw invalid_argument_error(fmt::format("measure: result {} has status {}, expected a str such as \"ok\"", i,
                                                   repr_of(r[0])));
        const std::string status = utf8(r[0], "status");
        m.status = parse_status(status);
        if (m.ok()) {
          const double t = r[1].is_none() ? std::nan("") : PyFloat_AsDouble(r[1].ptr());
          if (PyErr_Occurred()) throw nb::python_error();
          if (!(t > 0) || !std::isfinite(t))
            throw invalid_argument_error(fmt::format("measure: configuration [{}] has status ok but time {}",
                                                     candidates[i].config.to_string(), repr_of(r[1])));
          m.median_ms = m.ci_low_ms = m.ci_high_ms = t;
          m.samples_ms = {t};
        } else {
          m.reason = status;
        }
        m.cost_s = r[2].is_none() ? 0.0 : PyFloat_AsDouble(r[2].ptr());
        if (PyErr_Occurred()) throw nb::python_error();
        out.push_back(std::move(m));
      }
      return out;
    } catch (nb::python_error& e) {
      e.restore();
      PyErr_Fetch(&pending->type, &pending->value, &pending->traceback);
      throw python_raised();
    }
  }
};
static_assert(Benchmarker<PythonBenchmarker>);

nb::list trace_to_python(const Trace& trace) {
  nb::list out;
  for (const auto& e : trace.entries()) {
    nb::list values;
    for (const auto& v : e.config.values()) values.append(from_value(v));
    out.append(nb::make_tuple(nb::tuple(values), std::string(to_string(e.measurement.status)),
                              e.measurement.ok() ? nb::cast(e.measurement.median_ms) : nb::none()));
  }
  return out;
}

}  // namespace

void bind_search(nb::module_& m) {
  m.def(
      "_surrogate_search",
      [](const TuningSpace& space, const std::string& kernel, const std::string& device,
         const std::vector<std::int64_t>& problem_size, nb::object measure, std::size_t max_measurements,
         std::uint64_t seed, const std::string& model_path, const std::string& surrogate,
         const std::map<std::string, std::string>& options, const std::string& events) {
        // What the command line's replay runs, with the caller's measurements: one Plan, run().
        Plan plan;
        plan.strategy = "surrogate";
        plan.settings.model_path = model_path;
        plan.settings.surrogate = surrogate;
        plan.settings.options = options;
        plan.budget = max_measurements;
        plan.seeds = 1;
        plan.first_seed = seed;
        if (!events.empty()) plan.outputs.events_path = [events](std::size_t) { return events; };
        PendingPythonError pending;
        auto& caller = plan.backend.emplace<CallerBackend>();
        caller.space = space;
        caller.prototype = prototype(kernel, device, problem_size);
        caller.measure = [bench = PythonBenchmarker{measure.ptr(), &pending}](std::span<const Candidate> c) mutable {
          return bench.measure(c);
        };
        // Kernel Tuner ends a search at its budget by raising StopCriterionReached inside the
        // measurement: for the observers (the event log's "end" line) that is a normal end.
        caller.ends_search = [&pending](const std::exception_ptr&) {
          nb::gil_scoped_acquire gil;
          return pending.type && nb::cast<std::string>(nb::handle(pending.type).attr("__name__")) == "StopCriterionReached";
        };
        Result result;
        bool raised = false;
        {
          nb::gil_scoped_release release;
          try {
            result = gpuforecast::run(plan);
          } catch (const python_raised&) {
            raised = true;
          }
        }
        if (raised) {
          PyErr_Restore(pending.type, pending.value, pending.traceback);
          throw nb::python_error();
        }
        return trace_to_python(result.runs.front().trace);
      },
      nb::arg("space"), nb::arg("kernel"), nb::arg("device"), nb::arg("problem_size"), nb::arg("measure"),
      nb::arg("max_measurements"), nb::arg("seed"), nb::arg("model_path"), nb::arg("surrogate"), nb::arg("options"),
      nb::arg("events") = "",
      "Runs the surrogate-filtered search; `measure` is called with batches of value tuples; `events`: the path "
      "of its event log (JSON Lines), \"\" for none.");
  m.def(
      "_replay_search",
      [](const std::string& path, const std::string& strategy, std::uint64_t seed, std::size_t budget,
         const std::string& space, const std::string& sampling, const std::string& surrogate,
         const std::map<std::string, std::string>& options) {
        // What `gpuforecast search --replay PATH --space SPACE --sampling SAMPLING --strategy
        // STRATEGY --seeds 1 --first-seed SEED` runs: the reference the Kernel Tuner path is held to.
        Plan e;
        e.strategy = strategy;
        e.settings.surrogate = surrogate;
        e.settings.options = options;
        e.budget = budget;
        e.seeds = 1;
        e.first_seed = seed;
        e.replay().sampling = parse_replay_sampling(sampling);
        Result result;
        {
          nb::gil_scoped_release release;
          e.replay().data = std::make_shared<const SpaceData>(load_replay_space(path, {}, parse_replay_space(space)));
          result = gpuforecast::run(e);
        }
        nb::list out;
        for (const auto& entry : result.runs.front().trace.entries()) {
          nb::list values;
          for (const auto& v : entry.config.values()) values.append(from_value(v));
          out.append(nb::tuple(values));
        }
        return out;
      },
      nb::arg("path"), nb::arg("strategy"), nb::arg("seed"), nb::arg("budget"), nb::arg("space") = "cached",
      nb::arg("sampling") = "mean", nb::arg("surrogate") = "default",
      nb::arg("options") = std::map<std::string, std::string>{},
      "The configurations a replayed search measures, in order (value tuples in the file's parameter order).");
}

}  // namespace gpuforecast::python
