#pragma once
// What fib's Python module (fib-python.so, built from src/python/module.cpp) and the program that
// loads it (src/python/lazy_runtime.cpp) agree on. Private to src/python.
//
// The module holds the embedded interpreter (python::Runtime) and links libpython; the program
// does not, so a run that needs no Python never loads either. Both sides are built together, from
// the same sources, with the same compiler and libstdc++: C++ types cross the boundary as they
// are. The module is never unloaded.

#include <fib/model/python_frontend.hpp>
#include <fib/python/runtime.hpp>

namespace fib::python::detail {

// --- Interface ---

// The one symbol the module exports: a C function of type ModuleEntry, named k_module_entry.
// k_module_abi numbers the layout of ModuleFunctions; the build token (FIB_PYTHON_MODULE_TOKEN,
// drawn at random each time CMake configures the build, given to both sides) tells this build's
// module from any other's, whose types may differ. The loader refuses a module with another.
inline constexpr char k_module_entry[] = "fib_python_module_entry_v1";
inline constexpr int k_module_abi = 2;

struct ModuleFunctions {
  int abi = 0; // k_module_abi; first, whatever the layout
  const char* build_token = nullptr;
  // A new Runtime (not started) with `options`; never null.
  PythonFrontend* (*create)(const RuntimeOptions& options) = nullptr;
  // Destroys what `create` returned (finalising the interpreter if it started).
  void (*destroy)(PythonFrontend* runtime) = nullptr;
  // The path of the libpython the module's calls go to (dladdr of Py_GetVersion), "" if unknown.
  std::string (*library_path)() = nullptr;
};

using ModuleEntry = const ModuleFunctions* (*)();

} // namespace fib::python::detail
