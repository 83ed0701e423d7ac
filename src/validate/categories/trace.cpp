// The trace category: every trace file of the definition parses, names the definition and known
// solutions, and covers the workloads; fib also reports lines for workloads that do not exist.

#include "validate/dataset_job.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <map>

namespace fib::dataset_checks {
namespace {

// A message's place on a trace line (the file is set by the caller).
MessageLocation line_location(int line, std::string pointer) {
  return MessageLocation{{}, std::move(pointer), line > 0 ? static_cast<std::uint32_t>(line) : 0};
}

// The lines of one parsed trace file. The first line naming another definition ends the checks.
void check_lines(const DefinitionJob& job, const LoadedTraceFile& t,
                 const std::set<std::string>& solutions, CheckResult& r) {
  const std::string& author = t.file->author;
  for (const TraceLine& line : t.lines) {
    const Trace& trace = line.trace;
    if (trace.definition != job.name) {
      r.add(codes::k_dataset_trace_definition_mismatch,
            fmt::format("{}: trace definition '{}' != '{}'", author, trace.definition, job.name))
          .where = line_location(line.line, "/definition");
      break;
    }
    if (!trace.solution || !trace.evaluation) {
      r.add(codes::k_trace_not_evaluated,
            fmt::format("{}: trace entry {} missing solution or evaluation", author,
                        trace.workload.uuid))
          .where = line_location(line.line, trace.solution ? "/evaluation" : "/solution");
      continue;
    }
    if (!solutions.contains(*trace.solution)) {
      r.add(codes::k_dataset_trace_unknown_solution,
            fmt::format("{}: trace references unknown solution '{}'", author, *trace.solution))
          .where = line_location(line.line, "/solution");
    }
  }
}

// Coverage of the workload file (every line counts, including those after a definition
// mismatch), and fib's warning for lines naming workloads that are not in it.
void check_coverage(const LoadedTraceFile& t, const std::set<std::string>& uuids, CheckResult& r) {
  const std::string& author = t.file->author;
  std::set<std::string> seen;
  std::size_t unknown_workloads = 0;
  std::string first_unknown;
  int first_unknown_line = 0;
  for (const TraceLine& line : t.lines) {
    const std::string& uuid = line.trace.workload.uuid;
    seen.insert(uuid);
    if (!uuids.empty() && !uuids.contains(uuid) && unknown_workloads++ == 0) {
      first_unknown = uuid;
      first_unknown_line = line.line;
    }
  }
  if (!t.lines.empty() && !uuids.empty()) {
    std::size_t missing = 0;
    for (const std::string& u : uuids) {
      missing += seen.contains(u) ? 0 : 1;
    }
    if (missing > 0) {
      r.add(codes::k_dataset_trace_coverage,
            fmt::format("{} missing {}/{} workloads", author, missing, uuids.size()));
    }
  }
  if (unknown_workloads > 0) {
    r.add(codes::k_dataset_trace_unknown_workload,
          fib_message(fmt::format("{}: {} trace entr{} name workloads that are not in the "
                                  "workload file (first: {})",
                                  author, unknown_workloads, unknown_workloads == 1 ? "y" : "ies",
                                  first_unknown)))
        .where = line_location(first_unknown_line, "/workload/uuid");
  }
}

// fib's warning for lines that repeat an earlier line's evaluation (trace_identity: the same
// solution, workload and settings), which every count and score then takes twice.
void check_duplicates(const LoadedTraceFile& t, CheckResult& r) {
  std::map<TraceIdentity, int> first_line;
  std::size_t repeats = 0;
  int example_line = 0;
  int example_first = 0;
  for (const TraceLine& line : t.lines) {
    auto identity = trace_identity(line.trace);
    if (!identity) {
      continue;
    }
    const auto [it, added] = first_line.emplace(std::move(*identity), line.line);
    if (!added && repeats++ == 0) {
      example_line = line.line;
      example_first = it->second;
    }
  }
  if (repeats > 0) {
    r.add(codes::k_dataset_trace_duplicate,
          fib_message(fmt::format("{}: {} trace entr{} repeat{} an earlier entry's solution, "
                                  "workload and settings (first: line {} repeats line {})",
                                  t.file->author, repeats, repeats == 1 ? "y" : "ies",
                                  repeats == 1 ? "s" : "", example_line, example_first)))
        .where = line_location(example_line, "");
  }
}

} // namespace

std::optional<CheckResult> check_trace(const DefinitionJob& job, const CategoryContext& context) {
  CheckResult r;
  if (job.traces.empty()) {
    r.add(codes::k_dataset_trace_none, "no trace files");
    return r;
  }
  const std::set<std::string> uuids = workload_uuids(job);
  const std::set<std::string> solutions = parsed_solution_names(job);
  for (const LoadedTraceFile* t : job.traces) {
    if (!t->parsed) {
      r.add(CheckLevel::error, t->error.code,
            fmt::format("{}: parse error: {}", t->file->author, t->error.text))
          .where = location_in(*t->file, context.root, t->error.line, t->error.pointer);
      continue;
    }
    const std::size_t before = r.messages.size();
    check_lines(job, *t, solutions, r);
    check_coverage(*t, uuids, r);
    check_duplicates(*t, r);
    const std::string file = location_in(*t->file, context.root).file;
    for (std::size_t i = before; i < r.messages.size(); ++i) {
      r.messages[i].where.file = file;
    }
  }
  return r;
}

} // namespace fib::dataset_checks
