#pragma once
// Whether a definition runs (docs/execution.md, "Runnable verdicts"): one verdict of four, from
// what blocks it before any run (errors of its validation, open questions of normalize) and from
// its smoke run (ReferenceRunner::smoke_run). The one home of this classification: normalize,
// stage and dump count and print what it says.

#include <fib/base/diagnostic.hpp>
#include <fib/base/enum_names.hpp>
#include <fib/io/json_io.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

class ReferenceRunner;

// --- Interface ---

enum class Runnability {
  runnable,          // valid, and its smoke run passed
  not_runnable_here, // valid, but this machine cannot run it (float8, CUDA, --max-bytes, fp4, …)
  fails_when_run,    // valid, and its smoke run failed (build, exception, outputs, timeout, crash)
  needs_decision,    // invalid, or an open normalize question: nothing was run
};

// The words of the per-file lines and summaries.
template <> struct EnumNames<Runnability> {
  static constexpr std::array k_table = std::to_array<EnumName<Runnability>>({
      {Runnability::runnable, "runnable"},
      {Runnability::not_runnable_here, "not runnable here"},
      {Runnability::fails_when_run, "fails when run"},
      {Runnability::needs_decision, "needs a decision"},
  });
};

// "runnable", "not runnable here", "fails when run", "needs a decision".
inline std::string_view to_string(Runnability runnability) {
  return enum_name(runnability);
}

struct RunnableVerdict {
  Runnability runnability = Runnability::needs_decision;
  std::string code;   // the code of the diagnostic that decided it (reference.ok when runnable)
  std::string reason; // one line, why (empty when runnable)
};

// The verdict, in this order:
//   needs a decision   `blocking` is not empty: its first entry (code, first line) is the reason;
//   not runnable here  an environment error in `smoke` (worker.unavailable, worker.protocol: the
//                      worker could not be used), or a `smoke.skipped` note (its reason without
//                      the "smoke run skipped: " prefix);
//   fails when run     any other error in `smoke` (reference.build-failed, smoke.exception,
//                      smoke.missing-helper, smoke.output-*, smoke.timeout, worker.crashed):
//                      the first one;
//   runnable           a `reference.ok` note of a smoke run ("smoke run: ok …") and no error;
//   not runnable here  otherwise (`smoke` says nothing of a smoke run: "the smoke run did not
//   run").
// `blocking` is what the caller knows stops a run (see blocking_* of normalize and stage).
RunnableVerdict classify_runnable(const std::vector<Diagnostic>& blocking,
                                  const std::vector<Diagnostic>& smoke);

// "runnable", "not runnable here: REASON", "fails when run: CODE: REASON",
// "needs a decision: CODE: REASON".
std::string render_verdict(const RunnableVerdict& verdict);

struct RunnableCounts {
  std::size_t runnable = 0;
  std::size_t not_runnable_here = 0;
  std::size_t fails_when_run = 0;
  std::size_t needs_decision = 0;

  void add(Runnability runnability);
  std::size_t total() const;
};

// "N runnable, N not runnable here, N fail when run, N need a decision" (verbs agree with N).
std::string render_counts(const RunnableCounts& counts);

// {"verdict": "runnable"|…, "code", "reason"} and {"runnable", "not_runnable_here",
// "fails_when_run", "needs_decision"} for JSON reports.
Json to_json(const RunnableVerdict& verdict);
Json to_json(const RunnableCounts& counts);

// What one smoke check found: the verdict, and the diagnostics of the run (the build's and the
// smoke run's, file and pointer as the worker gave them) for the caller to print and count.
struct RunnableCheck {
  RunnableVerdict verdict;
  std::vector<Diagnostic> diagnostics;
};

// Smoke-runs the definition `text` (canonical JSON of a definition that validated) through
// `runner`, with its `init` key when it has one, and classifies the run. The diagnostics carry
// `file` and the lines of `text`. A text that is no valid definition for the model's checks
// (parse_definition reports an error) needs a decision, with that error, and nothing runs; a text
// that is no JSON fails when run with the parse error (neither happens to a validated text).
RunnableCheck smoke_check_text(std::string_view text, const std::filesystem::path& file,
                               ReferenceRunner& runner);

} // namespace fib
