#pragma once
// TraceSet: a whole dataset in memory, loaded the way the old tool's `TraceSet.from_path` loads it
// (files at any depth, grouped by their contents), and the old tool's scoring of traces, solutions
// and authors (speedups against the `baseline` author, win and success rates).
//
// Unlike `fib validate`, the loader links nothing by path: it finds files at any depth and groups
// solutions, workloads and traces by their JSON `definition` field.

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/model/definition.hpp>
#include <fib/model/solution.hpp>
#include <fib/model/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// The author whose solution is the reference point of every speedup, unless the caller names
// another one.
inline constexpr std::string_view k_default_baseline_author = "baseline";

// Error bounds a PASSED trace must meet to count; both are inclusive. A NaN error never meets
// them. The defaults are the old tool's atol and rtol (1e-2).
struct ErrorBounds {
  double max_absolute_error = 1e-2;
  double max_relative_error = 1e-2;
};

// Workload axis values a trace must have. Only the listed axes are compared (a subset match); an
// empty map matches every workload.
using AxisValues = std::map<std::string, std::int64_t, std::less<>>;

// Which definitions an author score covers. Both empty: every loaded definition. `op_type`: the
// loaded definitions with that JSON op_type. `definition_name`: that one definition. Setting both
// is an error (`score.scope-conflict`).
struct ScoreScope {
  std::optional<std::string> op_type;
  std::optional<std::string> definition_name;
};

// The old tool's SpeedupMetrics. Speedup is baseline latency / solution latency.
struct SpeedupMetrics {
  double avg_speedup = 0.0; // mean speedup over the common workloads (or over definitions)
  std::size_t definitions = 0;
  std::size_t workloads = 0; // workloads compared (summed over definitions for an author)
  double success_rate = 0.0; // 1 when every evaluated trace passed, else 0 (mean for an author)
  double win_rate = 0.0;     // fraction of workloads with a speedup > 1 (mean for an author)
  // Definition name → the author's best solution there. Filled by author scores only; empty in a
  // solution score.
  std::map<std::string, std::string> best_solutions;
};

// What speedups are measured against: the baseline author's solution of each definition (the old
// tool's scoring), or the definition's reference, whose latency every trace made by `fib run`
// records beside the solution's (performance.speedup_factor = reference / solution).
enum class SpeedupBasis { baseline_author, reference };

// One row of a ranking.
struct AuthorScore {
  std::string author;
  SpeedupMetrics metrics;
};

// Counts over every trace of the set (workload traces are not counted), and the author ranking.
struct TraceSetSummary {
  std::size_t total = 0;
  std::size_t passed = 0; // evaluation status PASSED
  std::size_t failed = 0; // total - passed
  std::vector<AuthorScore> rankings;
};

// A loaded dataset. load_trace_set guarantees unique definition and solution names; a set built
// by hand should keep them unique too (lookups return the first match). Pointers returned by the
// member functions point into this object and live as long as it does, unmodified.
struct TraceSet {
  std::filesystem::path root;
  // Definitions by JSON `name`.
  std::map<std::string, Definition, std::less<>> definitions;
  // Solutions in load order (sorted file paths). Each names its definition and author.
  std::vector<Solution> solutions;
  // Workload traces (lines of workloads/ files) by their JSON `definition`, in load order.
  std::map<std::string, std::vector<Trace>, std::less<>> workloads;
  // Traces (lines of traces/ files) by their JSON `definition`, in load order.
  std::map<std::string, std::vector<Trace>, std::less<>> traces;

  // The definition named `name`; nullptr when there is none.
  const Definition* find_definition(std::string_view name) const;

  // The solution named `name`; nullptr when there is none.
  const Solution* find_solution(std::string_view name) const;

  // The solutions whose JSON `definition` is `definition_name`, in load order.
  std::vector<const Solution*> solutions_of(std::string_view definition_name) const;

  // The PASSED traces of `definition_name` whose correctness is within `bounds`, in load order.
  // Empty for an unknown definition.
  std::vector<const Trace*> filter_traces(std::string_view definition_name,
                                          ErrorBounds bounds = {}) const;

  // Among the traces of `definition_name` whose workload has every value of `axes`, that PASSED
  // and are within `bounds`: the one with the highest speedup_factor (the first one on a tie).
  // nullptr when none qualifies.
  const Trace* get_best_trace(std::string_view definition_name, const AxisValues& axes = {},
                              ErrorBounds bounds = {}) const;

  // The speedup of one solution over the baseline author's solution of the same definition, over
  // the workloads where the baseline passed and the solution was evaluated; for each workload the
  // lowest PASSED latency counts. When the solution has any non-PASSED trace, every rate is 0
  // (workloads still counted). nullopt for an unknown solution, for the baseline solution itself,
  // and when no workload is common. Errors: `score.no-baseline` / `score.multiple-baselines` when
  // the baseline author owns no / several solutions of the definition; `score.invalid-performance`
  // for a PASSED trace of either solution with no performance or a latency that is not > 0.
  Expected<std::optional<SpeedupMetrics>>
  get_solution_score(std::string_view solution_name,
                     std::string_view baseline_author = k_default_baseline_author) const;

  // The author's best solution (highest avg_speedup, the first in load order on a tie) in each
  // definition of `scope`, averaged across those definitions (avg_speedup, success_rate and
  // win_rate are unweighted means; workloads is the sum). nullopt when no definition has a score.
  // Errors: `score.scope-conflict`, `score.unknown-definition` (a definition_name that is not
  // loaded), and every error of get_solution_score for the author's solutions.
  Expected<std::optional<SpeedupMetrics>>
  get_author_score(std::string_view author,
                   std::string_view baseline_author = k_default_baseline_author,
                   const ScoreScope& scope = {}) const;

  // Scores every solution author over `scope` (authors without a score are left out) and sorts by
  // descending avg_speedup, then author name. Errors: those of get_author_score.
  Expected<std::vector<AuthorScore>>
  rank_authors(std::string_view baseline_author = k_default_baseline_author,
               const ScoreScope& scope = {}) const;

  // rank_authors for either basis. Against the reference, a solution's score is the mean of the
  // speedup_factor of its lowest-latency PASSED trace on each workload it was evaluated on (any
  // non-PASSED trace: every rate 0), an author's the mean over definitions of its best solution
  // there, as against a baseline; no baseline solution is needed. Errors: `score.scope-conflict`,
  // `score.unknown-definition`, `score.invalid-performance`, and for the baseline basis those of
  // get_solution_score.
  Expected<std::vector<AuthorScore>>
  rank_authors_by(SpeedupBasis basis, std::string_view baseline_author = k_default_baseline_author,
                  const ScoreScope& scope = {}) const;
  // The definitions that have solutions but not exactly one by `baseline_author` (those
  // get_solution_score fails on), in name order.
  std::vector<std::string>
  definitions_without_baseline(std::string_view baseline_author = k_default_baseline_author) const;
  // Trace counts and rank_authors(baseline_author) over everything. With no traces at all, the
  // counts are 0 and nothing is ranked (so nothing can fail). Errors: those of rank_authors, e.g.
  // `score.no-baseline` when a definition that has solutions lacks a baseline-author solution.
  Expected<TraceSetSummary>
  summary(std::string_view baseline_author = k_default_baseline_author) const;
};

// Loads the dataset at `root` as `TraceSet.from_path` does: definitions/**/*.json,
// solutions/**/*.json, workloads/**/*.jsonl and traces/**/*.jsonl at any depth (no path component
// is checked; scan_tree with ScanMode::trace_set), each tree in sorted path order; a missing tree
// is empty. Each directory that cannot be listed (no permission included: unlike Python's rglob,
// fib skips none silently) is reported as `io.read` of that directory. Solutions, workloads and
// traces are grouped by their JSON `definition` field. Only the schema checks of the parsers run
// (no Python-exact checks).
//
// Every problem is reported to `sink` (the old tool stops at the first): read and JSON errors,
// schema errors, `trace-set.duplicate-definition` "Duplicate definition name: {name}" and
// `trace-set.duplicate-solution` "Duplicate solution name: {name}" (the later file is reported;
// the first one is kept), and `trace-set.misplaced-line` for a workloads/ line with a solution or
// an evaluation, or a traces/ line with neither. A traces/ line with only one of the two loads, as
// in the old tool. `io.not-found` when `root` does not exist (the old tool would create it; fib
// never writes here). When any error was reported the result is the first error; warnings and
// notes alone do not fail the load.
Expected<TraceSet> load_trace_set(const std::filesystem::path& root, DiagnosticSink& sink);

} // namespace fib
