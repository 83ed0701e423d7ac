#pragma once
// `fib report summary` and `fib report best`: the old tool's `report` views of loaded datasets
// (its TraceSet scoring), as data plus a text and a JSON rendering (docs/report.md).
//
// Every dataset is loaded on its own with load_trace_set and reported in its own section, in the
// order given; one that fails to load is reported as such and the others still are.

#include <fib/base/diagnostic.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/trace_set.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

struct SummaryReportOptions {
  std::vector<std::filesystem::path> datasets;
  std::string baseline_author = std::string(k_default_baseline_author);
};

struct DatasetSummary {
  std::filesystem::path dataset; // as given
  // Set when load_trace_set failed (its first error); then nothing else is filled.
  std::optional<Diagnostic> load_error;
  // Trace counts, filled whenever the dataset loaded. `rankings` only when scoring succeeded.
  TraceSetSummary summary;
  // Set when TraceSet::summary failed (e.g. `score.no-baseline`). The counts are still filled:
  // they do not depend on scoring, and the old tool's crash hid them.
  std::optional<Diagnostic> ranking_error;
};

struct SummaryReport {
  std::string baseline_author;
  std::vector<DatasetSummary> datasets;
};

// Loads and summarizes every dataset. Load diagnostics (all of them, warnings included) and the
// ranking errors go to `sink` as well. Never throws.
SummaryReport summarize_datasets(const SummaryReportOptions& options, DiagnosticSink& sink);

// Text for people, one section per dataset:
//   dataset DIR
//     traces: 6 total, 5 passed, 1 failed
//     rankings against baseline author "baseline":
//       rank  author  avg_speedup  win_rate  success_rate  definitions  workloads
//       1     alice   2.00x        100.0%    100.0%        1            2
// A dataset without rankings says why (`no traces`, `no author has a score`, or the error code).
std::string render_summary_text(const SummaryReport& report);

// The stable JSON document (keys in this order):
//   {"fib_report": "summary", "baseline_author": "baseline", "datasets": [
//     {"dataset": "DIR", "error": null | {"code", "message"}, "total": 6, "passed": 5,
//      "failed": 1, "rankings": [{"rank", "author", "avg_speedup", "win_rate", "success_rate",
//      "definitions", "workloads", "best_solutions": {def: solution}}] | null,
//      "ranking_error": null | {"code", "message"}}]}
// A dataset that failed to load has null counts and rankings.
Json summary_to_json(const SummaryReport& report);

struct BestReportOptions {
  std::vector<std::filesystem::path> datasets;
  // Only these definitions (each must be in at least one dataset); empty: every definition.
  std::vector<std::string> definitions;
  ErrorBounds bounds;
};

// The best trace of one definition (TraceSet::get_best_trace with no axes).
struct BestEntry {
  std::string definition;
  bool found = false; // false: no PASSED trace within the bounds (the fields below are empty)
  std::string solution;
  std::optional<std::string> author; // nullopt when the solution is not in the dataset
  std::string workload;              // the trace's workload uuid
  double speedup_factor = 0.0;       // as recorded in the trace
  double latency_ms = 0.0;
  double reference_latency_ms = 0.0;
};

struct DatasetBest {
  std::filesystem::path dataset;
  std::optional<Diagnostic> load_error;
  std::vector<BestEntry> entries; // by definition name
};

struct BestReport {
  ErrorBounds bounds;
  std::vector<DatasetBest> datasets;
};

// Loads every dataset and finds the best trace of each selected definition it has. Reports
// `score.unknown-definition` for a requested name that no loaded dataset has. Never throws.
BestReport best_traces(const BestReportOptions& options, DiagnosticSink& sink);

// Text, one section per dataset and one line per definition:
//   dataset DIR (atol 0.01, rtol 0.01)
//     d1  sol_a (alice)  speedup 2.00x  latency 1.000 ms  reference 2.000 ms  workload w1
//     d2  no PASSED trace within the bounds
std::string render_best_text(const BestReport& report);

// {"fib_report": "best", "atol": 0.01, "rtol": 0.01, "datasets": [{"dataset", "error",
//  "definitions": [{"definition", "solution", "author", "workload", "speedup_factor",
//  "latency_ms", "reference_latency_ms"}]}]}; a definition without a best trace has null fields,
// a dataset that failed to load has null definitions.
Json best_to_json(const BestReport& report);

} // namespace fib
