#pragma once
// Python-exact checks of a definition, through the Python front-end (python_frontend.hpp): the
// grammar is CPython's own.

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>
#include <fib/model/python_frontend.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// What to do about `run`'s arity (fib's own check, not the old tool's schema).
enum class ArityCheck { yes, no };

// Runs the Python-exact checks of a definition: the reference parses as a module and has a
// top-level `def run` (old-tool wording), `run` can take len(inputs) positional arguments
// (`definition.run.arity`, when `arity` is yes), and each constraint parses as an expression.
// Returns the environment diagnostic when Python could not be used (nothing is reported then).
std::optional<Diagnostic> check_definition_python(const Definition& definition,
                                                  const JsonDocument& document,
                                                  PythonFrontend& python, ArityCheck arity,
                                                  DiagnosticSink& sink);

} // namespace fib
