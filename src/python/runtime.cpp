#include "fib/python/runtime.hpp"

#include <fib/base/codes.hpp>

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

// The helper run inside the interpreter. It parses with CPython's own compiler in AST-only mode,
// exactly what ast.parse() does, but through the built-in `_ast` module: importing `ast` (and
// with it enum, re, …) would cost more than all the checks. It never imports torch.
constexpr const char* k_helper_source = R"PY(
import _ast

_ONLY_AST = _ast.PyCF_ONLY_AST
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)

def _syntax(e):
    if isinstance(e, SyntaxError):
        return ('syntax', str(e), e.msg or '', e.lineno or 0, e.offset or 0)
    return ('syntax', str(e), str(e), 0, 0)

def analyze_reference(src):
    try:
        tree = compile(src, '<unknown>', 'exec', _ONLY_AST)
    except _PARSE_ERRORS as e:
        return _syntax(e)
    run = None
    for node in tree.body:
        if isinstance(node, _ast.FunctionDef) and node.name == 'run':
            run = node
    if run is None:
        return ('norun',)
    a = run.args
    positional = list(a.posonlyargs) + list(a.args)
    required = len(positional) - len(a.defaults)
    kwonly_required = sum(1 for d in a.kw_defaults if d is None)
    return ('run', len(positional), required, a.vararg is not None, kwonly_required,
            run.lineno, [p.arg for p in positional])

def check_expression(src):
    try:
        compile(src, '<unknown>', 'eval', _ONLY_AST)
    except _PARSE_ERRORS as e:
        return _syntax(e)
    return None

# --- structure analysis for `fib normalize` ---
_TUPLE_RETURNING = frozenset((
    'split', 'chunk', 'unbind', 'sort', 'topk', 'max', 'min', 'median', 'mode', 'kthvalue',
    'unique', 'tensor_split', 'var_mean', 'std_mean', 'frexp', 'slogdet', 'qr', 'svd', 'eig',
    'lu', 'aminmax', 'cummax', 'cummin', 'hsplit', 'vsplit', 'dsplit', 'meshgrid', 'broadcast_tensors'))

def _own_nodes(fn):
    # Nodes of a function body, not descending into nested functions, lambdas or classes.
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        for child in _children(node):
            if not isinstance(child, (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.Lambda, _ast.ClassDef)):
                stack.append(child)

def _children(node):
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _ast.AST):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, _ast.AST):
                    yield item

def _value_arity(value, fn, defs, depth):
    if value is None:
        return 0
    if isinstance(value, _ast.Constant) and value.value is None:
        return 0
    if isinstance(value, (_ast.Tuple, _ast.List)):
        if any(isinstance(e, _ast.Starred) for e in value.elts):
            return -1
        return len(value.elts)
    if isinstance(value, _ast.Call):
        func = value.func
        if isinstance(func, _ast.Name):
            target = defs.get(func.id)
            if target is not None and depth < 8:
                return _function_arity(target, defs, depth + 1)
            return -1
        if isinstance(func, _ast.Attribute):
            return -1 if func.attr in _TUPLE_RETURNING else 1
        return -1
    if isinstance(value, _ast.Name):
        assigned = [n.value for n in _own_nodes(fn) if isinstance(n, _ast.Assign)
                    and any(isinstance(t, _ast.Name) and t.id == value.id for t in n.targets)]
        if not assigned:
            return 1
        arities = {_value_arity(v, fn, defs, depth + 1) if depth < 8 else -1 for v in assigned}
        return arities.pop() if len(arities) == 1 else -1
    if isinstance(value, (_ast.IfExp, _ast.Starred, _ast.Await, _ast.Yield, _ast.YieldFrom)):
        return -1
    return 1

def _function_arity(fn, defs, depth=0):
    arities = set()
    falls_through = True
    for node in _own_nodes(fn):
        if isinstance(node, _ast.Return):
            arities.add(_value_arity(node.value, fn, defs, depth))
        elif isinstance(node, (_ast.Yield, _ast.YieldFrom)):
            return -1
    if fn.body and isinstance(fn.body[-1], (_ast.Return, _ast.Raise)):
        falls_through = False
    if falls_through:
        arities.add(0)
    return arities.pop() if len(arities) == 1 else -1

def _parameters(fn):
    a = fn.args
    positional = list(a.posonlyargs) + list(a.args)
    first_default = len(positional) - len(a.defaults)
    params = []
    for i, p in enumerate(positional):
        params.append((p.arg, 0 if i < len(a.posonlyargs) else 1, i >= first_default))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append((p.arg, 2, d is not None))
    return params, a.vararg is not None, a.kwarg is not None

def _unresolved(src):
    import symtable, builtins
    top = symtable.symtable(src, '<unknown>', 'exec')
    bound = {s.get_name() for s in top.get_symbols()
             if s.is_assigned() or s.is_imported() or s.is_namespace()}
    known = bound | set(dir(builtins)) | {'__name__', '__file__', '__doc__', '__builtins__',
                                          '__spec__', '__loader__', '__package__'}
    missing = set()
    for s in top.get_symbols():
        if s.is_referenced() and s.get_name() not in known:
            missing.add(s.get_name())
    stack = list(top.get_children())
    while stack:
        table = stack.pop()
        stack.extend(table.get_children())
        for s in table.get_symbols():
            if s.is_referenced() and s.is_global() and s.get_name() not in known:
                missing.add(s.get_name())
    return sorted(missing)

def analyze_structure(src):
    try:
        tree = compile(src, '<unknown>', 'exec', _ONLY_AST)
    except _PARSE_ERRORS as e:
        return _syntax(e)
    defs = {}
    functions = []
    for node in tree.body:
        if isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef)):
            defs[node.name] = node
    for node in tree.body:
        if isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef)):
            params, var_pos, var_kw = _parameters(node)
            functions.append((node.name, node.lineno, node.end_lineno or node.lineno,
                              isinstance(node, _ast.AsyncFunctionDef), params, var_pos, var_kw,
                              _function_arity(node, defs)))
    insert_line = 0
    body = tree.body
    i = 0
    if body and isinstance(body[0], _ast.Expr) and isinstance(body[0].value, _ast.Constant) \
            and isinstance(body[0].value.value, str):
        insert_line = body[0].end_lineno
        i = 1
    while i < len(body) and isinstance(body[i], _ast.ImportFrom) and body[i].module == '__future__':
        insert_line = body[i].end_lineno
        i += 1
    try:
        unresolved = _unresolved(src)
    except _PARSE_ERRORS as e:
        return _syntax(e)
    return ('ok', functions, insert_line, unresolved)
)PY";

std::atomic<bool> g_interpreter_claimed{false};

Diagnostic unavailable(std::string message, std::string hint = {}) {
  Diagnostic d = make_diagnostic(codes::k_python_unavailable, std::move(message));
  d.hint = std::move(hint);
  return d;
}

PythonSyntaxError to_syntax_error(const pyb::tuple& result) {
  PythonSyntaxError error;
  error.text = result[1].cast<std::string>();
  error.message = result[2].cast<std::string>();
  error.line = result[3].cast<int>();
  error.column = result[4].cast<int>();
  return error;
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
    pyb::exec(k_helper_source, scope);
    impl->analyze = scope["analyze_reference"];
    impl->check_expression = scope["check_expression"];
    impl->analyze_structure = scope["analyze_structure"];
    m_impl = std::move(impl);
  } catch (const std::exception& e) {
    return fail(unavailable(
        fmt::format("cannot start the embedded Python from '{}': {}", exe.string(), e.what()),
        "set FIB_PYTHON to a working Python 3 interpreter"));
  }
  return m_impl.get();
}

Expected<ReferenceAnalysis> Runtime::analyze_reference(std::string_view source) {
  auto impl = ensure_started();
  if (!impl) {
    return unexpected(impl.error());
  }
  try {
    const pyb::tuple result = (*impl)->analyze(pyb::str(source.data(), source.size()));
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
  auto impl = ensure_started();
  if (!impl) {
    return unexpected(impl.error());
  }
  try {
    const pyb::object result = (*impl)->check_expression(pyb::str(source.data(), source.size()));
    if (result.is_none()) {
      return std::optional<PythonSyntaxError>{};
    }
    return std::optional<PythonSyntaxError>{to_syntax_error(result.cast<pyb::tuple>())};
  } catch (const std::exception& e) {
    return unexpected(python_exception(e));
  }
}

Expected<SourceStructure> Runtime::analyze_structure(std::string_view source) {
  auto impl = ensure_started();
  if (!impl) {
    return unexpected(impl.error());
  }
  try {
    const pyb::tuple result = (*impl)->analyze_structure(pyb::str(source.data(), source.size()));
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

} // namespace fib::python
