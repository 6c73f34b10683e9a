// gpuforecast.run(Plan): a search on replayed data, or measuring through a Python callable (the
// Kernel Tuner strategy's path). The C++ search runs without the GIL and takes it back only to
// measure.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/core.h>

#include <cmath>
#include <exception>

#include "bindings.hpp"
#include "convert.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/run/search_target.hpp"
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

nb::dict run_to_python(const SeedRun& run) {
  nb::dict out;
  out["seed"] = run.seed;
  out["trace"] = trace_to_python(run.trace);
  out["curve"] = run.curve;
  out["seconds"] = run.strategy_seconds;
  return out;
}

}  // namespace

void bind_search(nb::module_& m) {
  m.def(
      "_run",
      [](const std::string& strategy, const std::string& model_path, const std::string& surrogate,
         const std::map<std::string, std::string>& options, std::size_t budget, double budget_seconds,
         std::size_t seeds, std::uint64_t first_seed, unsigned threads, const std::string& trace,
         const std::string& events, const std::string& cache, bool resume, const std::string& replay,
         const std::string& replay_space, const std::string& sampling, const std::string& t1, std::size_t workers,
         const TuningSpace* space, const std::string& kernel, const std::string& device,
         const std::vector<std::int64_t>& problem_size, nb::object measure, nb::object stops,
         std::optional<unsigned> watch_gpu) {
        // gpuforecast.run(Plan): the Plan of run/run.hpp, filled from the Python one.
        Plan plan;
        plan.strategy = strategy;
        plan.settings.model_path = model_path;
        plan.settings.surrogate = surrogate;
        plan.settings.options = options;
        plan.budget = budget;
        plan.budget_seconds = budget_seconds;
        plan.seeds = seeds;
        plan.first_seed = first_seed;
        plan.threads = threads;
        plan.outputs.trace_path = file_per_run(trace, seeds);
        plan.outputs.events_path = file_per_run(events, seeds);
        plan.outputs.cache_path = file_per_run(cache, seeds);
        plan.outputs.resume = resume;
        PendingPythonError pending;
        if (!replay.empty()) {
          auto& r = plan.replay();
          r.sampling = parse_replay_sampling(sampling);
          r.workers = workers;
        } else {
          auto& caller = plan.backend.emplace<CallerBackend>();
          caller.space = *space;
          caller.prototype = prototype(kernel, device, problem_size);
          caller.watch_gpu = watch_gpu;
          caller.measure = [bench = PythonBenchmarker{measure.ptr(), &pending}](std::span<const Candidate> c) mutable {
            return bench.measure(c);
          };
          // An exception of the caller's `stops` (Kernel Tuner's StopCriterionReached, raised
          // inside a measurement at its budget) ends the search as a normal end would, for the
          // observers (the event log's "end" line); it is raised again once the search unwound.
          caller.ends_search = [&pending, stops](const std::exception_ptr&) {
            nb::gil_scoped_acquire gil;
            return pending.type && !stops.is_none() && PyErr_GivenExceptionMatches(pending.type, stops.ptr()) != 0;
          };
        }
        Result result;
        bool raised = false;
        {
          nb::gil_scoped_release release;
          try {
            if (!replay.empty())
              plan.replay().data =
                  std::make_shared<const SpaceData>(load_replay_space(replay, t1, parse_replay_space(replay_space)));
            result = gpuforecast::run(plan);
          } catch (const python_raised&) {
            raised = true;
          }
        }
        if (raised) {
          PyErr_Restore(pending.type, pending.value, pending.traceback);
          throw nb::python_error();
        }
        nb::dict out;
        out["optimum_ms"] = result.optimum_ms;
        nb::list runs;
        for (const auto& r : result.runs) runs.append(run_to_python(r));
        out["runs"] = runs;
        return out;
      },
      nb::arg("strategy"), nb::arg("model_path"), nb::arg("surrogate"), nb::arg("options"), nb::arg("budget"),
      nb::arg("budget_seconds"), nb::arg("seeds"), nb::arg("first_seed"), nb::arg("threads"), nb::arg("trace"),
      nb::arg("events"), nb::arg("cache"), nb::arg("resume"), nb::arg("replay"), nb::arg("replay_space"),
      nb::arg("sampling"), nb::arg("t1"), nb::arg("workers"), nb::arg("space").none(), nb::arg("kernel"),
      nb::arg("device"), nb::arg("problem_size"), nb::arg("measure").none(), nb::arg("stops").none(),
      nb::arg("watch_gpu").none(),
      "Runs a Plan (gpuforecast.run): replayed data when `replay` is given, else `measure` is called with "
      "batches of value tuples and returns (status, time_ms, cost_s) per configuration.");
}

}  // namespace gpuforecast::python
