// The baseline category: the definition has solutions by the `baseline` author, they build (in
// the worker), and their trace file passes and covers the workloads.

#include "validate/dataset_job.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace fib::dataset_checks {
namespace {

// The last non-empty line of a build log: what the old tool's exception text would say.
std::string last_line(const std::string& log) {
  std::size_t end = log.size();
  while (end > 0) {
    const std::size_t start = log.rfind('\n', end - 1);
    const std::size_t from = start == std::string::npos ? 0 : start + 1;
    if (end > from) {
      return log.substr(from, end - from);
    }
    if (start == std::string::npos) {
      break;
    }
    end = start;
  }
  return log;
}

// The solutions line, then the builds (or why they did not run).
void check_solutions(const DefinitionJob& job, const std::vector<const LoadedSolution*>& baselines,
                     GpuChecks gpu, CheckResult& r) {
  if (baselines.empty()) {
    r.add(codes::k_dataset_baseline_none, "no baseline solution");
    return;
  }
  std::vector<std::string> stems;
  for (const LoadedSolution* s : baselines) {
    stems.push_back(s->file->name);
  }
  r.add(codes::k_dataset_baseline_solutions, fmt::format("solution: {}", fmt::join(stems, ", ")));
  if (job.baseline_build_messages) {
    for (const CheckMessage& message : *job.baseline_build_messages) {
      r.add(message);
    }
  } else if (gpu == GpuChecks::enabled && job.definition->loaded()) {
    r.add(codes::k_dataset_baseline_build_not_run,
          fib_message("baseline builds not run: the reference worker is not available (use "
                      "--disable-gpu to silence this)"));
  }
}

// The lines of the parsed baseline trace file: solutions, statuses, coverage.
void check_trace_lines(const DefinitionJob& job, const LoadedTraceFile& trace,
                       const std::vector<const LoadedSolution*>& baselines, CheckResult& r) {
  std::set<std::string> baseline_names;
  for (const LoadedSolution* s : baselines) {
    baseline_names.insert(s->file->name);
  }
  for (const TraceLine& line : trace.lines) {
    const auto& solution = line.trace.solution;
    if (solution && !solution->empty() && !baseline_names.contains(*solution)) {
      r.add(codes::k_dataset_baseline_foreign_solution,
            fmt::format("trace references non-baseline solution '{}'", *solution))
          .where = MessageLocation{{}, "/solution", static_cast<std::uint32_t>(line.line)};
      break;
    }
  }
  std::size_t failing = 0;
  std::set<std::string> covered;
  for (const TraceLine& line : trace.lines) {
    if (line.trace.evaluation && line.trace.evaluation->status != EvaluationStatus::passed) {
      ++failing;
    }
    covered.insert(line.trace.workload.uuid);
  }
  if (failing > 0) {
    r.add(codes::k_dataset_baseline_trace_failing,
          fmt::format("trace has {} non-passing entries", failing));
  } else {
    r.add(codes::k_dataset_baseline_trace_passed, "trace: all passed");
  }
  const std::set<std::string> uuids = workload_uuids(job);
  if (uuids.empty()) {
    return;
  }
  if (std::all_of(uuids.begin(), uuids.end(),
                  [&](const std::string& u) { return covered.contains(u); })) {
    r.add(codes::k_dataset_baseline_trace_covered,
          fmt::format("trace: {}/{} workloads", covered.size(), uuids.size()));
  } else {
    r.add(codes::k_dataset_baseline_trace_coverage,
          fmt::format("trace covers {}/{} workloads", covered.size(), uuids.size()));
  }
}

} // namespace

std::optional<CheckResult> check_baseline(const DefinitionJob& job,
                                          const CategoryContext& context) {
  CheckResult r;
  const std::vector<const LoadedSolution*> baselines = baseline_solutions(job);
  check_solutions(job, baselines, context.gpu, r);
  const LoadedTraceFile* trace = nullptr;
  for (const LoadedTraceFile* t : job.traces) {
    if (t->file->author == "baseline") {
      trace = t;
    }
  }
  if (trace == nullptr) {
    if (!baselines.empty()) {
      r.add(codes::k_dataset_baseline_trace_missing, "trace missing");
    }
    return r;
  }
  if (!trace->parsed) {
    r.add(CheckLevel::error, trace->error.code,
          fmt::format("trace parse error: {}", trace->error.text))
        .where = location_in(*trace->file, context.root, trace->error.line, trace->error.pointer);
    return r;
  }
  const std::size_t before = r.messages.size();
  check_trace_lines(job, *trace, baselines, r);
  const MessageLocation in_trace = location_in(*trace->file, context.root);
  for (std::size_t i = before; i < r.messages.size(); ++i) {
    r.messages[i].where.file = in_trace.file;
  }
  return r;
}

void run_baseline_builds(DefinitionJob& job, ReferenceRunner& runner,
                         const std::filesystem::path& cache, const std::filesystem::path& root) {
  std::vector<CheckMessage> messages;
  for (const LoadedSolution* s : baseline_solutions(job)) {
    if (!s->parsed) {
      continue;
    }
    auto built = runner.build_solution(s->solution, cache);
    if (built.verdict == ReferenceVerdict::unavailable) {
      return; // the category says the builds did not run
    }
    messages.push_back(
        built.verdict == ReferenceVerdict::ok
            ? CheckMessage{CheckLevel::info, fmt::format("build {}: ok", s->file->name),
                           codes::k_dataset_baseline_build_ok, location_in(*s->file, root)}
            : CheckMessage{CheckLevel::error,
                           fmt::format("build {} failed: {}", s->file->name, last_line(built.log)),
                           codes::k_dataset_baseline_build_failed, location_in(*s->file, root)});
  }
  job.baseline_build_messages = std::move(messages);
}

} // namespace fib::dataset_checks
