#pragma once
// fib::python::LazyRuntime: the embedded interpreter as the `fib` program uses it, loaded on first
// use from fib's Python module (fib-python.so, which links libpython), so that a run that needs no
// Python (a warm validation whose results all come from the cache, `fib --help`, `fib tag`) never
// loads libpython at all. It behaves as python::Runtime does (fib/python/runtime.hpp): the module
// holds one. Like it, one per process, owned by main.

#include <fib/model/python_frontend.hpp>
#include <fib/python/runtime.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace fib::python {

// --- Interface ---

struct LazyRuntimeOptions {
  RuntimeOptions runtime;
  // The module to load. Empty: $FIB_PYTHON_MODULE when set, else find_python_module().
  std::filesystem::path module;
};

class LazyRuntime final : public PythonFrontend {
public:
  explicit LazyRuntime(LazyRuntimeOptions options = {});
  ~LazyRuntime() override; // finalises the interpreter if it started; the module stays loaded
  LazyRuntime(const LazyRuntime&) = delete;
  LazyRuntime& operator=(const LazyRuntime&) = delete;

  // PythonFrontend: each check loads the module on first use, then asks its Runtime. Errors: those
  // of Runtime, and `python.unavailable` when the module or libpython cannot be loaded (reported
  // the same way on every later call).
  Expected<ReferenceAnalysis> analyze_reference(std::string_view source) override;
  Expected<std::optional<PythonSyntaxError>> check_expression(std::string_view source) override;
  Expected<SourceStructure> analyze_structure(std::string_view source) override;
  Expected<HelperResolution> resolve_helpers(const HelperQuery& query) override;
  // Forwarded to the Runtime once the module is loaded; nothing before.
  void prepare_fork() override;
  void after_fork(ForkSide side) override;

  // What keys cached answers, known without loading anything when the library is pinned (see
  // pinned_python_library): the build's Python version, the pinned libpython's path and stat()
  // identity (stat_fingerprint, fib/io/file_fingerprint.hpp), and the module's
  // stat() identity (its code answers too). Otherwise the module is loaded to ask it: its
  // Runtime::identity() ("CPython " and Py_GetVersion()), the path and stat() identity of the
  // libpython its calls go to, and the module's. So a replaced or rewritten library or module
  // changes it. "" when there is no module, or nothing is pinned and the module cannot be loaded
  // (nothing is cached then; a pinned identity with a broken module gives only failed answers,
  // which are not cached either). The same answer for the life of the object. Loading checks
  // the files against what the identity named, taken before: a module or pinned library that
  // changed in between, a module from another build of fib, or one whose calls go to another
  // libpython than the pinned one is refused (`python.unavailable`).
  std::string identity() const override;

  // True once the module is loaded (the interpreter itself starts on the first check).
  bool loaded() const;

  // The libpython fib loads by its absolute path before the module (so the module's dependency on
  // it is met by that file, whatever LD_LIBRARY_PATH says): the one fib was built with, when it
  // exists and LD_PRELOAD is not set (a preloaded library could be another libpython). nullopt:
  // the loader's own search picks it, as for any dependency of the module.
  static std::optional<std::filesystem::path> pinned_python_library();

private:
  struct Loaded;
  // Loads the module (and the pinned library) on first use; the error is remembered.
  Expected<PythonFrontend*> ensure_loaded();

  LazyRuntimeOptions m_options;
  std::unique_ptr<Loaded> m_loaded;
  std::optional<Diagnostic> m_load_error;
  // The stat() identities of the module and of the pinned library (if any), taken once, by
  // whichever comes first of identity() and the load; "" for a file that cannot be stat()ed.
  struct Prints {
    std::string module;
    std::filesystem::path library_path; // empty when nothing is pinned
    std::string library;
  };
  void take_prints() const;

  mutable std::optional<Prints> m_prints;
  mutable std::optional<std::string> m_identity;
};

// Where fib's Python module is: $FIB_PYTHON_MODULE when set, else next to the program in the
// installed layout (<bindir>/../lib/fib/fib-python.so), or beside it in a build tree. nullopt when
// there is none.
std::optional<std::filesystem::path> find_python_module();

} // namespace fib::python
