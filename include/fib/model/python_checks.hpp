#pragma once
// Python-exact checks. The grammar is CPython's own (`ast`), reached through an interface so that
// fib_core stays free of Python: fib_python implements PythonChecker with an embedded interpreter,
// tests may substitute their own.

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>

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

class PythonChecker {
public:
  virtual ~PythonChecker() = default;
  // Parses `source` as a module. The error is an environment diagnostic (`python.unavailable`,
  // `python.exception`) when the check itself could not run.
  virtual Expected<ReferenceAnalysis> analyze_reference(std::string_view source) = 0;
  // Parses `source` as one expression; the value is nullopt when it parses.
  virtual Expected<std::optional<PythonSyntaxError>> check_expression(std::string_view source) = 0;
};

// The `python.unavailable` diagnostic for a run given no PythonChecker at all.
Diagnostic no_python_runtime();

// What to do about `run`'s arity (fib's own check, not the old tool's schema).
enum class ArityCheck { yes, no };

// Runs the Python-exact checks of a definition: the reference parses as a module and has a
// top-level `def run` (old-tool wording), `run` can take len(inputs) positional arguments
// (`definition.run.arity`, when `arity` is yes), and each constraint parses as an expression.
// Returns the environment diagnostic when Python could not be used (nothing is reported then).
std::optional<Diagnostic> check_definition_python(const Definition& definition,
                                                  const JsonDocument& document,
                                                  PythonChecker& python, ArityCheck arity,
                                                  DiagnosticSink& sink);

} // namespace fib
