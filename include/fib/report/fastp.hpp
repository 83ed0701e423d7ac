#pragma once
// `fib report fastp`: fast_p curves of a dataset (docs/report.md). fast_p(p) is the share of the
// dataset's tasks, a task being one workload of one definition, on which an author has a correct
// solution faster than p times the reference: a PASSED trace within the error bounds whose
// recorded speedup_factor (reference latency / solution latency) is greater than p. Tasks the
// author never attempted count as not fast, so a curve also shows coverage. fast_0 is the share
// solved correctly at all.

#include <fib/base/diagnostic.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/trace_set.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

// The thresholds of a curve when none are asked for: 0, 0.25, …, 2 by quarters, then 3, 4, 5, 10.
std::vector<double> default_fastp_thresholds();

struct FastpOptions {
  std::vector<std::filesystem::path> datasets;
  std::vector<std::string> definitions; // only these (each in some dataset); empty: all
  ErrorBounds bounds;
  std::vector<double> thresholds = default_fastp_thresholds(); // ascending, each >= 0
};

// One point of a curve: how many tasks are fast at p, and their share of all tasks.
struct FastpPoint {
  double p = 0.0;
  std::size_t fast = 0;
  double fast_p = 0.0; // fast / tasks (0 when there are no tasks)
};

// One author's curve, or the dataset's best (author "" : the best trace of any author per task).
struct FastpCurve {
  std::string author;
  std::size_t attempted = 0; // tasks with any evaluated trace of the author
  std::size_t correct = 0;   // tasks with a PASSED trace within the bounds
  std::vector<FastpPoint> points;
};

struct DatasetFastp {
  std::filesystem::path dataset;
  std::optional<Diagnostic> load_error;
  // Every workload of the selected definitions (the uuids of their workload files and of their
  // traces), counted once per definition.
  std::size_t tasks = 0;
  std::vector<FastpCurve> curves; // by author name, then the dataset's best ("")
};

struct FastpReport {
  ErrorBounds bounds;
  std::vector<double> thresholds;
  std::vector<DatasetFastp> datasets;
};

// Loads every dataset and computes the curves. Reports `score.unknown-definition` for a requested
// name that no loaded dataset has, and load errors. Never throws.
FastpReport fastp_curves(const FastpOptions& options, DiagnosticSink& sink);

// The curves of the loaded `set` over the definitions named in `definitions` (each a definition of
// the set), as fastp_curves computes them for one dataset (its `dataset` is set.root).
DatasetFastp fastp_of(const TraceSet& set, const std::vector<std::string>& definitions,
                      const ErrorBounds& bounds, const std::vector<double>& thresholds);

// A table per dataset: one row per curve, one column per threshold ("fast_1.5"), values as
// percentages, then attempted / correct / tasks.
std::string render_fastp_text(const FastpReport& report);

// "dataset,author,p,fast,tasks,fast_p" then one row per point (author "(best)" for the dataset's
// best curve); fields with a comma, a quote or a newline are quoted as RFC 4180 says.
std::string render_fastp_csv(const FastpReport& report);

// {"fib_report": "fastp", "atol", "rtol", "thresholds": [..], "datasets": [{"dataset", "error",
//  "tasks", "curves": [{"author" (null for the best), "attempted", "correct", "points": [{"p",
//  "fast", "fast_p"}]}]}]}.
Json fastp_to_json(const FastpReport& report);

// Parses "0,0.5,1,2": non-negative finite numbers, at least one, strictly ascending. The error
// says which item is wrong.
Expected<std::vector<double>> parse_fastp_thresholds(std::string_view text);

} // namespace fib
