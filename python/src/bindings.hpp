#pragma once
// One function per part of the module (python/src/bind_*.cpp), called from module.cpp.
#include <nanobind/nanobind.h>

namespace gpuforecast::python {
namespace nb = nanobind;
void bind_errors(nb::module_& m);
void bind_model(nb::module_& m);
void bind_data(nb::module_& m);
void bind_space(nb::module_& m);
void bind_search(nb::module_& m);
void bind_pairs(nb::module_& m);
void bind_llm(nb::module_& m);
}  // namespace gpuforecast::python
