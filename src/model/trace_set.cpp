#include "fib/model/trace_set.hpp"

#include "io/keys.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/dataset_layout.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <system_error>
#include <utility>

namespace fib {
namespace {

namespace fs = std::filesystem;
using detail::k_key_evaluation;
using detail::k_key_name;
using detail::k_key_solution;

// Forwards everything and remembers the first error, which becomes the load's result.
class FirstErrorTracker final : public DiagnosticSink {
public:
  explicit FirstErrorTracker(DiagnosticSink& target) : m_target(target) {}

  void report(Diagnostic diagnostic) override {
    if (diagnostic.severity == Severity::error && !m_first_error) {
      m_first_error = diagnostic;
    }
    m_target.report(std::move(diagnostic));
  }

  const std::optional<Diagnostic>& first_error() const { return m_first_error; }

private:
  DiagnosticSink& m_target;
  std::optional<Diagnostic> m_first_error;
};

// parse_trace_lines applies `fib validate`'s placement rules (a traces/ line needs both a solution
// and an evaluation). from_path is looser and has its own rule, reported as
// trace-set.misplaced-line, so those two codes are dropped here.
class PlacementFilter final : public DiagnosticSink {
public:
  explicit PlacementFilter(DiagnosticSink& target) : m_target(target) {}

  void report(Diagnostic diagnostic) override {
    if (diagnostic.code == codes::k_workload_not_workload_only ||
        diagnostic.code == codes::k_trace_not_evaluated) {
      return;
    }
    m_target.report(std::move(diagnostic));
  }

private:
  DiagnosticSink& m_target;
};

// The files of one tree as the old tool's TraceSet loader finds them (ScanMode::trace_set: any
// depth, sorted; a directory with a matching name is listed too, and reading it then fails).
std::vector<fs::path> list_tree(const fs::path& root, DatasetTree tree, DiagnosticSink& sink) {
  const TreeScan scan = scan_tree(root, tree, ScanMode::trace_set);
  for (const ListingFailure& failure : scan.failures) {
    Diagnostic d = make_diagnostic(
        codes::k_io_read, fmt::format("cannot list the directory: {}", failure.error.message()));
    d.file = failure.directory;
    sink.report(std::move(d));
  }
  std::vector<fs::path> found;
  for (const LayoutEntry& entry : scan.entries) {
    found.push_back(entry.path);
  }
  return found;
}

// Reads and parses one JSON file; failures go to `sink` and give nullopt.
std::optional<JsonDocument> load_document(const fs::path& file, DiagnosticSink& sink) {
  auto text = read_text_file(file);
  if (!text) {
    sink.report(text.error());
    return std::nullopt;
  }
  auto document = parse_json(*text, file, sink);
  if (!document) {
    sink.report(document.error());
    return std::nullopt;
  }
  return std::move(*document);
}

void report_duplicate(std::string_view code, std::string_view kind, const std::string& name,
                      const JsonDocument& document, const fs::path& earlier, DiagnosticSink& sink) {
  Diagnostic d = make_diagnostic(code, fmt::format("Duplicate {} name: {}", kind, name));
  d.file = document.file;
  d.pointer = fmt::format("/{}", k_key_name);
  d.line = document.line_of(d.pointer);
  d.hint = fmt::format("the name is already used by {}", earlier.string());
  sink.report(std::move(d));
}

void report_misplaced(const fs::path& file, const TraceLine& line, std::string pointer,
                      std::string message, std::string hint, DiagnosticSink& sink) {
  Diagnostic d = make_diagnostic(codes::k_trace_set_misplaced_line, std::move(message));
  d.file = file;
  d.pointer = std::move(pointer);
  d.line = line.line;
  d.hint = std::move(hint);
  sink.report(std::move(d));
}

void load_definitions(const fs::path& root, TraceSet& set, DiagnosticSink& sink) {
  std::map<std::string, fs::path, std::less<>> first_file;
  for (const fs::path& file : list_tree(root, DatasetTree::definitions, sink)) {
    auto document = load_document(file, sink);
    if (!document) {
      continue;
    }
    Definition definition = parse_definition(*document, sink);
    if (definition.name.empty()) {
      continue; // the missing or bad name was reported by the parser
    }
    if (auto it = first_file.find(definition.name); it != first_file.end()) {
      report_duplicate(codes::k_trace_set_duplicate_definition, "definition", definition.name,
                       *document, it->second, sink);
      continue;
    }
    first_file.emplace(definition.name, file);
    std::string name = definition.name;
    set.definitions.emplace(std::move(name), std::move(definition));
  }
}

void load_solutions(const fs::path& root, TraceSet& set, DiagnosticSink& sink) {
  std::map<std::string, fs::path, std::less<>> first_file;
  for (const fs::path& file : list_tree(root, DatasetTree::solutions, sink)) {
    auto document = load_document(file, sink);
    if (!document) {
      continue;
    }
    Solution solution = parse_solution(*document, sink);
    if (solution.name.empty()) {
      continue;
    }
    if (auto it = first_file.find(solution.name); it != first_file.end()) {
      report_duplicate(codes::k_trace_set_duplicate_solution, "solution", solution.name, *document,
                       it->second, sink);
      continue;
    }
    first_file.emplace(solution.name, file);
    set.solutions.push_back(std::move(solution));
  }
}

void load_workloads(const fs::path& root, TraceSet& set, DiagnosticSink& sink) {
  for (const fs::path& file : list_tree(root, DatasetTree::workloads, sink)) {
    auto text = read_text_file(file);
    if (!text) {
      sink.report(text.error());
      continue;
    }
    PlacementFilter filter(sink);
    for (TraceLine& line : parse_trace_lines(*text, file, TraceFileKind::workload, filter)) {
      if (!line.trace.is_workload_trace()) {
        const std::string_view key = line.trace.solution ? k_key_solution : k_key_evaluation;
        report_misplaced(file, line, fmt::format("/{}", key),
                         fmt::format("workload line {} has a {}", line.trace.workload.uuid, key),
                         "lines of a workloads/ file carry only `definition` and `workload`; "
                         "evaluated lines belong in traces/",
                         sink);
        continue;
      }
      set.workloads[line.trace.definition].push_back(std::move(line.trace));
    }
  }
}

void load_traces(const fs::path& root, TraceSet& set, DiagnosticSink& sink) {
  for (const fs::path& file : list_tree(root, DatasetTree::traces, sink)) {
    auto text = read_text_file(file);
    if (!text) {
      sink.report(text.error());
      continue;
    }
    PlacementFilter filter(sink);
    for (TraceLine& line : parse_trace_lines(*text, file, TraceFileKind::trace, filter)) {
      if (line.trace.is_workload_trace()) {
        report_misplaced(
            file, line, "",
            fmt::format("trace line {} has neither a solution nor an evaluation",
                        line.trace.workload.uuid),
            "workload-only lines belong in workloads/; a trace names its solution and evaluation",
            sink);
        continue;
      }
      set.traces[line.trace.definition].push_back(std::move(line.trace));
    }
  }
}

bool is_passed(const Trace& trace) {
  return trace.evaluation && trace.evaluation->status == EvaluationStatus::passed;
}

// NaN errors compare false, so they never meet the bounds.
bool within_bounds(const Trace& trace, const ErrorBounds& bounds) {
  const auto& correctness = trace.evaluation->correctness;
  return correctness && correctness->max_absolute_error <= bounds.max_absolute_error &&
         correctness->max_relative_error <= bounds.max_relative_error;
}

bool matches_axes(const Workload& workload, const AxisValues& axes) {
  for (const auto& [name, value] : axes) {
    const std::int64_t* actual = find_entry(workload.axes, name);
    if (actual == nullptr || *actual != value) {
      return false;
    }
  }
  return true;
}

bool is_trace_of(const Trace& trace, const Solution& solution) {
  return trace.solution && *trace.solution == solution.name;
}

Diagnostic score_error(std::string_view code, std::string message) {
  return make_diagnostic(code, std::move(message));
}

// Lowest latency of the solution's PASSED traces, per workload uuid.
Expected<std::map<std::string, double>> best_latencies(const std::vector<Trace>& traces,
                                                       const Solution& solution) {
  std::map<std::string, double> out;
  for (const Trace& trace : traces) {
    if (!is_trace_of(trace, solution) || !is_passed(trace)) {
      continue;
    }
    const auto& performance = trace.evaluation->performance;
    // `!(x > 0)` also rejects NaN, which the parser never lets through.
    if (!performance || !(performance->latency_ms > 0.0)) {
      return unexpected(score_error(
          codes::k_score_invalid_performance,
          fmt::format("PASSED trace for solution '{}' workload '{}' has invalid performance data",
                      solution.name, trace.workload.uuid)));
    }
    const std::string& uuid = trace.workload.uuid;
    auto [it, inserted] = out.emplace(uuid, performance->latency_ms);
    if (!inserted) {
      it->second = std::min(it->second, performance->latency_ms);
    }
  }
  return out;
}

std::string python_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += fmt::format("{}'{}'", i == 0 ? "" : ", ", items[i]);
  }
  return out + "]";
}

// Descending avg_speedup (NaN last), then author: a strict weak order even with NaN.
bool ranks_before(const AuthorScore& a, const AuthorScore& b) {
  const double x = a.metrics.avg_speedup;
  const double y = b.metrics.avg_speedup;
  const bool x_nan = std::isnan(x);
  const bool y_nan = std::isnan(y);
  if (x_nan != y_nan) {
    return y_nan;
  }
  if (!x_nan && x != y) {
    return x > y;
  }
  return a.author < b.author;
}

// The scope's definition names, in name order.
Expected<std::vector<std::string>> scope_definitions(const TraceSet& set, const ScoreScope& scope) {
  if (scope.op_type && scope.definition_name) {
    return unexpected(score_error(codes::k_score_scope_conflict,
                                  "Only one of 'op_type' or 'definition_name' may be provided"));
  }
  std::vector<std::string> names;
  if (scope.definition_name) {
    if (set.find_definition(*scope.definition_name) == nullptr) {
      return unexpected(score_error(
          codes::k_score_unknown_definition,
          fmt::format("definition '{}' is not in the trace set", *scope.definition_name)));
    }
    names.push_back(*scope.definition_name);
    return names;
  }
  for (const auto& [name, definition] : set.definitions) {
    if (!scope.op_type || definition.op_type == *scope.op_type) {
      names.push_back(name);
    }
  }
  return names;
}

// The solutions of each definition, in load order. Built once per public scoring call so that
// ranking a large dataset does not rescan every solution for every (author, definition) pair.
class SolutionIndex {
public:
  explicit SolutionIndex(const TraceSet& set) {
    for (const Solution& solution : set.solutions) {
      m_by_definition[solution.definition].push_back(&solution);
    }
  }

  const std::vector<const Solution*>& of(std::string_view definition_name) const {
    static const std::vector<const Solution*> k_none;
    const auto it = m_by_definition.find(definition_name);
    return it == m_by_definition.end() ? k_none : it->second;
  }

private:
  std::map<std::string, std::vector<const Solution*>, std::less<>> m_by_definition;
};

// The one solution of `definition_name` owned by `baseline_author`.
Expected<const Solution*> find_baseline(const SolutionIndex& index,
                                        std::string_view definition_name,
                                        std::string_view baseline_author) {
  std::vector<const Solution*> found;
  for (const Solution* solution : index.of(definition_name)) {
    if (solution->author == baseline_author) {
      found.push_back(solution);
    }
  }
  if (found.empty()) {
    return unexpected(
        score_error(codes::k_score_no_baseline,
                    fmt::format("No baseline solution from author '{}' for definition '{}'",
                                baseline_author, definition_name)));
  }
  if (found.size() > 1) {
    std::vector<std::string> names;
    for (const Solution* solution : found) {
      names.push_back(solution->name);
    }
    return unexpected(score_error(
        codes::k_score_multiple_baselines,
        fmt::format("Multiple baseline solutions from author '{}' for definition '{}': {}",
                    baseline_author, definition_name, python_list(names))));
  }
  return found.front();
}

// One solution's metrics in one definition: `workloads` compared; every rate 0 when any trace
// failed, else the mean of `speedups`, the share of them above 1, and a success rate of 1.
SpeedupMetrics speedup_metrics(std::size_t workloads, bool any_failed,
                               const std::vector<double>& speedups) {
  SpeedupMetrics metrics;
  metrics.definitions = 1;
  metrics.workloads = workloads;
  if (any_failed || speedups.empty()) {
    return metrics;
  }
  double total = 0.0;
  std::size_t wins = 0;
  for (const double speedup : speedups) {
    total += speedup;
    wins += speedup > 1.0 ? 1 : 0;
  }
  const auto count = static_cast<double>(speedups.size());
  metrics.avg_speedup = total / count;
  metrics.win_rate = static_cast<double>(wins) / count;
  metrics.success_rate = 1.0;
  return metrics;
}

Expected<std::optional<SpeedupMetrics>> score_solution(const TraceSet& set,
                                                       const SolutionIndex& index,
                                                       const Solution& solution,
                                                       std::string_view baseline_author) {
  using Result = std::optional<SpeedupMetrics>;
  FIB_TRY_ASSIGN(const Solution* const baseline,
                 find_baseline(index, solution.definition, baseline_author));
  if (baseline->name == solution.name) {
    return Result{};
  }
  static const std::vector<Trace> k_no_traces;
  const auto traces_it = set.traces.find(solution.definition);
  const std::vector<Trace>& traces =
      traces_it == set.traces.end() ? k_no_traces : traces_it->second;

  FIB_TRY_ASSIGN(auto baseline_latency, best_latencies(traces, *baseline));
  FIB_TRY_ASSIGN(auto solution_latency, best_latencies(traces, solution));

  std::set<std::string> evaluated;
  bool any_failed = false;
  for (const Trace& trace : traces) {
    if (is_trace_of(trace, solution) && trace.evaluation) {
      evaluated.insert(trace.workload.uuid);
      any_failed = any_failed || trace.evaluation->status != EvaluationStatus::passed;
    }
  }
  std::vector<std::string> common;
  for (const auto& [uuid, latency] : baseline_latency) {
    if (evaluated.contains(uuid)) {
      common.push_back(uuid);
    }
  }
  if (common.empty()) {
    return Result{};
  }

  std::vector<double> speedups;
  if (!any_failed) {
    for (const std::string& uuid : common) {
      // No failure, so every evaluated workload has a PASSED latency.
      speedups.push_back(baseline_latency.at(uuid) / solution_latency.at(uuid));
    }
  }
  return Result{speedup_metrics(common.size(), any_failed, speedups)};
}

// The speedups a solution's traces record against the definition's reference (speedup_factor =
// reference latency / solution latency, both by the run that made the trace), over every workload
// it was evaluated on: for each workload the PASSED trace with the lowest latency counts. Any
// non-PASSED trace makes every rate 0 (workloads still counted), as in score_solution. nullopt
// when the solution has no evaluated trace.
Expected<std::optional<SpeedupMetrics>> score_against_reference(const TraceSet& set,
                                                                const Solution& solution) {
  using Result = std::optional<SpeedupMetrics>;
  const auto traces_it = set.traces.find(solution.definition);
  if (traces_it == set.traces.end()) {
    return Result{};
  }
  const std::vector<Trace>& traces = traces_it->second;
  FIB_TRY_ASSIGN(const auto latency, best_latencies(traces, solution));
  std::map<std::string, double> speedup;
  std::set<std::string> evaluated;
  bool any_failed = false;
  for (const Trace& trace : traces) {
    if (!is_trace_of(trace, solution) || !trace.evaluation) {
      continue;
    }
    const std::string& uuid = trace.workload.uuid;
    evaluated.insert(uuid);
    any_failed = any_failed || trace.evaluation->status != EvaluationStatus::passed;
    if (is_passed(trace) && trace.evaluation->performance->latency_ms == latency.at(uuid) &&
        !speedup.contains(uuid)) {
      speedup[uuid] = trace.evaluation->performance->speedup_factor;
    }
  }
  if (evaluated.empty()) {
    return Result{};
  }
  std::vector<double> speedups;
  for (const auto& [uuid, value] : speedup) {
    speedups.push_back(value);
  }
  return Result{speedup_metrics(evaluated.size(), any_failed, speedups)};
}

// The author's best solution score in each of `definition_names`, averaged.
// One solution's score by some basis (score_solution, score_against_reference).
using SolutionScorer = std::function<Expected<std::optional<SpeedupMetrics>>(const Solution&)>;

Expected<std::optional<SpeedupMetrics>>
score_author(const SolutionIndex& index, std::string_view author, const SolutionScorer& scorer,
             const std::vector<std::string>& definition_names) {
  using Result = std::optional<SpeedupMetrics>;
  SpeedupMetrics total;
  for (const std::string& definition_name : definition_names) {
    std::optional<SpeedupMetrics> best;
    std::string best_name;
    for (const Solution* solution : index.of(definition_name)) {
      if (solution->author != author) {
        continue;
      }
      FIB_TRY_ASSIGN(auto score, scorer(*solution));
      if (score && (!best || score->avg_speedup > best->avg_speedup)) {
        best = std::move(score);
        best_name = solution->name;
      }
    }
    if (!best) {
      continue;
    }
    total.avg_speedup += best->avg_speedup;
    total.success_rate += best->success_rate;
    total.win_rate += best->win_rate;
    total.workloads += best->workloads;
    total.definitions += 1;
    total.best_solutions.emplace(definition_name, std::move(best_name));
  }
  if (total.definitions == 0) {
    return Result{};
  }
  const auto count = static_cast<double>(total.definitions);
  total.avg_speedup /= count;
  total.success_rate /= count;
  total.win_rate /= count;
  return Result{std::move(total)};
}

} // namespace

const Definition* TraceSet::find_definition(std::string_view name) const {
  const auto it = definitions.find(name);
  return it == definitions.end() ? nullptr : &it->second;
}

const Solution* TraceSet::find_solution(std::string_view name) const {
  const auto it = std::find_if(solutions.begin(), solutions.end(),
                               [&](const Solution& solution) { return solution.name == name; });
  return it == solutions.end() ? nullptr : &*it;
}

std::vector<const Solution*> TraceSet::solutions_of(std::string_view definition_name) const {
  std::vector<const Solution*> out;
  for (const Solution& solution : solutions) {
    if (solution.definition == definition_name) {
      out.push_back(&solution);
    }
  }
  return out;
}

std::vector<const Trace*> TraceSet::filter_traces(std::string_view definition_name,
                                                  ErrorBounds bounds) const {
  std::vector<const Trace*> out;
  const auto it = traces.find(definition_name);
  if (it == traces.end()) {
    return out;
  }
  for (const Trace& trace : it->second) {
    if (is_passed(trace) && within_bounds(trace, bounds)) {
      out.push_back(&trace);
    }
  }
  return out;
}

const Trace* TraceSet::get_best_trace(std::string_view definition_name, const AxisValues& axes,
                                      ErrorBounds bounds) const {
  const Trace* best = nullptr;
  for (const Trace* trace : filter_traces(definition_name, bounds)) {
    if (!matches_axes(trace->workload, axes) || !trace->evaluation->performance) {
      continue;
    }
    if (best == nullptr || trace->evaluation->performance->speedup_factor >
                               best->evaluation->performance->speedup_factor) {
      best = trace;
    }
  }
  return best;
}

Expected<std::optional<SpeedupMetrics>>
TraceSet::get_solution_score(std::string_view solution_name,
                             std::string_view baseline_author) const {
  const Solution* solution = find_solution(solution_name);
  if (solution == nullptr) {
    return std::optional<SpeedupMetrics>{};
  }
  return score_solution(*this, SolutionIndex(*this), *solution, baseline_author);
}

Expected<std::optional<SpeedupMetrics>> TraceSet::get_author_score(std::string_view author,
                                                                   std::string_view baseline_author,
                                                                   const ScoreScope& scope) const {
  FIB_TRY_ASSIGN(const auto scope_names, scope_definitions(*this, scope));
  const SolutionIndex index(*this);
  return score_author(
      index, author,
      [&](const Solution& solution) {
        return score_solution(*this, index, solution, baseline_author);
      },
      scope_names);
}

Expected<std::vector<AuthorScore>> TraceSet::rank_authors(std::string_view baseline_author,
                                                          const ScoreScope& scope) const {
  return rank_authors_by(SpeedupBasis::baseline_author, baseline_author, scope);
}

Expected<std::vector<AuthorScore>> TraceSet::rank_authors_by(SpeedupBasis basis,
                                                             std::string_view baseline_author,
                                                             const ScoreScope& scope) const {
  // Resolved up front, so a bad scope is an error even when there is no author to score.
  FIB_TRY_ASSIGN(const auto scope_names, scope_definitions(*this, scope));
  const SolutionIndex index(*this);
  const SolutionScorer scorer = [&](const Solution& solution) {
    return basis == SpeedupBasis::reference
               ? score_against_reference(*this, solution)
               : score_solution(*this, index, solution, baseline_author);
  };
  std::set<std::string, std::less<>> authors;
  for (const Solution& solution : solutions) {
    authors.insert(solution.author);
  }
  std::vector<AuthorScore> out;
  for (const std::string& author : authors) {
    FIB_TRY_ASSIGN(auto score, score_author(index, author, scorer, scope_names));
    if (score) {
      out.push_back(AuthorScore{author, std::move(*score)});
    }
  }
  std::sort(out.begin(), out.end(), ranks_before);
  return out;
}

std::vector<std::string>
TraceSet::definitions_without_baseline(std::string_view baseline_author) const {
  const SolutionIndex index(*this);
  std::vector<std::string> out;
  for (const auto& [name, definition] : definitions) {
    if (!index.of(name).empty() && !find_baseline(index, name, baseline_author)) {
      out.push_back(name);
    }
  }
  return out;
}

Expected<TraceSetSummary> TraceSet::summary(std::string_view baseline_author) const {
  TraceSetSummary out;
  for (const auto& [name, definition_traces] : traces) {
    out.total += definition_traces.size();
    out.passed += static_cast<std::size_t>(
        std::count_if(definition_traces.begin(), definition_traces.end(), is_passed));
  }
  out.failed = out.total - out.passed;
  if (out.total == 0) {
    return out;
  }
  FIB_TRY_ASSIGN(out.rankings, rank_authors(baseline_author));
  return out;
}

Expected<TraceSet> load_trace_set(const std::filesystem::path& root, DiagnosticSink& sink) {
  FirstErrorTracker tracker(sink);
  std::error_code ec;
  if (!fs::exists(root, ec)) {
    Diagnostic d = make_diagnostic(codes::k_io_not_found,
                                   fmt::format("dataset root does not exist: {}", root.string()));
    d.file = root;
    tracker.report(std::move(d));
    return unexpected(*tracker.first_error());
  }
  if (!fs::is_directory(root, ec)) {
    Diagnostic d = make_diagnostic(
        codes::k_io_read, fmt::format("dataset root is not a directory: {}", root.string()));
    d.file = root;
    tracker.report(std::move(d));
    return unexpected(*tracker.first_error());
  }
  TraceSet set;
  set.root = root;
  load_definitions(root, set, tracker);
  load_solutions(root, set, tracker);
  load_workloads(root, set, tracker);
  load_traces(root, set, tracker);
  if (tracker.first_error()) {
    return unexpected(*tracker.first_error());
  }
  return set;
}

} // namespace fib
