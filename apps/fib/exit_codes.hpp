#pragma once
// fib's exit statuses (docs/cli.md).

namespace fib::app {

inline constexpr int k_exit_ok = 0;          // clean, or warnings only
inline constexpr int k_exit_findings = 1;    // errors in the data (or warnings under --strict)
inline constexpr int k_exit_usage = 2;       // bad command line
inline constexpr int k_exit_environment = 3; // I/O or environment (unreadable file, no Python)
inline constexpr int k_exit_internal = 70;   // a bug in fib

} // namespace fib::app
