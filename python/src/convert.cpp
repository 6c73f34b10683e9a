#include "convert.hpp"

#include <nanobind/ndarray.h>

#include <fmt/core.h>

#include "gpuforecast/core/device.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast::python {

std::string utf8(nb::handle h, const char* what) {
  Py_ssize_t size = 0;
  const char* text = PyUnicode_Check(h.ptr()) ? PyUnicode_AsUTF8AndSize(h.ptr(), &size) : nullptr;
  if (!text) {
    PyErr_Clear();
    throw nb::type_error(fmt::format("{} must be a str, got {}", what, repr_of(h)).c_str());
  }
  return std::string(text, static_cast<std::size_t>(size));
}

std::string repr_of(nb::handle h) {
  PyObject* r = PyObject_Repr(h.ptr());
  if (!r) {
    PyErr_Clear();
    return "<unprintable object>";
  }
  nb::object owned = nb::steal(r);
  return utf8(owned);
}

namespace {

using IntColumn = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::device::cpu>;
using FloatColumn = nb::ndarray<const double, nb::ndim<1>, nb::device::cpu>;
}  // namespace

Value to_value(nb::handle o, const std::string& parameter) {
  if (PyBool_Check(o.ptr())) return Value(static_cast<std::int64_t>(o.ptr() == Py_True));
  if (PyLong_Check(o.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
    if (overflow != 0)
      throw nb::value_error(fmt::format("parameter {}: value {} does not fit in 64 bits", parameter, repr_of(o)).c_str());
    return Value(static_cast<std::int64_t>(v));
  }
  if (PyFloat_Check(o.ptr())) return Value(PyFloat_AS_DOUBLE(o.ptr()));
  if (PyUnicode_Check(o.ptr())) return Value(utf8(o));
  // numpy scalars (np.int64(16), np.float32(0.5)) turn into Python numbers with .item()
  if (nb::hasattr(o, "item") && nb::hasattr(o, "dtype")) {
    nb::object item = o.attr("item")();
    if (PyLong_Check(item.ptr()) || PyFloat_Check(item.ptr()) || PyUnicode_Check(item.ptr()) ||
        PyBool_Check(item.ptr()))
      return to_value(item, parameter);
  }
  throw nb::type_error(fmt::format("parameter {}: value {} of type {} is not an int, float or str", parameter,
                                   repr_of(o), utf8(o.type().attr("__name__")))
                           .c_str());
}

nb::object from_value(const Value& v) {
  if (v.is_int()) return nb::int_(v.as_int());
  if (v.is_float()) return nb::float_(v.as_double());
  return nb::str(v.as_string().c_str(), v.as_string().size());
}

std::vector<Config> configs_from_columns(const ParameterNames& names, nb::handle columns) {
  const std::size_t n_params = names->size();
  if (nb::len(columns) != n_params)
    throw nb::value_error(fmt::format("expected {} columns (one per parameter), got {}", n_params, nb::len(columns)).c_str());
  std::vector<std::vector<Value>> values;  // values[row][param]
  std::size_t rows = 0;
  for (std::size_t p = 0; p < n_params; ++p) {
    nb::handle column = columns[p];
    const std::string& name = (*names)[p];
    std::size_t n = 0;
    auto fill = [&](std::size_t count, auto&& at) {
      if (p == 0) {
        rows = count;
        values.assign(rows, std::vector<Value>(n_params));
      } else if (count != rows) {
        throw nb::value_error(fmt::format("parameter {} has {} values but {} has {}", name, count, (*names)[0], rows).c_str());
      }
      for (std::size_t r = 0; r < count; ++r) values[r][p] = at(r);
    };
    IntColumn ints;
    FloatColumn floats;
    if (nb::try_cast(column, ints, false)) {
      n = ints.shape(0);
      auto view = ints.view();
      fill(n, [&](std::size_t r) { return Value(view(r)); });
    } else if (nb::try_cast(column, floats, false)) {
      n = floats.shape(0);
      auto view = floats.view();
      fill(n, [&](std::size_t r) { return Value(view(r)); });
    } else {
      // One pass over any iterable (lists, tuples, pandas Series of objects); a str is not a column.
      PyObject* copied = PyUnicode_Check(column.ptr()) ? nullptr : PySequence_List(column.ptr());
      if (!copied) {
        PyErr_Clear();
        throw nb::type_error(fmt::format("parameter {}: expected a sequence of values, got {}", name, repr_of(column)).c_str());
      }
      nb::list list = nb::steal<nb::list>(copied);
      fill(nb::len(list), [&](std::size_t r) { return to_value(list[r], name); });
    }
  }
  std::vector<Config> out;
  out.reserve(rows);
  for (auto& row : values) out.emplace_back(names, std::move(row));
  return out;
}

nb::object dict_rows_to_columns(nb::handle rows, nb::handle keys) {
  if (!PyList_Check(rows.ptr()) || !PyList_Check(keys.ptr())) return nb::none();
  const Py_ssize_t n_rows = PyList_GET_SIZE(rows.ptr());
  const Py_ssize_t n_keys = PyList_GET_SIZE(keys.ptr());
  enum class Kind { integer, floating, other };
  std::vector<Kind> kinds(static_cast<std::size_t>(n_keys), Kind::integer);
  // Pass 1: the rows are regular (exactly the keys) and each column's kind.
  for (Py_ssize_t r = 0; r < n_rows; ++r) {
    PyObject* row = PyList_GET_ITEM(rows.ptr(), r);
    if (!PyDict_Check(row) || PyDict_GET_SIZE(row) != n_keys) return nb::none();
    for (Py_ssize_t k = 0; k < n_keys; ++k) {
      PyObject* v = PyDict_GetItemWithError(row, PyList_GET_ITEM(keys.ptr(), k));
      if (!v) {
        if (PyErr_Occurred()) throw nb::python_error();  // an unhashable key: Python's own error
        return nb::none();
      }
      Kind& kind = kinds[static_cast<std::size_t>(k)];
      if (kind == Kind::other) continue;
      if (PyLong_Check(v)) {  // bool is an int subclass: numpy makes a bool column int64 as well
        int overflow = 0;
        (void)PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow != 0) kind = Kind::other;  // to_value names the value that does not fit
      } else if (PyFloat_Check(v)) {
        kind = Kind::floating;
      } else {
        kind = Kind::other;
      }
    }
  }
  // Pass 2: the columns.
  nb::list columns;
  const std::size_t n = static_cast<std::size_t>(n_rows);
  for (Py_ssize_t k = 0; k < n_keys; ++k) {
    PyObject* key = PyList_GET_ITEM(keys.ptr(), k);
    const Kind kind = kinds[static_cast<std::size_t>(k)];
    auto value_at = [&](Py_ssize_t r) { return PyDict_GetItem(PyList_GET_ITEM(rows.ptr(), r), key); };
    if (kind == Kind::integer) {
      auto* data = new std::int64_t[n];
      nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<std::int64_t*>(p); });
      for (Py_ssize_t r = 0; r < n_rows; ++r) data[r] = PyLong_AsLongLong(value_at(r));
      columns.append(nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>>(data, {n}, owner));
    } else if (kind == Kind::floating) {
      auto* data = new double[n];
      nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<double*>(p); });
      for (Py_ssize_t r = 0; r < n_rows; ++r) {
        PyObject* v = value_at(r);
        data[r] = PyFloat_Check(v) ? PyFloat_AS_DOUBLE(v) : static_cast<double>(PyLong_AsLongLong(v));
      }
      columns.append(nb::ndarray<nb::numpy, double, nb::ndim<1>>(data, {n}, owner));
    } else {
      nb::list column;
      for (Py_ssize_t r = 0; r < n_rows; ++r) column.append(nb::borrow(value_at(r)));
      columns.append(column);
    }
  }
  return columns;
}

std::shared_ptr<const Device> device_by_name(const std::string& name) {
  if (auto d = DeviceRegistry::global().try_find(name)) return d;
  if (name.empty()) throw invalid_argument_error("device: give the name of a GPU (e.g. \"A100\")");
  const std::string message =
      fmt::format("gpuforecast: device \"{}\" is not in the device table; features that need its numbers are left out", name);
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw nb::python_error();
  Device d;
  d.name = name;
  return std::make_shared<const Device>(std::move(d));
}

Candidate prototype(const std::string& kernel, const std::string& device, const std::vector<std::int64_t>& problem_size) {
  Candidate c;
  c.kernel = kernel;
  c.device = device_by_name(device);
  c.problem_size = problem_size;
  return c;
}

std::vector<Candidate> candidates_from(const Candidate& proto, const std::vector<std::string>& names,
                                       nb::handle columns, std::size_t rows) {
  const auto shared = std::make_shared<const std::vector<std::string>>(names);
  std::vector<Config> configs =
      names.empty() ? std::vector<Config>(rows, Config(shared, {})) : configs_from_columns(shared, columns);
  std::vector<Candidate> out(configs.size(), proto);
  for (std::size_t i = 0; i < configs.size(); ++i) out[i].config = std::move(configs[i]);
  return out;
}

nb::object bool_array(std::vector<std::uint8_t>&& flags) {
  const std::size_t n = flags.size();
  return nb::module_::import_("numpy").attr("asarray")(owned(std::move(flags), {n})).attr("astype")("bool");
}

}  // namespace gpuforecast::python
