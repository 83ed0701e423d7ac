#include "exit_status.hpp"

namespace fib::app {

int exit_status(const DiagnosticCounts& counts, Strictness strictness, Outcome outcome) {
  if (counts.environment_errors > 0) {
    return k_exit_environment;
  }
  if (counts.usage_errors > 0) {
    return k_exit_usage;
  }
  const bool findings = counts.errors > 0 ||
                        (strictness == Strictness::strict && counts.warnings > 0) ||
                        outcome == Outcome::failed;
  return findings ? k_exit_findings : k_exit_ok;
}

int exit_status(const std::vector<Diagnostic>& diagnostics, Strictness strictness,
                Outcome outcome) {
  return exit_status(count_diagnostics(diagnostics), strictness, outcome);
}

} // namespace fib::app
