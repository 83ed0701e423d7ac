#pragma once
// The structure of a Python module as CPython's own parser and `symtable` see it: what `fib
// normalize` needs to rewrite a reference safely (never with regular expressions). Reached through
// an interface so that fib_core stays free of Python: fib::python::Runtime implements it.

#include <fib/base/expected.hpp>
#include <fib/model/python_checks.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

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

class SourceAnalyzer {
public:
  virtual ~SourceAnalyzer() = default;
  // Parses `source` as a module and describes it. The error is an environment diagnostic
  // (`python.unavailable`, `python.exception`) when the analysis itself could not run; a source
  // that does not parse is a value with `syntax_error` set.
  virtual Expected<SourceStructure> analyze_structure(std::string_view source) = 0;
};

} // namespace fib
