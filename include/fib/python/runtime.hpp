#pragma once
// fib::python::Runtime: the embedded CPython interpreter (fib_python target).
//
// One Runtime per process, owned by the program (main, or a test runner's main) and passed down by
// reference. It starts the interpreter lazily, on the first check that needs it, and at most once.
// It never imports torch. No pybind11 or Python.h types appear in this header.

#include <fib/model/python_frontend.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace fib::python {

// --- Interface ---

// Whether the interpreter imports `site` (site-packages). Syntax checks need only the standard
// library, so they start faster without it; running references needs it.
enum class SiteImport { yes, no };

// How the interpreter got the helper (the Python fib's checks run in): the code object compiled
// when fib was built, or its source, compiled at start (about 5 ms more), when the interpreter's
// bytecode magic number differs from the build's Python's or it runs optimised (-O,
// PYTHONOPTIMIZE). Both run the same code.
enum class HelperLoad { precompiled, from_source };

struct RuntimeOptions {
  // The Python whose prefix and standard library to use. Empty: $FIB_PYTHON if set, else the
  // interpreter chosen at build time (FIB_PYTHON_EXECUTABLE).
  std::filesystem::path python_executable;
  SiteImport site_import = SiteImport::no;
};

class Runtime final : public PythonFrontend {
public:
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime() override;
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // PythonFrontend. Errors: `python.unavailable` when the interpreter cannot start (reported the
  // same way on every later call), `python.exception` when the helper itself fails.
  Expected<ReferenceAnalysis> analyze_reference(std::string_view source) override;
  Expected<std::optional<PythonSyntaxError>> check_expression(std::string_view source) override;
  // Imports `symtable` on first use.
  Expected<SourceStructure> analyze_structure(std::string_view source) override;
  // Reads the package's modules (cached for the life of the process while their size and mtime
  // stay the same); imports `symtable`, `importlib.machinery` and `site`, never flashinfer.
  Expected<HelperResolution> resolve_helpers(const HelperQuery& query) override;
  // When the interpreter has started: what os.fork() does around fork() (PyOS_BeforeFork,
  // PyOS_AfterFork_Parent / PyOS_AfterFork_Child). Nothing otherwise: a child then starts its own
  // interpreter on first use.
  // "CPython " and Py_GetVersion() of the linked interpreter (known before it starts).
  std::string identity() const override;
  void prepare_fork() override;
  void after_fork(ForkSide side) override;

  // True once the interpreter has started successfully.
  bool started() const;

  // How the helper was loaded; nullopt until the interpreter has started.
  std::optional<HelperLoad> helper_load() const;

  // The interpreter path this runtime uses (after applying $FIB_PYTHON).
  std::filesystem::path executable() const;

  // The Python interpreter chosen at build time.
  static std::filesystem::path build_time_executable();

private:
  struct Impl;
  // Starts the interpreter on first use; the error is remembered.
  Expected<Impl*> ensure_started();

  RuntimeOptions m_options;
  std::unique_ptr<Impl> m_impl;
  std::optional<Diagnostic> m_start_error;
};

} // namespace fib::python
