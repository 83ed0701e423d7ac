#include "fib/run/run.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/trace_set.hpp>
#include <fib/util/atomic_file.hpp>
#include <fib/util/path_safety.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>

namespace fib {
namespace {

bool selected(const std::vector<std::string>& wanted, const std::string& name) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), name) != wanted.end();
}

// Appends `lines` to the trace file below `root`, atomically (the old content plus the new lines
// replace the file in one rename).
std::optional<Diagnostic> append_lines(const std::filesystem::path& root,
                                       const std::filesystem::path& relative,
                                       const std::vector<std::string>& lines) {
  std::string text;
  auto directory = open_directory(root);
  if (!directory) {
    return directory.error();
  }
  // Read the current content through the same no-follow walk the write takes.
  DirectoryHandle current = std::move(*directory);
  bool exists = true;
  for (const auto& part : relative.parent_path()) {
    auto next = open_subdirectory(current, part.string(), CreateMissing::no);
    if (!next) {
      return next.error();
    }
    if (!*next) {
      exists = false;
      break;
    }
    current = std::move(**next);
  }
  if (exists) {
    auto old = read_file_in(current, relative.filename().string(), k_default_max_file_bytes);
    if (!old) {
      return old.error();
    }
    if (*old) {
      text = std::move(**old);
      if (!text.empty() && text.back() != '\n') {
        text += '\n';
      }
    }
  }
  for (const auto& line : lines) {
    text += line;
    text += '\n';
  }
  auto written =
      write_file_atomically_below(root, relative, text, Overwrite::allowed, CreateMissing::yes);
  if (!written) {
    return written.error();
  }
  return std::nullopt;
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
    const auto* info = find_code(set.error().code);
    result.environment_failed = info != nullptr && info->exit_class == ExitClass::environment;
    return result;
  }
  EvaluateOptions evaluate = options.evaluate;
  evaluate.dataset_root = options.dataset;
  for (const auto& wanted : options.definitions) {
    if (set->find_definition(wanted) == nullptr) {
      result.diagnostics.push_back(make_diagnostic(codes::k_score_unknown_definition,
                                                   fmt::format("unknown definition '{}'", wanted)));
    }
  }
  for (const auto& wanted : options.solutions) {
    if (set->find_solution(wanted) == nullptr) {
      result.diagnostics.push_back(
          make_diagnostic(codes::k_usage, fmt::format("unknown solution '{}'", wanted)));
    }
  }
  for (const auto& [name, definition] : set->definitions) {
    if (!selected(options.definitions, name)) {
      continue;
    }
    const auto workloads_it = set->workloads.find(name);
    const auto solutions = set->solutions_of(name);
    if (solutions.empty()) {
      continue;
    }
    if (workloads_it == set->workloads.end() || workloads_it->second.empty()) {
      Diagnostic d = make_diagnostic(
          codes::k_run_inputs,
          fmt::format("definition '{}' has solutions but no workloads to run them on", name));
      d.severity = Severity::warning;
      result.diagnostics.push_back(std::move(d));
      continue;
    }
    for (const Solution* solution : solutions) {
      if (!selected(options.solutions, solution->name)) {
        continue;
      }
      std::vector<std::string> lines;
      const auto author_problem = unsafe_segment_reason(solution->author);
      const auto op_problem = unsafe_segment_reason(definition.op_type);
      const std::filesystem::path trace_file = std::filesystem::path("traces") / solution->author /
                                               definition.op_type / (name + ".jsonl");
      for (const auto& workload_trace : workloads_it->second) {
        auto evaluated = runner.evaluate(definition, *solution, workload_trace.workload, evaluate);
        // Without a worker nothing can run: say so once and stop.
        const auto unavailable =
            std::find_if(evaluated.diagnostics.begin(), evaluated.diagnostics.end(),
                         [](const Diagnostic& d) { return d.code == codes::k_worker_unavailable; });
        if (unavailable != evaluated.diagnostics.end()) {
          result.diagnostics.push_back(*unavailable);
          result.environment_failed = true;
          return result;
        }
        for (auto& d : evaluated.diagnostics) {
          const auto* info = find_code(d.code);
          if (info != nullptr && info->exit_class == ExitClass::environment) {
            result.environment_failed = true;
          }
          d.message = fmt::format("{} / {} / workload {}: {}", name, solution->name,
                                  workload_trace.workload.uuid, d.message);
          result.diagnostics.push_back(std::move(d));
        }
        if (!evaluated.evaluation) {
          continue;
        }
        Json trace = Json::object();
        trace["definition"] = name;
        trace["workload"] = to_json(workload_trace.workload);
        trace["solution"] = solution->name;
        trace["evaluation"] = *evaluated.evaluation;
        ++result.evaluations;
        ++result.statuses[(*evaluated.evaluation).value("status", "?")];
        lines.push_back(trace.dump(-1, ' ', false, Json::error_handler_t::replace));
        if (on_evaluation) {
          on_evaluation(RunEvaluation{name, solution->name, solution->author,
                                      workload_trace.workload.uuid, trace, trace_file});
        }
      }
      if (lines.empty() || options.dry_run == DryRun::yes) {
        continue;
      }
      if (!author_problem.empty() || !op_problem.empty()) {
        result.diagnostics.push_back(make_diagnostic(
            codes::k_stage_unsafe_name,
            fmt::format("traces of {} not written: author or op_type cannot be a path segment "
                        "({})",
                        solution->name, author_problem.empty() ? op_problem : author_problem)));
        continue;
      }
      if (auto problem = append_lines(options.dataset, trace_file, lines)) {
        result.diagnostics.push_back(std::move(*problem));
        result.environment_failed = true;
        continue;
      }
      if (std::find(result.trace_files.begin(), result.trace_files.end(), trace_file) ==
          result.trace_files.end()) {
        result.trace_files.push_back(trace_file);
      }
    }
  }
  return result;
}

} // namespace fib
