#pragma once
// The reference-execution options of `validate`, `normalize`, `stage` and `dump` (--smoke,
// --device, --timeout, --max-bytes, --memory-limit, --unsafe-no-sandbox): one definition of
// them, their help, their cross-checks and their mapping to ReferenceRunnerOptions.

#include <fib/base/diagnostic.hpp>
#include <fib/exec/runnable.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/stage/runnable.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fib::app {

// --- Interface ---

struct SmokeFlags {
  bool smoke = false;
  std::string device = "cpu";
  double timeout_seconds = 60;
  std::uintmax_t max_bytes = k_default_smoke_max_bytes;
  std::uintmax_t memory_limit = k_default_worker_address_space;
  std::uint64_t scratch_limit = k_default_scratch_bytes;
  bool unsafe_no_sandbox = false;
};

// What the command calls its per-reference time limit: `--timeout`, or `--smoke-timeout` where
// --timeout already means something else (fib dump: the traced command's).
enum class TimeoutFlag { timeout, smoke_timeout };

// Adds --smoke (with `smoke_help`), --device, the timeout flag, --max-bytes, --memory-limit and
// --unsafe-no-sandbox to `sub`, in that order, bound to `flags`.
void add_smoke_flags(CLI::App* sub, SmokeFlags& flags, const std::string& smoke_help,
                     TimeoutFlag timeout = TimeoutFlag::timeout);

// Without --smoke, any of the others is a usage error ("--device, --max-bytes, … need --smoke")
// (for commands where only --smoke runs references; validate has its own rule).
std::optional<Diagnostic> check_smoke_flags(const CLI::App* sub, const SmokeFlags& flags,
                                            TimeoutFlag timeout = TimeoutFlag::timeout);

// The runner options of the flags. Prints the warning of --unsafe-no-sandbox to stderr. With
// --device cuda and no --memory-limit the worker has no address-space limit (CUDA reserves far
// more address space than memory).
ReferenceRunnerOptions smoke_runner_options(const CLI::App* sub, const SmokeFlags& flags);

// The name of the timeout flag.
std::string_view timeout_flag_name(TimeoutFlag timeout);

// --- What a smoke check found ---

enum class SmokeNotes { shown, hidden };

// Prints the diagnostics of smoke checks to stderr, one line each (notes only when
// SmokeNotes::shown; a skip, which says why a definition is not runnable here, always). A worker
// or sandbox that cannot be used (an environment error: the same for every file) is printed at
// the first file only, as fib validate does; the verdict of every file still names it.
class SmokePrinter {
public:
  explicit SmokePrinter(SmokeNotes notes) : m_notes(notes) {}
  void print(const RunnableCheck& check);

private:
  SmokeNotes m_notes;
  bool m_environment_printed = false;
};

// "  runnable", "  not runnable here: …" to append to a per-file line; "" for no check.
std::string verdict_suffix(const std::optional<RunnableCheck>& check);

// The counts of every smoke run's diagnostics (nothing without --smoke).
DiagnosticCounts count_smoke_diagnostics(const std::optional<StagedRunnable>& runnable);

} // namespace fib::app
