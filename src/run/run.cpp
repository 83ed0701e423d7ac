#include "fib/run/run.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/trace_set.hpp>
#include <fib/run/trace_append.hpp>
#include <fib/util/path_safety.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace fib {
namespace {

bool selected(const std::vector<std::string>& wanted, const std::string& name) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), name) != wanted.end();
}

// Names asked for that the dataset lacks.
void report_unknown_selections(const RunOptions& options, const TraceSet& set, RunResult& result) {
  for (const auto& wanted : options.definitions) {
    if (set.find_definition(wanted) == nullptr) {
      result.diagnostics.push_back(make_diagnostic(codes::k_score_unknown_definition,
                                                   fmt::format("unknown definition '{}'", wanted)));
    }
  }
  for (const auto& wanted : options.solutions) {
    if (set.find_solution(wanted) == nullptr) {
      result.diagnostics.push_back(
          make_diagnostic(codes::k_usage, fmt::format("unknown solution '{}'", wanted)));
    }
  }
}

enum class KeepGoing { yes, no };

// One solution of `definition` on each of its workloads: the trace lines, in order. KeepGoing::no
// when there is no worker (reported once: nothing else can run either).
KeepGoing evaluate_solution(const Definition& definition, const Solution& solution,
                            const std::vector<Trace>& workloads, const EvaluateOptions& evaluate,
                            ReferenceRunner& runner, const std::filesystem::path& trace_file,
                            const std::function<void(const RunEvaluation&)>& on_evaluation,
                            std::vector<std::string>& lines, RunResult& result) {
  const std::string& name = definition.name;
  for (const auto& workload_trace : workloads) {
    auto evaluated = runner.evaluate(definition, solution, workload_trace.workload, evaluate);
    const auto unavailable = std::find_if(
        evaluated.diagnostics.begin(), evaluated.diagnostics.end(), [](const Diagnostic& d) {
          return d.code == codes::k_worker_unavailable || d.code == codes::k_sandbox_unavailable;
        });
    if (unavailable != evaluated.diagnostics.end()) {
      result.diagnostics.push_back(*unavailable);
      return KeepGoing::no;
    }
    for (auto& d : evaluated.diagnostics) {
      d.message = fmt::format("{} / {} / workload {}: {}", name, solution.name,
                              workload_trace.workload.uuid, d.message);
      result.diagnostics.push_back(std::move(d));
    }
    if (!evaluated.evaluation) {
      continue;
    }
    Json trace = Json::object();
    trace["definition"] = name;
    trace["workload"] = to_json(workload_trace.workload);
    trace["solution"] = solution.name;
    trace["evaluation"] = *evaluated.evaluation;
    ++result.evaluations;
    ++result.statuses[(*evaluated.evaluation).value("status", "?")];
    lines.push_back(trace.dump(-1, ' ', false, Json::error_handler_t::replace));
    if (on_evaluation) {
      on_evaluation(RunEvaluation{name, solution.name, solution.author,
                                  workload_trace.workload.uuid, trace, trace_file});
    }
  }
  return KeepGoing::yes;
}

// Appends the solution's trace lines to its trace file, when author and op_type make a safe path.
void write_traces(const RunOptions& options, const Definition& definition, const Solution& solution,
                  const std::filesystem::path& trace_file, const std::vector<std::string>& lines,
                  RunResult& result) {
  const auto author_problem = unsafe_segment_reason(solution.author);
  const auto op_problem = unsafe_segment_reason(definition.op_type);
  if (!author_problem.empty() || !op_problem.empty()) {
    result.diagnostics.push_back(make_diagnostic(
        codes::k_stage_unsafe_name,
        fmt::format("traces of {} not written: author or op_type cannot be a path segment ({})",
                    solution.name, author_problem.empty() ? op_problem : author_problem)));
    return;
  }
  if (auto problem = append_trace_lines(options.dataset, trace_file, lines)) {
    result.diagnostics.push_back(std::move(*problem));
    return;
  }
  if (std::find(result.trace_files.begin(), result.trace_files.end(), trace_file) ==
      result.trace_files.end()) {
    result.trace_files.push_back(trace_file);
  }
}

} // namespace

RunResult run_solutions(const RunOptions& options, ReferenceRunner& runner,
                        const std::function<void(const RunEvaluation&)>& on_evaluation) {
  RunResult result;
  DiagnosticList sink;
  auto set = load_trace_set(options.dataset, sink);
  for (const auto& d : sink.items()) {
    if (d.severity == Severity::error) {
      result.diagnostics.push_back(d);
    }
  }
  if (!set) {
    if (result.diagnostics.empty()) {
      result.diagnostics.push_back(set.error());
    }
    return result;
  }
  EvaluateOptions evaluate = options.evaluate;
  evaluate.dataset_root = options.dataset;
  report_unknown_selections(options, *set, result);
  for (const auto& [name, definition] : set->definitions) {
    const auto solutions = set->solutions_of(name);
    if (!selected(options.definitions, name) || solutions.empty()) {
      continue;
    }
    const auto workloads = set->workloads.find(name);
    if (workloads == set->workloads.end() || workloads->second.empty()) {
      Diagnostic d = make_diagnostic(
          codes::k_run_inputs,
          fmt::format("definition '{}' has solutions but no workloads to run them on", name));
      d.severity = Severity::warning;
      result.diagnostics.push_back(std::move(d));
      continue;
    }
    std::vector<const Workload*> workload_list;
    for (const auto& workload_trace : workloads->second) {
      workload_list.push_back(&workload_trace.workload);
    }
    if (std::any_of(solutions.begin(), solutions.end(),
                    [&](const Solution* s) { return selected(options.solutions, s->name); })) {
      runner.prepare_references(definition, workload_list, evaluate);
    }
    for (const Solution* solution : solutions) {
      if (!selected(options.solutions, solution->name)) {
        continue;
      }
      const std::filesystem::path trace_file = std::filesystem::path("traces") / solution->author /
                                               definition.op_type / (name + ".jsonl");
      std::vector<std::string> lines;
      if (evaluate_solution(definition, *solution, workloads->second, evaluate, runner, trace_file,
                            on_evaluation, lines, result) == KeepGoing::no) {
        return result;
      }
      if (!lines.empty() && options.dry_run == DryRun::no) {
        write_traces(options, definition, *solution, trace_file, lines, result);
      }
    }
  }
  return result;
}

} // namespace fib
