#pragma once
// `fib run`: evaluates a dataset's solutions against their definitions' references on every
// workload, in the reference worker (docs/run.md), and appends the traces to
// `traces/<author>/<op_type>/<definition>.jsonl` in the dataset's own format.

#include <fib/base/diagnostic.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/io/json_io.hpp>
#include <fib/util/atomic_file.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

struct RunOptions {
  std::filesystem::path dataset;
  std::vector<std::string> definitions; // empty: every definition with solutions
  std::vector<std::string> solutions;   // empty: every solution of those definitions
  EvaluateOptions evaluate;             // dataset_root is set from `dataset`
  DryRun dry_run = DryRun::no;          // yes: evaluate, print, write no trace
};

// One evaluation as it happened: the trace line (the dataset's Trace JSON) and where it goes.
struct RunEvaluation {
  std::string definition;
  std::string solution;
  std::string author;
  std::string workload_uuid;
  Json trace;                       // {"definition", "workload", "solution", "evaluation"}
  std::filesystem::path trace_file; // relative to the dataset root
};

struct RunResult {
  std::map<std::string, std::size_t> statuses; // evaluation status → count
  std::size_t evaluations = 0;
  std::vector<std::filesystem::path> trace_files; // written (relative to the dataset root)
  // The dataset, inputs, references, writes. The caller tells "could not run" (the dataset
  // unreadable, no worker, a failed write) from findings by their codes (count_diagnostics).
  std::vector<Diagnostic> diagnostics;
};

// Loads the dataset (as the old tool's TraceSet does), evaluates each selected solution on each
// workload of its definition (`on_evaluation` sees every result as it comes), and appends the
// traces of each (solution, definition) to its trace file with append_trace_lines
// (trace_append.hpp: atomic, never through a symbolic link, under the lock of the file's
// directory, so that concurrent runs keep each other's lines). Never throws.
RunResult run_solutions(const RunOptions& options, ReferenceRunner& runner,
                        const std::function<void(const RunEvaluation&)>& on_evaluation);

} // namespace fib
