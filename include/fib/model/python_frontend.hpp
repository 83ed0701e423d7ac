#pragma once
// The Python front-end: everything fib asks CPython about a piece of Python text, behind one
// interface so that fib_core stays free of Python. fib::python::Runtime (fib_python) implements it
// with the embedded interpreter; NoPython stands for "no interpreter in this run"; tests may
// substitute their own. Every entry point that needs Python takes one `PythonFrontend&`.
//
// The grammar, SyntaxError texts and symbol tables are CPython's own (`ast`/`_ast`, `symtable`);
// the text is parsed, never executed.

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// A SyntaxError (or another parse failure such as null bytes) as CPython reports it.
struct PythonSyntaxError {
  std::string text;    // str(exception), e.g. "invalid syntax (<unknown>, line 1)"
  std::string message; // exception.msg, e.g. "invalid syntax"
  int line = 0;        // 1-based line inside the parsed text; 0 when unknown
  int column = 0;      // 1-based column; 0 when unknown
};

// The parameters of the last top-level plain `def run` of a reference.
struct RunSignature {
  int positional_total = 0;    // positional-only + positional-or-keyword parameters
  int positional_required = 0; // of those, how many have no default
  bool has_var_positional = false;
  int keyword_only_required = 0;
  int line = 0; // line of the `def`
  std::vector<std::string> positional_names;

  // Whether calling run with exactly `count` positional arguments binds (inspect.Signature.bind).
  bool accepts_positional(int count) const;
};

struct ReferenceAnalysis {
  std::optional<PythonSyntaxError> syntax_error; // set when the module does not parse
  std::optional<RunSignature> run;               // set when a top-level plain `def run` exists
};

enum class ParameterKind { positional_only, positional_or_keyword, keyword_only };
enum class HasDefault { no, yes };

struct PythonParameter {
  std::string name;
  ParameterKind kind = ParameterKind::positional_or_keyword;
  HasDefault has_default = HasDefault::no;
};

// A top-level `def` (or `async def`).
struct PythonFunction {
  std::string name;
  int line = 0;     // 1-based line of the `def` keyword (decorators come before it)
  int end_line = 0; // last line of the body
  bool is_async = false;
  std::vector<PythonParameter> parameters; // in declaration order; *args/**kwargs not included
  bool has_var_positional = false;
  bool has_var_keyword = false;
  // How many values every `return` of the function gives, when static analysis can tell: a tuple
  // or list literal of n elements gives n, `return` / `return None` / falling off the end 0, a call
  // of another top-level def of the module that def's arity, a method call or other expression 1
  // (except methods that return tuples, such as `split` or `max`), a name bound only to one of
  // those that arity. nullopt when the returns disagree or cannot be judged.
  std::optional<int> return_arity;
};

struct SourceStructure {
  std::optional<PythonSyntaxError> syntax_error; // set when the module does not parse
  std::vector<PythonFunction> functions;         // top-level defs, in source order
  // Imports may be inserted after this line: after the module docstring and the leading
  // `from __future__` imports (0: at the very top).
  int import_insert_line = 0;
  // Names read somewhere in the module (at any depth) that nothing in the module binds and that
  // are not builtins, sorted: calls of helpers that were not inlined, missing imports.
  std::vector<std::string> unresolved_names;
};

// What `fib normalize` asks about the names a reference reads but never binds: where FlashInfer's
// trace templates define them.
struct HelperQuery {
  std::string_view reference;     // the reference as it stands (it parses)
  std::vector<std::string> names; // names it reads and binds nowhere, sorted
  // The directory holding the `flashinfer` package directory; empty: the installed package, found
  // on the interpreter's import path and site-packages without importing it.
  std::filesystem::path flashinfer_root;
};

// The helpers of one source file that were inlined.
struct InlinedHelpers {
  std::string file;               // relative to the package's parent, e.g. flashinfer/trace/x.py
  std::vector<std::string> names; // the names its inlined statements bind, in source order
};

// A name that stays unresolved, and why (not defined in any template module, needs a compiled
// flashinfer module, bound only inside a top-level `if`, …).
struct UnresolvedHelper {
  std::string name;
  std::string reason;
};

struct HelperResolution {
  // Where the flashinfer package is; "" when none was found, or it has no trace/templates.
  std::string package_directory;
  // The reference with the helpers placed after its docstring and leading imports (and a comment
  // naming their files); nullopt when nothing was inlined.
  std::optional<std::string> reference;
  int inserted_lines = 0;                // lines the helpers added above the reference's own code
  std::vector<InlinedHelpers> sources;   // in the order their statements were placed
  std::vector<std::string> imports;      // import lines added with them, e.g. "import math"
  std::vector<UnresolvedHelper> missing; // in the order of HelperQuery::names
};

// Which side of a fork() a process is on.
enum class ForkSide { parent, child };

class PythonFrontend {
public:
  virtual ~PythonFrontend() = default;

  // fork() support, for callers that run checks in forked child processes (an interpreter runs
  // Python on one thread at a time, so parallel checks need processes): prepare_fork() in the
  // parent just before fork(), then after_fork() in each of the two processes, on the thread that
  // makes the checks. The child may then go on making checks with its copy. The defaults do
  // nothing (a front-end without process state).
  virtual void prepare_fork() {}
  virtual void after_fork(ForkSide /*side*/) {}

  // What gives this front-end's answers, precisely enough that equal identities give equal
  // answers to equal questions (e.g. the CPython version string): it keys cached answers. Empty
  // (the default): its answers must not be cached.
  virtual std::string identity() const { return {}; }

  // Parses `source` as a module: its syntax error, or its last top-level plain `def run`.
  virtual Expected<ReferenceAnalysis> analyze_reference(std::string_view source) = 0;

  // Parses `source` as one expression; the value is nullopt when it parses.
  virtual Expected<std::optional<PythonSyntaxError>> check_expression(std::string_view source) = 0;

  // Parses `source` as a module and describes its structure (what `fib normalize` needs to rewrite
  // a reference safely); a source that does not parse is a value with `syntax_error` set.
  virtual Expected<SourceStructure> analyze_structure(std::string_view source) = 0;

  // Looks the query's names up in FlashInfer's trace template modules (flashinfer/trace/templates/
  // *.py, and what they import from inside the package), by parsing the source, never importing
  // it; inlines the top-level definitions, constants and imports they need, transitively. Names
  // bound by the reference itself are never inlined or shadowed. The result is the same for the
  // same inputs and package files.
  virtual Expected<HelperResolution> resolve_helpers(const HelperQuery& query) = 0;

  // Each call's error is an environment diagnostic (`python.unavailable`, `python.exception`) when
  // the question itself could not be asked; callers report it once and skip the Python checks.
};

// The `python.unavailable` diagnostic of a run without an interpreter.
Diagnostic no_python_runtime();

// The front-end of a run without Python: every call fails with no_python_runtime().
class NoPython final : public PythonFrontend {
public:
  Expected<ReferenceAnalysis> analyze_reference(std::string_view source) override;
  Expected<std::optional<PythonSyntaxError>> check_expression(std::string_view source) override;
  Expected<SourceStructure> analyze_structure(std::string_view source) override;
  Expected<HelperResolution> resolve_helpers(const HelperQuery& query) override;
};

} // namespace fib
