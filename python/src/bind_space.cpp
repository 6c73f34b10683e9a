// Space: a TuningSpace from a T1 file or from parameters and constraints; enumerate, sample,
// and check a configuration with an error that names what is wrong with it.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/core.h>

#include <algorithm>

#include "bindings.hpp"
#include "convert.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/core/parameter_schema.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "gpuforecast/space/enumerate.hpp"

namespace gpuforecast::python {

namespace {

nb::list to_dicts(const TuningSpace& s, const std::vector<Config>& configs) {
  std::vector<nb::str> keys;
  for (const auto& n : *s.names()) keys.emplace_back(n.c_str(), n.size());
  nb::list out;
  for (const auto& c : configs) {
    nb::dict d;
    for (std::size_t i = 0; i < keys.size(); ++i) d[keys[i]] = from_value(c[i]);
    out.append(d);
  }
  return out;
}

// The configuration from a dict {parameter: value} or a sequence in parameter order; errors
// name the missing or unknown parameter, or the parameter and its value.
Config config_from(const TuningSpace& space, nb::handle values) {
  const auto& params = space.parameters();
  if (PyDict_Check(values.ptr())) {
    nb::dict d = nb::borrow<nb::dict>(values);
    std::string missing, unknown;
    for (const auto& p : params)
      if (!d.contains(p.name.c_str())) missing += (missing.empty() ? "" : ", ") + p.name;
    for (auto [key, value] : d) {
      const std::string k = PyUnicode_Check(key.ptr()) ? utf8(key) : repr_of(key);
      if (std::none_of(params.begin(), params.end(), [&](const Parameter& p) { return p.name == k; }))
        unknown += (unknown.empty() ? "" : ", ") + k;
    }
    if (!missing.empty() || !unknown.empty())
      throw nb::key_error(fmt::format("configuration {} {}{}{}", repr_of(values),
                                      missing.empty() ? "" : "lacks parameter(s) " + missing,
                                      !missing.empty() && !unknown.empty() ? " and " : "",
                                      unknown.empty() ? "" : "names unknown parameter(s) " + unknown).c_str());
    std::vector<Value> v;
    v.reserve(params.size());
    for (const auto& p : params) v.push_back(to_value(d[p.name.c_str()], p.name));
    return space.make_config(std::move(v));
  }
  if (nb::len(values) != params.size())
    throw nb::value_error(fmt::format("a configuration of this space has {} values (one per parameter), got {}",
                                      params.size(), nb::len(values)).c_str());
  std::vector<Value> v;
  v.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) v.push_back(to_value(values[i], params[i].name));
  return space.make_config(std::move(v));
}

// Empty when valid; otherwise why not: the first value outside its list, or the constraints it breaks.
std::string why_invalid(const TuningSpace& space, const Config& c) {
  std::string why = why_outside(space, c);
  if (why.starts_with("breaks")) why = fmt::format("[{}] {}", c.to_string(), why);
  return why;
}

// Space.contains() and `config in space`: check() without the exception.
bool space_contains(const TuningSpace& space, nb::handle config) {
  try {
    return why_invalid(space, config_from(space, config)).empty();
  } catch (const nb::builtin_exception&) {
    return false;
  }
}

}  // namespace

void bind_space(nb::module_& m) {
  nb::class_<TuningSpace>(m, "Space", "Named tunable parameters with value lists, plus constraint expressions.")
      .def(
          "__init__",
          [](TuningSpace* self, const std::vector<std::pair<std::string, nb::object>>& parameters,
             const std::vector<std::string>& constraints) {
            // parameters: (name, values) pairs, in parameter order
            std::vector<Parameter> ps;
            for (const auto& [name, values] : parameters) {
              Parameter p;
              p.name = name;
              for (nb::handle v : nb::iter(values)) p.values.push_back(to_value(v, p.name));
              if (p.values.empty()) throw nb::value_error(fmt::format("parameter {} has no values", p.name).c_str());
              ps.push_back(std::move(p));
            }
            new (self) TuningSpace(std::move(ps), constraints);
          },
          nb::arg("parameters"), nb::arg("constraints") = std::vector<std::string>{})
      .def_static(
          "from_t1",
          [](const std::string& path) {
            nb::gil_scoped_release release;
            return read_t1(path).space;
          },
          nb::arg("path"), "The tuning space of a T1 file (its Conditions become the constraints).")
      .def_prop_ro("names", [](const TuningSpace& s) { return *s.names(); }, "Parameter names, in order.")
      .def_prop_ro(
          "parameters",
          [](const TuningSpace& s) {
            nb::dict d;
            for (const auto& p : s.parameters()) {
              nb::list l;
              for (const auto& v : p.values) l.append(from_value(v));
              d[p.name.c_str()] = l;
            }
            return d;
          },
          "Every parameter's values (a dict in parameter order), as Kernel Tuner's tune_params.")
      .def_prop_ro("constraints", &TuningSpace::constraints)
      .def_prop_ro("cartesian_size", &TuningSpace::cartesian_size, "Size ignoring the constraints.")
      .def(
          "enumerate",
          [](const TuningSpace& s) {
            std::vector<Config> all;
            {
              nb::gil_scoped_release release;
              all = enumerate_valid(s);
            }
            return to_dicts(s, all);
          },
          "Every configuration that satisfies the constraints, as dicts, first parameter slowest.")
      .def(
          "sample",
          [](const TuningSpace& s, std::size_t n, std::uint64_t seed) {
            std::vector<Config> drawn;
            {
              nb::gil_scoped_release release;
              drawn = sample_valid(s, n, seed);
            }
            return to_dicts(s, drawn);
          },
          nb::arg("n"), nb::arg("seed") = 0,
          "n distinct valid configurations drawn uniformly (fewer if the space is smaller); the same seed gives the same sample.")
      .def(
          "restricted_to",
          [](const TuningSpace& s, nb::iterable configs) {
            std::vector<Config> members;
            for (nb::handle c : configs) members.push_back(config_from(s, c));
            nb::gil_scoped_release release;
            return s.restricted_to(members);
          },
          nb::arg("configs"),
          "This space restricted to the listed configurations (dicts or value tuples): a search draws from those "
          "that also satisfy the constraints and from nothing else, as Kernel Tuner's Searchspace.list or a cache's "
          "valid configurations.")
      .def(
          "check",
          [](const TuningSpace& s, nb::handle config) {
            const std::string why = why_invalid(s, config_from(s, config));
            if (!why.empty()) throw nb::value_error(why.c_str());
          },
          nb::arg("config"),
          "Raises KeyError for missing or unknown parameters, TypeError for a value of the wrong type, and "
          "ValueError naming the value outside its list or the constraints broken.")
      .def(
          "contains",
          &space_contains,
          nb::arg("config"), "True when check() would pass.")
      .def(
          "__contains__",
          &space_contains,
          nb::arg("config"))
      .def(
          "_first_invalid_row",
          [](const TuningSpace& s, nb::handle columns) -> nb::object {
            // columns in the space's parameter order; (row, why) of the first configuration
            // outside the space, or None
            const auto configs = configs_from_columns(s.names(), columns);
            for (std::size_t r = 0; r < configs.size(); ++r)
              if (!s.is_valid(configs[r])) return nb::make_tuple(r, why_invalid(s, configs[r]));
            return nb::none();
          },
          nb::arg("columns"));
}

}  // namespace gpuforecast::python
