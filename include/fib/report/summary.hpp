#pragma once
// `fib report summary` and `fib report best`: the old tool's `report` views of loaded datasets
// (its TraceSet scoring), as data plus a text and a JSON rendering (docs/report.md).
//
// Every dataset is loaded on its own with load_trace_set and reported in its own section, in the
// order given; one that fails to load is reported as such and the others still are.

#include <fib/base/diagnostic.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/trace_set.hpp>

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

// What `report summary` ranks against (--against).
enum class SummaryBasis {
  automatic,       // the baseline author when it has a solution in the dataset, else the reference
  baseline_author, // always the baseline author (the old tool's scoring)
  reference,       // always the reference (the latencies the traces record)
};

// Whether `report summary` also ranks each device apart (--by-device).
enum class SummaryGrouping { overall, per_device };

struct SummaryReportOptions {
  std::vector<std::filesystem::path> datasets;
  std::string baseline_author = std::string(k_default_baseline_author);
  SummaryBasis against = SummaryBasis::automatic;
  SummaryGrouping grouping = SummaryGrouping::overall;
};

// The ranking of one device: the same scoring, on the traces whose environment.hardware is it.
struct DeviceRanking {
  std::string hardware;
  std::size_t traces = 0; // evaluated traces measured there
  std::vector<AuthorScore> rankings;
  std::optional<Diagnostic> ranking_error; // (not reported to the sink: the overall one is)
};

// Trace counts by evaluation status ("PASSED", "COMPILE_ERROR", …), in name order.
using EvaluationCounts = std::map<std::string, std::size_t>;

// The traces of one solution, or of all an author's solutions.
struct ResultBreakdown {
  std::string name;       // the solution's or the author's
  std::string author;     // the solution's author (the author's own row: the same as name)
  std::string definition; // the solution's definition ("" in an author's row)
  std::size_t solutions = 0;
  std::size_t traces = 0;
  EvaluationCounts statuses;
};

struct DatasetSummary {
  std::filesystem::path dataset; // as given
  // Set when load_trace_set failed (its first error); then nothing else is filled.
  std::optional<Diagnostic> load_error;
  // Trace counts, filled whenever the dataset loaded. `rankings` only when scoring succeeded.
  TraceSetSummary summary;
  EvaluationCounts statuses;              // every trace, by status
  std::vector<ResultBreakdown> authors;   // by author name; every author with a solution
  std::vector<ResultBreakdown> solutions; // by author, then solution name
  // What the rankings are against: the baseline author, or the reference (SummaryBasis).
  SpeedupBasis basis = SpeedupBasis::baseline_author;
  // With the baseline basis: every definition that has solutions but not exactly one by the
  // baseline author (the old tool stops at the first of them).
  std::vector<std::string> definitions_without_baseline;
  // Set when ranking failed (e.g. `score.no-baseline`). The counts are still filled: they do not
  // depend on scoring, and the old tool's crash hid them.
  std::optional<Diagnostic> ranking_error;
  // SummaryGrouping::per_device: one ranking per device the traces name, in name order, against
  // the same basis; speedups measured on different machines never mix.
  std::vector<DeviceRanking> devices;
};

struct SummaryReport {
  std::string baseline_author;
  SummaryBasis against = SummaryBasis::automatic; // as asked
  SummaryGrouping grouping = SummaryGrouping::overall;
  std::vector<DatasetSummary> datasets;
};

// Loads and summarizes every dataset: counts by status overall, per author and per solution, and
// the author ranking against the basis `against` chooses. Load diagnostics (all of them, warnings
// included) and the ranking errors go to `sink` as well; with the baseline basis, the error names
// every definition without a baseline solution. Never throws.
SummaryReport summarize_datasets(const SummaryReportOptions& options, DiagnosticSink& sink);

// Text for people, one section per dataset:
//   dataset DIR
//     traces: 6 total, 5 passed, 1 failed (1 RUNTIME_ERROR)
//     by author:
//       author  solutions  traces  PASSED  failed
//       alice   1          2       2
//     by solution:
//       solution  author  definition  traces  PASSED  failed
//       …
//     rankings against baseline author "baseline":   (or: against the reference (…why…))
//       rank  author  avg_speedup  win_rate  success_rate  definitions  workloads
//       1     alice   2.00x        100.0%    100.0%        1            2
// A dataset without rankings says why (`no traces`, `no author has a score`, or the error code
// and the definitions without a baseline solution).
std::string render_summary_text(const SummaryReport& report);

// The stable JSON document (keys in this order):
//   {"fib_report": "summary", "baseline_author": "baseline", "datasets": [
//     {"dataset": "DIR", "error": null | {"code", "message"}, "total": 6, "passed": 5,
//      "failed": 1, "statuses": {"PASSED": 5, …}, "authors": [{"author", "solutions", "traces",
//      "statuses"}], "solutions": [{"solution", "author", "definition", "traces", "statuses"}],
//      "against": "baseline_author" | "reference",
//      "rankings": [{"rank", "author", "avg_speedup", "win_rate", "success_rate",
//      "definitions", "workloads", "best_solutions": {def: solution}}] | null,
//      "definitions_without_baseline": [names], "ranking_error": null | {"code", "message"},
//      and with SummaryGrouping::per_device "devices": [{"hardware", "traces", "rankings",
//      "ranking_error"}]}]}
// A dataset that failed to load has null counts and rankings.
Json summary_to_json(const SummaryReport& report);

// Whether `report best` picks one trace per definition or one per definition and device.
enum class BestGrouping { per_definition, per_device };

struct BestReportOptions {
  std::vector<std::filesystem::path> datasets;
  // Only these definitions (each must be in at least one dataset); empty: every definition.
  std::vector<std::string> definitions;
  ErrorBounds bounds;
  // per_device: the best trace of each `environment.hardware` the definition's traces name.
  BestGrouping grouping = BestGrouping::per_definition;
};

// Why a definition has a best trace or not.
enum class BestOutcome {
  found,              // the PASSED trace within the bounds with the highest speedup
  no_traces,          // the definition has no evaluated trace at all
  no_passed,          // it has traces, none PASSED
  none_within_bounds, // some PASSED, none within the error bounds (or none with performance)
};

// The best trace of one definition (TraceSet::get_best_trace with no axes), or of one definition
// on one device.
struct BestEntry {
  std::string definition;
  std::string hardware; // per_device: the device; per_definition: the best trace's ("" if none)
  BestOutcome outcome = BestOutcome::no_traces;
  std::size_t traces = 0;    // evaluated traces considered (of the device, per_device)
  EvaluationCounts statuses; // theirs, by status
  // The fields below are set when outcome is found.
  std::string solution;
  std::optional<std::string> author; // nullopt when the solution is not in the dataset
  std::string workload;              // the trace's workload uuid
  double speedup_factor = 0.0;       // as recorded in the trace
  double latency_ms = 0.0;
  double reference_latency_ms = 0.0;
  double max_absolute_error = 0.0;
  double max_relative_error = 0.0;
  // Why the timing is not a steady-state figure, from the trace's settings ("--warmup 0",
  // "--iterations 1", both joined by ", "); "" when the settings are fine or not recorded.
  std::string timing_warning;
};

struct DatasetBest {
  std::filesystem::path dataset;
  std::optional<Diagnostic> load_error;
  std::vector<BestEntry> entries; // by definition name (then device)
};

struct BestReport {
  ErrorBounds bounds;
  BestGrouping grouping = BestGrouping::per_definition;
  std::vector<DatasetBest> datasets;
};

// Loads every dataset and finds the best trace of each selected definition it has (of each device
// with BestGrouping::per_device). Reports `score.unknown-definition` for a requested name that no
// loaded dataset has. Never throws.
BestReport best_traces(const BestReportOptions& options, DiagnosticSink& sink);

// Text, one section per dataset and one line per definition (and device):
//   dataset DIR (atol 0.01, rtol 0.01)
//     d1  sol_a (alice)  speedup 2.00x  latency 1.000 ms  reference 2.000 ms  errors 0 / 0
//         workload w1  on cpu  [timed with --warmup 0: not a steady-state figure]
//     d2  no traces
//     d3  no PASSED trace (3 traces: 2 COMPILE_ERROR, 1 RUNTIME_ERROR)
//     d4  no PASSED trace within the bounds (2 PASSED of 2 traces)
// (each definition's line is one line; it is wrapped here).
std::string render_best_text(const BestReport& report);

// {"fib_report": "best", "atol": 0.01, "rtol": 0.01, "grouping": "definition" | "device",
//  "datasets": [{"dataset", "error", "definitions": [{"definition", "hardware", "outcome":
//  "found" | "no_traces" | "no_passed" | "none_within_bounds", "traces", "statuses",
//  "solution", "author", "workload", "speedup_factor", "latency_ms", "reference_latency_ms",
//  "max_absolute_error", "max_relative_error", "timing_warning"}]}]}; the fields of a best trace
// are null when there is none, a dataset that failed to load has null definitions.
Json best_to_json(const BestReport& report);

} // namespace fib
