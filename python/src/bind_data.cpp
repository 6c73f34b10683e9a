// read_cache(): a Kernel Tuner cache or a T4 file (.json, .json.gz) as plain Python data.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <limits>

#include "bindings.hpp"
#include "convert.hpp"
#include "gpuforecast/data/dataset.hpp"

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
  return d;
}
}  // namespace

void bind_data(nb::module_& m) {
  m.def(
      "_read_cache",
      [](const std::string& path) {
        SpaceData data;
        {
          nb::gil_scoped_release release;
          data = load_space(path);
        }
        return to_python(data);
      },
      nb::arg("path"));
}

}  // namespace gpuforecast::python
