#include "fib/model/python_checks.hpp"

#include "io/schema_reader.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fib {
namespace {

// The source line `line` (1-based) of `text`, trimmed to 100 characters.
std::string source_line(std::string_view text, int line) {
  std::size_t start = 0;
  for (int i = 1; i < line; ++i) {
    const auto next = text.find('\n', start);
    if (next == std::string_view::npos) {
      return {};
    }
    start = next + 1;
  }
  std::string out(text.substr(start, text.find('\n', start) - start));
  if (out.size() > 100) {
    out.resize(97);
    out += "...";
  }
  return out;
}

std::string syntax_hint(const PythonSyntaxError& error, std::string_view source,
                        std::string_view what) {
  if (error.line <= 0) {
    return {};
  }
  const std::string column =
      error.column > 0 ? fmt::format(", column {}", error.column) : std::string{};
  return fmt::format("at line {}{} of the {}: {}", error.line, column, what,
                     source_line(source, error.line));
}

std::string describe_signature(const RunSignature& run) {
  std::string text = fmt::format("run({}", fmt::join(run.positional_names, ", "));
  if (run.has_var_positional) {
    text += run.positional_names.empty() ? "*args" : ", *args";
  }
  return text + ")";
}

} // namespace

Diagnostic no_python_runtime() {
  return make_diagnostic(codes::k_python_unavailable,
                         "Python-exact checks were not run: no Python runtime");
}

Expected<ReferenceAnalysis> NoPython::analyze_reference(std::string_view /*source*/) {
  return unexpected(no_python_runtime());
}

Expected<std::optional<PythonSyntaxError>> NoPython::check_expression(std::string_view /*source*/) {
  return unexpected(no_python_runtime());
}

Expected<SourceStructure> NoPython::analyze_structure(std::string_view /*source*/) {
  return unexpected(no_python_runtime());
}

Expected<HelperResolution> NoPython::resolve_helpers(const HelperQuery& /*query*/) {
  return unexpected(no_python_runtime());
}

bool RunSignature::accepts_positional(int count) const {
  if (keyword_only_required > 0 || count < positional_required) {
    return false;
  }
  return count <= positional_total || has_var_positional;
}

std::optional<Diagnostic> check_definition_python(const Definition& definition,
                                                  const JsonDocument& document,
                                                  PythonFrontend& python, ArityCheck arity,
                                                  DiagnosticSink& sink) {
  detail::Reader r(document, sink);
  if (!definition.reference.empty()) {
    auto analysis = python.analyze_reference(definition.reference);
    if (!analysis) {
      return analysis.error();
    }
    if (analysis->syntax_error) {
      const PythonSyntaxError& error = *analysis->syntax_error;
      r.report(codes::k_reference_syntax, "/reference",
               fmt::format("Reference must be valid Python code: {}", error.text),
               syntax_hint(error, definition.reference, "reference"));
    } else if (!analysis->run) {
      r.report(codes::k_reference_no_run, "/reference",
               "Reference must define a top-level function named 'run'",
               "the trace dumper names it `_<kernel>_reference`; `fib normalize` renames it; "
               "async, nested, lambda or class `run` do not count");
    } else if (arity == ArityCheck::yes) {
      const int inputs = static_cast<int>(definition.inputs.size());
      if (!analysis->run->accepts_positional(inputs)) {
        std::vector<std::string> names;
        for (const auto& entry : definition.inputs) {
          names.push_back(entry.first);
        }
        r.report(codes::k_run_arity, "/reference",
                 fmt::format("{} cannot be called with the definition's {} input{} as positional "
                             "arguments ({})",
                             describe_signature(*analysis->run), inputs, inputs == 1 ? "" : "s",
                             fmt::join(names, ", ")),
                 fmt::format("`run` is defined on line {} of the reference; its positional "
                             "parameters must take exactly the inputs, in order (outputs are "
                             "returned)",
                             analysis->run->line));
      }
    }
  }
  for (std::size_t i = 0; i < definition.constraints.size(); ++i) {
    const std::string& constraint = definition.constraints[i];
    if (constraint.empty()) {
      continue;
    }
    auto result = python.check_expression(constraint);
    if (!result) {
      return result.error();
    }
    if (*result) {
      r.report(codes::k_constraint_syntax, pointer_append("/constraints", i),
               fmt::format("Constraints must be valid Python expressions: {}", (*result)->text),
               syntax_hint(**result, constraint, "constraint"));
    }
  }
  return std::nullopt;
}

} // namespace fib
