#pragma once
// Python values <-> gpuforecast values. Every conversion error names the parameter and the
// value (repr), because that is what a user has to fix.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpuforecast/core/candidate.hpp"
#include "gpuforecast/core/config.hpp"

namespace gpuforecast::python {

namespace nb = nanobind;

// The text of a Python str (TypeError naming `what` otherwise), and repr() of anything.
[[nodiscard]] std::string utf8(nb::handle str, const char* what = "value");
[[nodiscard]] std::string repr_of(nb::handle object);

// int (and bool, numpy integers) -> integer, float -> floating point, str -> string.
// Raises TypeError naming `parameter` for anything else (None, lists, ...).
[[nodiscard]] Value to_value(nb::handle object, const std::string& parameter);
[[nodiscard]] nb::object from_value(const Value& value);

// Configurations given as columns: one per parameter name, each a 1-D numpy int64/float64
// array or a sequence of Python values, all of one length. Raises ValueError when lengths
// differ. The GIL must be held.
[[nodiscard]] std::vector<Config> configs_from_columns(const ParameterNames& names, nb::handle columns);

// Rows given as a list of dicts {key: value}, each holding exactly `keys`, as one column per key
// in `keys` order: a 1-D numpy int64 array when every value is an int (or bool), float64 when
// they are ints and floats with at least one float, else a list (configs_from_columns turns
// those into values and names what is wrong). One pass in C++ instead of a Python comprehension
// per parameter plus numpy's type inference. Returns None for anything irregular (a row that is
// not a dict, missing or extra keys) so that the caller's Python path raises its usual error.
[[nodiscard]] nb::object dict_rows_to_columns(nb::handle rows, nb::handle keys);

// The device by name from the registry; a name the registry does not know gives a Device that
// carries only the name (forecasts within that device still work), with a Python warning.
[[nodiscard]] std::shared_ptr<const Device> device_by_name(const std::string& name);

// A prototype candidate: kernel, device and problem size; its config is filled per row.
[[nodiscard]] Candidate prototype(const std::string& kernel, const std::string& device,
                                  const std::vector<std::int64_t>& problem_size);

// Candidates of one prototype, one per row of `columns` (configs_from_columns). `rows`: how many
// when there are no columns (rows without any parameter, which the model's check refuses by row
// instead of forecasting nothing).
[[nodiscard]] std::vector<Candidate> candidates_from(const Candidate& proto, const std::vector<std::string>& names,
                                                     nb::handle columns, std::size_t rows = 0);

// A numpy array that owns its buffer.
template <class T>
nb::ndarray<nb::numpy, T> owned(std::vector<T>&& v, std::initializer_list<std::size_t> shape) {
  auto* heap = new std::vector<T>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(heap->data(), shape, owner);
}

// A numpy bool array of `flags` (0 or 1).
[[nodiscard]] nb::object bool_array(std::vector<std::uint8_t>&& flags);

}  // namespace gpuforecast::python
