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
  // pinned_python_library): the build's Python version and the stat() identity (device, inode,
  // size, modification and status-change times) of the pinned libpython. Otherwise the module is
  // loaded and it starts with Runtime::identity() ("CPython " and Py_GetVersion()). Both end with
  // the module's stat() identity (its code answers too), so a replaced or rewritten library or
  // module changes it. "" when there is no module or it cannot be loaded (nothing is cached
  // then). The same answer for the life of the object; once the module is loaded, a pinned
  // library that no longer matches the identity given before is refused (`python.unavailable`).
  std::string identity() const override;

  // True once the module is loaded (the interpreter itself starts on the first check).
  bool loaded() const;

  // The libpython fib loads by its absolute path before the module: the one fib was built with,
  // as long as nothing in the environment could make the dynamic loader pick another (neither
  // LD_LIBRARY_PATH nor LD_PRELOAD is set) and it exists. nullopt: the loader's own search picks
  // it, as for any dependency of the module.
  static std::optional<std::filesystem::path> pinned_python_library();

private:
  struct Loaded;
  // Loads the module (and the pinned library) on first use; the error is remembered.
  Expected<PythonFrontend*> ensure_loaded();

  LazyRuntimeOptions m_options;
  std::unique_ptr<Loaded> m_loaded;
  std::optional<Diagnostic> m_load_error;
  mutable std::optional<std::string> m_identity;
  // The library's stat() identity that m_identity names; empty when it names none.
  mutable std::string m_library_fingerprint;
};

// Where fib's Python module is: $FIB_PYTHON_MODULE when set, else next to the program in the
// installed layout (<bindir>/../lib/fib/fib-python.so), or beside it in a build tree. nullopt when
// there is none.
std::optional<std::filesystem::path> find_python_module();

} // namespace fib::python
