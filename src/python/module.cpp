// fib-python.so: the embedded interpreter as a module that fib loads on first use
// (src/python/module_abi.hpp). Everything here but the entry point is hidden.

#include "module_abi.hpp"

#include <Python.h>
#include <dlfcn.h>

namespace fib::python::detail {
namespace {

PythonFrontend* create_runtime(const RuntimeOptions& options) {
  return new Runtime(options);
}

void destroy_runtime(PythonFrontend* runtime) {
  delete runtime;
}

std::string bound_library_path() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&Py_GetVersion), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  return info.dli_fname;
}

constexpr ModuleFunctions k_functions{k_module_abi, FIB_PYTHON_MODULE_TOKEN, &create_runtime,
                                      &destroy_runtime, &bound_library_path};

} // namespace
} // namespace fib::python::detail

extern "C" __attribute__((visibility("default"))) const fib::python::detail::ModuleFunctions*
fib_python_module_entry_v1() {
  return &fib::python::detail::k_functions;
}
