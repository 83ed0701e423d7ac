// What depends on a staged definition, checked against a replacement with the validator's own
// workload checks.

#include "fib/validate/dependents.hpp"

#include "validate/dataset_job.hpp"

#include <fib/base/codes.hpp>
#include <fib/validate/dataset.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

namespace fib {
namespace {

using dataset_checks::LoadedTraceFile;
using dataset_checks::WorkloadLines;

template <class Map> std::vector<std::string> names_in_order(const Map& map) {
  std::vector<std::string> names;
  for (const auto& entry : map) {
    names.push_back(entry.first);
  }
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

// The lines of one workload or trace file that the incoming definition breaks.
void check_lines(const ScannedFile& scanned, WorkloadLines kind, const std::filesystem::path& root,
                 const Definition& staged, const Definition& incoming, DependentsCheck& out) {
  LoadedTraceFile file;
  file.file = &scanned;
  dataset_checks::load_trace_file(file);
  if (!file.parsed) {
    return;
  }
  const auto before = dataset_checks::workload_line_errors(staged, root, file, kind);
  const auto after = dataset_checks::workload_line_errors(incoming, root, file, kind);
  std::size_t& total =
      kind == WorkloadLines::workload_file ? out.total.workloads : out.total.traces;
  std::size_t& broken =
      kind == WorkloadLines::workload_file ? out.broken.workloads : out.broken.traces;
  for (std::size_t i = 0; i < file.lines.size(); ++i) {
    ++total;
    if (after[i].empty() || !before[i].empty()) {
      continue;
    }
    ++broken;
    const CheckMessage& first = after[i].front();
    Diagnostic d = make_diagnostic(
        first.code.empty() ? codes::k_stage_overwrite_breaks : first.code, first.message);
    d.severity = Severity::error;
    d.file = scanned.path;
    d.line = file.lines[i].line;
    out.breakages.push_back(std::move(d));
  }
}

} // namespace

DependentsCheck check_dependents(const std::filesystem::path& root, const Definition& staged,
                                 const Definition& incoming) {
  DependentsCheck out;
  const DatasetScan scan = scan_dataset(root);
  const std::string& name = incoming.name;
  if (const auto it = scan.workloads.find(name); it != scan.workloads.end()) {
    check_lines(it->second, WorkloadLines::workload_file, root, staged, incoming, out);
  }
  const bool arguments_changed = names_in_order(staged.inputs) != names_in_order(incoming.inputs) ||
                                 names_in_order(staged.outputs) != names_in_order(incoming.outputs);
  for (const ScannedFile& solution : scan.solutions) {
    if (solution.definition != name) {
      continue;
    }
    ++out.total.solutions;
    if (!arguments_changed) {
      continue;
    }
    ++out.broken.solutions;
    Diagnostic d = make_diagnostic(
        codes::k_stage_overwrite_breaks,
        fmt::format("solution '{}' takes the definition's inputs and outputs in order: inputs "
                    "({}) become ({}), outputs ({}) become ({})",
                    solution.name, joined(names_in_order(staged.inputs)),
                    joined(names_in_order(incoming.inputs)), joined(names_in_order(staged.outputs)),
                    joined(names_in_order(incoming.outputs))));
    d.file = solution.path;
    out.breakages.push_back(std::move(d));
  }
  for (const auto& [key, trace] : scan.traces) {
    if (trace.name == name) {
      check_lines(trace, WorkloadLines::trace_file, root, staged, incoming, out);
    }
  }
  return out;
}

} // namespace fib
