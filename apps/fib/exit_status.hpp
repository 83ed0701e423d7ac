#pragma once
// The one mapping from what a command reported to fib's exit status (docs/cli.md):
//   3  some error means fib could not do its job (environment: I/O, Python, the worker)
//   2  some error is about the command line (usage)
//   1  findings: an error in the data, a warning under --strict, or a command-specific outcome
//      that counts as failure (normalize --check with changes to make, a failed evaluation)
//   0  otherwise
// Every run_X ends with `return exit_status(...)`; no command does its own arithmetic.

#include <fib/base/diagnostic.hpp>

#include <vector>

namespace fib::app {

inline constexpr int k_exit_ok = 0;          // clean, or warnings only
inline constexpr int k_exit_findings = 1;    // errors in the data (or warnings under --strict)
inline constexpr int k_exit_usage = 2;       // bad command line
inline constexpr int k_exit_environment = 3; // I/O or environment (unreadable file, no Python)
inline constexpr int k_exit_internal = 70;   // a bug in fib

// --strict: warnings count as findings.
enum class Strictness { normal, strict };

// A command's own verdict beyond its diagnostics.
enum class Outcome { clean, failed };

// The exit status for `counts` (environment before usage before findings).
int exit_status(const DiagnosticCounts& counts, Strictness strictness = Strictness::normal,
                Outcome outcome = Outcome::clean);

// The same, counting `diagnostics` first.
int exit_status(const std::vector<Diagnostic>& diagnostics,
                Strictness strictness = Strictness::normal, Outcome outcome = Outcome::clean);

} // namespace fib::app
