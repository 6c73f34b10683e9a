// The extension module gpuforecast._gpuforecast; the Python package wraps it (python/gpuforecast/).
#include "bindings.hpp"
#include "gpuforecast/core/error.hpp"
#include "gpuforecast/version.hpp"

namespace gpuforecast::python {

// C++ errors become Python exceptions with the same message. Input mistakes (files, values,
// expressions, devices, model files) are also ValueErrors, so `except ValueError` catches them.
void bind_errors(nb::module_& m) {
  static nb::exception<gpuforecast::error> base(m, "Error", PyExc_RuntimeError);
  static nb::exception<cuda_error> cuda(m, "CudaError", base.ptr());
  nb::object bases = nb::make_tuple(base, nb::handle(PyExc_ValueError));
  // Named in this module, as nb::exception names Error, so that the type stubs hold them too.
  const std::string prefix = std::string(nb::str(m.attr("__name__")).c_str()) + ".";
  auto derived = [&](const char* name) {
    PyObject* type = PyErr_NewException((prefix + name).c_str(), bases.ptr(), nullptr);
    if (!type) throw nb::python_error();
    m.attr(name) = nb::steal(type);
    return type;
  };
  static PyObject* input = derived("InputError");
  static PyObject* expression = derived("ExpressionError");
  static PyObject* unknown_device = derived("UnknownDeviceError");
  static PyObject* invalid_argument = derived("InvalidArgumentError");
  static PyObject* model_file = derived("ModelFileError");
  // A configuration that does not fit the kernel's parameters: an InvalidArgumentError (and so a
  // ValueError) with the row, the parameter and what was expected as attributes.
  static PyObject* configuration = [&] {
    PyObject* type = PyErr_NewException((prefix + "ConfigurationError").c_str(), invalid_argument, nullptr);
    if (!type) throw nb::python_error();
    m.attr("ConfigurationError") = nb::steal(type);
    return type;
  }();
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const input_error& e) {
      PyErr_SetString(input, e.what());
    } catch (const expression_error& e) {
      PyErr_SetString(expression, e.what());
    } catch (const unknown_device_error& e) {
      PyErr_SetString(unknown_device, e.what());
    } catch (const invalid_configuration_error& e) {
      nb::object error = nb::borrow(configuration)(nb::str(e.what()));
      error.attr("row") = nb::int_(e.get_row());
      error.attr("parameter") = nb::str(e.get_parameter().c_str(), e.get_parameter().size());
      error.attr("expected") = nb::str(e.get_expected().c_str(), e.get_expected().size());
      PyErr_SetObject(configuration, error.ptr());
    } catch (const invalid_argument_error& e) {
      PyErr_SetString(invalid_argument, e.what());
    } catch (const model_file_error& e) {
      PyErr_SetString(model_file, e.what());
    }
  });
}

}  // namespace gpuforecast::python

NB_MODULE(_gpuforecast, m) {
  using namespace gpuforecast::python;
  m.doc() = "gpuforecast C++ library bindings (use the gpuforecast package, not this module)";
  m.attr("__version__") = gpuforecast::version();
  bind_errors(m);
  bind_model(m);
  bind_data(m);
  bind_space(m);
  bind_search(m);
  bind_pairs(m);
  bind_llm(m);
}
