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
// Each build of the module answers with its own k_module_abi; the loader refuses any other.
inline constexpr char k_module_entry[] = "fib_python_module_entry_v1";
inline constexpr int k_module_abi = 1;

struct ModuleFunctions {
  int abi = 0;
  // A new Runtime (not started) with `options`; never null.
  PythonFrontend* (*create)(const RuntimeOptions& options) = nullptr;
  // Destroys what `create` returned (finalising the interpreter if it started).
  void (*destroy)(PythonFrontend* runtime) = nullptr;
  // The path of the libpython the module is bound to (dladdr of Py_GetVersion), "" if unknown.
  std::string (*library_path)() = nullptr;
};

using ModuleEntry = const ModuleFunctions* (*)();

} // namespace fib::python::detail
