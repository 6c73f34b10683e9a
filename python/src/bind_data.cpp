// read_cache(): a Kernel Tuner cache or a T4 file (.json, .json.gz) as plain Python data.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <limits>
#include <set>

#include "bindings.hpp"
#include "convert.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "data/static_feature_table.hpp"

namespace gpuforecast::python {

namespace {
nb::dict to_python(const SpaceData& s) {
  nb::dict d;
  d["path"] = s.path;
  d["kernel"] = s.kernel;
  d["kernel_name"] = s.kernel_name;
  d["device"] = s.device ? s.device->name : std::string{};
  d["problem_size"] = s.problem_size;
  nb::list parameters, columns;
  nb::dict values;
  std::vector<nb::list> cols;
  for (const auto& p : s.space.parameters()) {
    parameters.append(p.name);
    nb::list v;
    for (const auto& x : p.values) v.append(from_value(x));
    values[p.name.c_str()] = v;
    cols.emplace_back();
  }
  nb::list status, reason;
  const std::size_t n = s.observations.size();
  auto* median = new std::vector<double>(n, std::numeric_limits<double>::quiet_NaN());
  nb::capsule owner(median, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  for (std::size_t i = 0; i < n; ++i) {
    const auto& o = s.observations[i];
    const auto& cfg = o.candidate.config.values();
    for (std::size_t p = 0; p < cfg.size() && p < cols.size(); ++p) cols[p].append(from_value(cfg[p]));
    status.append(std::string(to_string(o.measurement.status)));
    reason.append(o.measurement.reason);
    if (o.measurement.ok()) (*median)[i] = o.measurement.median_ms;
  }
  for (auto& c : cols) columns.append(c);
  d["parameters"] = parameters;
  d["values"] = values;
  d["constraints"] = s.space.constraints();
  d["columns"] = columns;
  d["status"] = status;
  d["reason"] = reason;
  d["median_ms"] = nb::ndarray<nb::numpy, double>(median->data(), {n}, owner);
  // What is known of each configuration before it runs (static features joined by
  // attach_static_features): one column per name, NaN where a configuration has none.
  std::set<std::string> names;
  for (const auto& o : s.observations)
    for (const auto& [name, value] : o.candidate.features) names.insert(name);
  nb::dict features;
  for (const auto& name : names) {
    auto* column = new std::vector<double>(n, std::numeric_limits<double>::quiet_NaN());
    nb::capsule column_owner(column, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
    for (std::size_t i = 0; i < n; ++i)
      if (auto it = s.observations[i].candidate.features.find(name); it != s.observations[i].candidate.features.end())
        (*column)[i] = it->second;
    features[name.c_str()] = nb::ndarray<nb::numpy, double>(column->data(), {n}, column_owner);
  }
  d["features"] = features;
  return d;
}
}  // namespace

void bind_data(nb::module_& m) {
  m.def(
      "_read_cache",
      [](const std::string& path, const std::string& features) {
        std::vector<SpaceData> data(1);
        std::vector<StaticFeatureCoverage> coverage;
        {
          nb::gil_scoped_release release;
          data[0] = load_space(path);
          if (!features.empty()) coverage = attach_static_features(data, read_static_feature_tables(features));
        }
        nb::dict d = to_python(data[0]);
        if (!coverage.empty()) {
          nb::dict c;
          c["with_features"] = coverage[0].with_features;
          c["observations"] = coverage[0].observations;
          c["architecture"] = coverage[0].architecture;
          c["note"] = coverage[0].note;
          d["static_features"] = c;
        }
        return d;
      },
      nb::arg("path"), nb::arg("features") = "");
}

}  // namespace gpuforecast::python
