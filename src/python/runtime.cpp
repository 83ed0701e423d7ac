#include "fib/python/runtime.hpp"

#include <fib/base/codes.hpp>

#include "python_helper_code.hpp"
#include "python_helper_source.hpp"
#include "unavailable.hpp"

#include <fmt/format.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdlib>
#include <system_error>
#include <unistd.h>

namespace pyb = pybind11;

namespace fib::python {
namespace {

using detail::unavailable;

std::atomic<bool> g_interpreter_claimed{false};

PythonSyntaxError to_syntax_error(const pyb::tuple& result) {
  PythonSyntaxError error;
  error.text = result[1].cast<std::string>();
  error.message = result[2].cast<std::string>();
  error.line = result[3].cast<int>();
  error.column = result[4].cast<int>();
  return error;
}

// Runs the helper in `scope`: its code object compiled at build time when this interpreter can
// load it (the same bytecode magic number, not optimising: the code was compiled unoptimised),
// else its source, compiled here the same way (file name "<string>", no inherited flags), so that
// both give the same line numbers in a traceback. A failure of the first way falls back to the
// second.
HelperLoad run_helper(pyb::dict& scope) {
  const std::string_view compiled = fib::embedded::python_helper_code();
  constexpr std::size_t k_magic_size = 4;
  const pyb::module_ builtins = pyb::module_::import("builtins");
  if (compiled.size() > k_magic_size) {
    try {
      const pyb::module_ sys = pyb::module_::import("sys");
      const pyb::object modules = sys.attr("modules");
      const pyb::bytes magic = modules["_frozen_importlib_external"].attr("MAGIC_NUMBER");
      const bool same_magic = std::string_view(magic) == compiled.substr(0, k_magic_size);
      if (same_magic && sys.attr("flags").attr("optimize").cast<int>() == 0) {
        const pyb::bytes marshalled(compiled.data() + k_magic_size, compiled.size() - k_magic_size);
        const pyb::object code = pyb::module_::import("marshal").attr("loads")(marshalled);
        builtins.attr("exec")(code, scope);
        return HelperLoad::precompiled;
      }
    } catch (const pyb::error_already_set&) {
      // Not loadable here after all: the source is.
    }
  }
  const std::string_view helper = fib::embedded::python_helper_source();
  const pyb::object code =
      builtins.attr("compile")(pyb::str(helper.data(), helper.size()), "<string>", "exec", 0, true);
  builtins.attr("exec")(code, scope);
  return HelperLoad::from_source;
}

Diagnostic python_exception(const std::exception& e) {
  Diagnostic d = make_diagnostic(codes::k_python_exception,
                                 fmt::format("the embedded Python check failed: {}", e.what()));
  return d;
}

} // namespace

struct Runtime::Impl {
  // Declared first so it is destroyed last: every Python object below dies before the interpreter.
  pyb::scoped_interpreter guard;
  pyb::object analyze;
  pyb::object check_expression;
  pyb::object analyze_structure;
  pyb::object resolve_helpers;
  HelperLoad helper_load = HelperLoad::from_source;

  explicit Impl(PyConfig* config) : guard(config, 0, nullptr, false) {}
};

Runtime::Runtime(RuntimeOptions options) : m_options(std::move(options)) {
  if (m_options.python_executable.empty()) {
    const char* env = std::getenv("FIB_PYTHON");
    m_options.python_executable =
        env != nullptr && *env != '\0' ? std::filesystem::path(env) : build_time_executable();
  }
}

Runtime::~Runtime() = default;

std::filesystem::path Runtime::build_time_executable() {
  return FIB_PYTHON_EXECUTABLE;
}

std::filesystem::path Runtime::executable() const {
  return m_options.python_executable;
}

bool Runtime::started() const {
  return m_impl != nullptr;
}

std::optional<HelperLoad> Runtime::helper_load() const {
  if (m_impl == nullptr) {
    return std::nullopt;
  }
  return m_impl->helper_load;
}

Expected<Runtime::Impl*> Runtime::ensure_started() {
  if (m_impl) {
    return m_impl.get();
  }
  if (m_start_error) {
    return unexpected(*m_start_error);
  }
  const auto fail = [&](Diagnostic d) -> Expected<Impl*> {
    m_start_error = d;
    return unexpected(std::move(d));
  };
  const std::filesystem::path& exe = m_options.python_executable;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(exe, ec) || ::access(exe.c_str(), X_OK) != 0) {
    return fail(unavailable(
        fmt::format("cannot start the embedded Python: '{}' is not an executable file",
                    exe.string()),
        "set FIB_PYTHON to a Python 3 interpreter (the one that can `import torch`), e.g. "
        "/usr/bin/python3"));
  }
  if (g_interpreter_claimed.exchange(true)) {
    return fail(unavailable("cannot start the embedded Python: another fib::python::Runtime "
                            "already owns the interpreter of this process"));
  }
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.isolated = 0;
  config.use_environment = 1;
  config.user_site_directory = 0;
  config.install_signal_handlers = 0;
  config.site_import = m_options.site_import == SiteImport::yes ? 1 : 0;
  config.parse_argv = 0;
  PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, exe.c_str());
  if (PyStatus_Exception(status)) {
    PyConfig_Clear(&config);
    g_interpreter_claimed = false;
    return fail(unavailable("cannot start the embedded Python: invalid interpreter path"));
  }
  try {
    // pybind11 consumes (clears) the config.
    auto impl = std::make_unique<Impl>(&config);
    pyb::dict scope;
    scope["__builtins__"] = pyb::module_::import("builtins");
    // The helper (src/python/helper.py) parses with CPython's compiler in AST-only mode and
    // never imports torch.
    impl->helper_load = run_helper(scope);
    impl->analyze = scope["analyze_reference"];
    impl->check_expression = scope["check_expression"];
    impl->analyze_structure = scope["analyze_structure"];
    impl->resolve_helpers = scope["resolve_helpers"];
    m_impl = std::move(impl);
  } catch (const std::exception& e) {
    return fail(unavailable(
        fmt::format("cannot start the embedded Python from '{}': {}", exe.string(), e.what()),
        "set FIB_PYTHON to a working Python 3 interpreter"));
  }
  return m_impl.get();
}

std::string Runtime::identity() const {
  return std::string("CPython ") + Py_GetVersion();
}

void Runtime::prepare_fork() {
  if (m_impl) {
    PyOS_BeforeFork();
  }
}

void Runtime::after_fork(ForkSide side) {
  if (!m_impl) {
    return;
  }
  if (side == ForkSide::parent) {
    PyOS_AfterFork_Parent();
  } else {
    PyOS_AfterFork_Child();
  }
}

Expected<ReferenceAnalysis> Runtime::analyze_reference(std::string_view source) {
  FIB_TRY_ASSIGN(Impl* const impl, ensure_started());
  try {
    const pyb::tuple result = impl->analyze(pyb::str(source.data(), source.size()));
    ReferenceAnalysis analysis;
    const auto tag = result[0].cast<std::string>();
    if (tag == "syntax") {
      analysis.syntax_error = to_syntax_error(result);
    } else if (tag == "run") {
      RunSignature run;
      run.positional_total = result[1].cast<int>();
      run.positional_required = result[2].cast<int>();
      run.has_var_positional = result[3].cast<bool>();
      run.keyword_only_required = result[4].cast<int>();
      run.line = result[5].cast<int>();
      run.positional_names = result[6].cast<std::vector<std::string>>();
      analysis.run = std::move(run);
    }
    return analysis;
  } catch (const std::exception& e) {
    return unexpected(python_exception(e));
  }
}

Expected<std::optional<PythonSyntaxError>> Runtime::check_expression(std::string_view source) {
  FIB_TRY_ASSIGN(Impl* const impl, ensure_started());
  try {
    const pyb::object result = impl->check_expression(pyb::str(source.data(), source.size()));
    if (result.is_none()) {
      return std::optional<PythonSyntaxError>{};
    }
    return std::optional<PythonSyntaxError>{to_syntax_error(result.cast<pyb::tuple>())};
  } catch (const std::exception& e) {
    return unexpected(python_exception(e));
  }
}

Expected<SourceStructure> Runtime::analyze_structure(std::string_view source) {
  FIB_TRY_ASSIGN(Impl* const impl, ensure_started());
  try {
    const pyb::tuple result = impl->analyze_structure(pyb::str(source.data(), source.size()));
    SourceStructure structure;
    if (result[0].cast<std::string>() == "syntax") {
      structure.syntax_error = to_syntax_error(result);
      return structure;
    }
    for (const auto item : result[1].cast<pyb::list>()) {
      const auto fn = item.cast<pyb::tuple>();
      PythonFunction function;
      function.name = fn[0].cast<std::string>();
      function.line = fn[1].cast<int>();
      function.end_line = fn[2].cast<int>();
      function.is_async = fn[3].cast<bool>();
      for (const auto p : fn[4].cast<pyb::list>()) {
        const auto param = p.cast<pyb::tuple>();
        PythonParameter parameter;
        parameter.name = param[0].cast<std::string>();
        const int kind = param[1].cast<int>();
        parameter.kind = kind == 0   ? ParameterKind::positional_only
                         : kind == 1 ? ParameterKind::positional_or_keyword
                                     : ParameterKind::keyword_only;
        parameter.has_default = param[2].cast<bool>() ? HasDefault::yes : HasDefault::no;
        function.parameters.push_back(std::move(parameter));
      }
      function.has_var_positional = fn[5].cast<bool>();
      function.has_var_keyword = fn[6].cast<bool>();
      const int arity = fn[7].cast<int>();
      if (arity >= 0) {
        function.return_arity = arity;
      }
      structure.functions.push_back(std::move(function));
    }
    structure.import_insert_line = result[2].cast<int>();
    structure.unresolved_names = result[3].cast<std::vector<std::string>>();
    return structure;
  } catch (const std::exception& e) {
    return unexpected(python_exception(e));
  }
}

Expected<HelperResolution> Runtime::resolve_helpers(const HelperQuery& query) {
  FIB_TRY_ASSIGN(Impl* const impl, ensure_started());
  try {
    const pyb::tuple result =
        impl->resolve_helpers(pyb::str(query.reference.data(), query.reference.size()), query.names,
                              query.flashinfer_root.string());
    HelperResolution resolution;
    resolution.package_directory = result[0].cast<std::string>();
    if (!result[1].is_none()) {
      resolution.reference = result[1].cast<std::string>();
    }
    resolution.inserted_lines = result[2].cast<int>();
    for (const auto item : result[3].cast<pyb::list>()) {
      const auto source = item.cast<pyb::tuple>();
      resolution.sources.push_back(
          {source[0].cast<std::string>(), source[1].cast<std::vector<std::string>>()});
    }
    resolution.imports = result[4].cast<std::vector<std::string>>();
    for (const auto item : result[5].cast<pyb::list>()) {
      const auto miss = item.cast<pyb::tuple>();
      resolution.missing.push_back({miss[0].cast<std::string>(), miss[1].cast<std::string>()});
    }
    return resolution;
  } catch (const std::exception& e) {
    return unexpected(python_exception(e));
  }
}

} // namespace fib::python
