#include "fib/collect/collect.hpp"

#include <fib/base/codes.hpp>
#include <fib/collect/api_target.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/dataset_layout.hpp>
#include <fib/util/path_safety.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

namespace fib {
namespace {

namespace fs = std::filesystem;

// Refusals shown per definition and code before the rest are only counted.
constexpr std::size_t k_shown_refusals = 3;

struct SelectedDefinition {
  Definition definition;
  fs::path file;
  std::vector<ApiTarget> targets;
  bool named = false; // selected by --definitions or --op-types
};

bool wanted(const std::vector<std::string>& filter, const std::string& value) {
  return filter.empty() || std::find(filter.begin(), filter.end(), value) != filter.end();
}

Expected<std::vector<SelectedDefinition>> load_definitions(const CollectOptions& options,
                                                           DiagnosticSink& sink) {
  if (const auto problem = dataset_root_problem(options.dataset)) {
    Diagnostic d =
        make_diagnostic(codes::k_io_not_found,
                        fmt::format("dataset root {}: {}", *problem, options.dataset.string()));
    d.file = options.dataset;
    return unexpected(std::move(d));
  }
  const TreeScan scan = scan_tree(options.dataset, DatasetTree::definitions, ScanMode::strict);
  for (const ListingFailure& failure : scan.failures) {
    Diagnostic d = make_diagnostic(
        codes::k_io_read,
        fmt::format("cannot list {}: {}", failure.directory.string(), failure.error.message()));
    d.file = failure.directory;
    return unexpected(std::move(d));
  }
  std::vector<SelectedDefinition> out;
  std::set<std::string> seen_names;
  std::set<std::string> seen_ops;
  for (const LayoutEntry& entry : scan.entries) {
    const LayoutKeys keys = layout_keys(DatasetTree::definitions, entry.components);
    seen_names.insert(keys.name);
    seen_ops.insert(keys.op_type);
    if (!wanted(options.definitions, keys.name) || !wanted(options.op_types, keys.op_type)) {
      continue;
    }
    auto text = read_text_file(entry.path);
    if (!text) {
      sink.report(text.error());
      continue;
    }
    DiagnosticList findings;
    auto document = parse_json(*text, entry.path, findings, 1, LineIndex::skipped);
    if (!document) {
      Diagnostic d = document.error();
      d.severity = Severity::warning;
      sink.report(std::move(d));
      continue;
    }
    SelectedDefinition selected;
    selected.definition = parse_definition(*document, findings);
    if (findings.has_errors()) {
      Diagnostic d = findings.items().front();
      for (const Diagnostic& f : findings.items()) {
        if (f.severity == Severity::error) {
          d = f;
          break;
        }
      }
      d.severity = Severity::warning;
      d.message = "not a definition fib can collect for: " + d.message;
      sink.report(std::move(d));
      continue;
    }
    const auto unsafe = unsafe_segment_reason(selected.definition.name).empty()
                            ? unsafe_segment_reason(selected.definition.op_type)
                            : unsafe_segment_reason(selected.definition.name);
    if (!unsafe.empty()) {
      Diagnostic d = make_diagnostic(
          codes::k_io_unsafe_path,
          fmt::format("definition {}: its name or op_type cannot name a directory of the dataset "
                      "({}); no workloads are written for it",
                      text_excerpt(selected.definition.name), unsafe));
      d.file = entry.path;
      d.pointer = unsafe_segment_reason(selected.definition.name).empty() ? "/op_type" : "/name";
      sink.report(std::move(d));
      continue;
    }
    selected.file = entry.path;
    selected.named = !options.definitions.empty() || !options.op_types.empty();
    selected.targets = api_targets_of(selected.definition.tags);
    out.push_back(std::move(selected));
  }
  for (const auto& [filter, seen, what] :
       {std::tuple{&options.definitions, &seen_names, "--definitions"},
        std::tuple{&options.op_types, &seen_ops, "--op-types"}}) {
    for (const std::string& value : *filter) {
      if (!seen->contains(value)) {
        return unexpected(make_diagnostic(
            codes::k_filter_unmatched, fmt::format("{} {}: no definition of {} has it", what,
                                                   text_excerpt(value), options.dataset.string())));
      }
    }
  }
  return out;
}

// Per-definition state while the dumps are read.
struct Collector {
  SelectedDefinition* selected = nullptr;
  DefinitionCollection summary;
  std::vector<Candidate> candidates;
  std::map<std::string, std::size_t> shown; // code → refusals reported
};

void refuse(Collector& collector, const DumpedCall& call, Diagnostic reason, DiagnosticSink& sink) {
  ++collector.summary.rejected[reason.code];
  if (collector.shown[reason.code]++ < k_shown_refusals) {
    reason.message = fmt::format("definition {}: call {} refused: {}", collector.summary.name,
                                 call.name, reason.message);
    if (reason.file.empty()) {
      // A pointer is into the definition (an input or an axis); otherwise the call is the file.
      reason.file = reason.pointer.empty() ? call.dir : collector.selected->file;
    }
    sink.report(std::move(reason));
  }
}

void report_hidden_refusals(const Collector& collector, DiagnosticSink& sink) {
  for (const auto& [code, count] : collector.summary.rejected) {
    if (count > k_shown_refusals) {
      Diagnostic d = make_diagnostic(
          code, fmt::format("definition {}: {} more call(s) refused for the same reason",
                            collector.summary.name, count - k_shown_refusals));
      d.file = collector.selected->file;
      sink.report(std::move(d));
    }
  }
}

void collect_from_dump(const Level10Dump& dump, std::vector<Collector>& collectors,
                       const CandidateOptions& options, CollectReport& report,
                       DiagnosticSink& sink) {
  for (const DumpedCall& call : dump.calls) {
    ++report.calls_read;
    bool matched = false;
    for (Collector& collector : collectors) {
      for (const ApiTarget& target : collector.selected->targets) {
        if (!is_workload_call(target, call)) {
          continue;
        }
        matched = true;
        ++collector.summary.calls;
        const DumpedCall* plan = paired_plan(target, dump.calls, call);
        auto candidate = build_candidate(collector.selected->definition, call, plan, options);
        if (!candidate) {
          refuse(collector, call, std::move(candidate.error()), sink);
        } else {
          ++collector.summary.accepted;
          for (Diagnostic& note : candidate->notes) {
            ++collector.summary.notes;
            note.message = fmt::format("definition {}: call {}: {}", collector.summary.name,
                                       call.name, note.message);
            sink.report(std::move(note));
          }
          candidate->notes.clear();
          collector.candidates.push_back(std::move(*candidate));
        }
        break; // one target per definition takes a call
      }
    }
    const bool is_plan = call.function_name == "plan" || call.function_name.ends_with(".plan");
    if (!matched && !is_plan) {
      ++report.calls_unmatched;
    }
  }
}

} // namespace

Expected<CollectReport> collect_workloads(const CollectOptions& options, DiagnosticSink& sink) {
  FIB_TRY_ASSIGN(std::vector<SelectedDefinition> definitions, load_definitions(options, sink));
  std::vector<Level10Dump> dumps;
  for (const fs::path& root : options.dumps) {
    FIB_TRY_ASSIGN(Level10Dump dump, read_level10_dump(root));
    dumps.push_back(std::move(dump));
  }
  CollectReport report;
  std::vector<Collector> collectors;
  for (SelectedDefinition& selected : definitions) {
    if (selected.targets.empty()) {
      if (selected.named) {
        Diagnostic d = make_diagnostic(
            codes::k_collect_no_api,
            fmt::format("definition {} has no usable fi_api: tag, so no dumped call can be "
                        "matched to it (add one with fib tag add fi_api:<module>.<API>)",
                        selected.definition.name));
        d.file = selected.file;
        d.pointer = "/tags";
        sink.report(std::move(d));
      }
      continue;
    }
    Collector collector;
    collector.selected = &selected;
    collector.summary.name = selected.definition.name;
    collector.summary.op_type = selected.definition.op_type;
    collectors.push_back(std::move(collector));
  }
  for (const Level10Dump& dump : dumps) {
    for (const RejectedCall& rejected : dump.rejected) {
      ++report.calls_rejected;
      sink.report(rejected.reason);
    }
    collect_from_dump(dump, collectors, options.candidates, report, sink);
  }
  StaleTemporarySweeper sweeper;
  for (Collector& collector : collectors) {
    if (collector.summary.calls == 0 && !collector.selected->named) {
      ++report.definitions_without_calls;
      continue;
    }
    report_hidden_refusals(collector, sink);
    if (collector.summary.accepted == 0) {
      Diagnostic d = make_diagnostic(
          codes::k_collect_no_workloads,
          collector.summary.calls == 0
              ? fmt::format("definition {}: the dumps hold no call of its API",
                            collector.summary.name)
              : fmt::format("definition {}: none of its {} call(s) could become a workload",
                            collector.summary.name, collector.summary.calls));
      d.file = collector.selected->file;
      sink.report(std::move(d));
    }
    std::vector<Diagnostic> notes;
    auto written = write_workloads(options.dataset, collector.selected->definition,
                                   collector.candidates, options.write, sweeper, notes);
    for (Diagnostic& note : notes) {
      sink.report(std::move(note));
    }
    if (!written) {
      return unexpected(std::move(written.error()));
    }
    collector.summary.written = std::move(*written);
    report.definitions.push_back(std::move(collector.summary));
  }
  return report;
}

Expected<std::vector<ApiTarget>> dataset_api_targets(const std::filesystem::path& dataset,
                                                     const std::vector<std::string>& definitions,
                                                     DiagnosticSink& sink) {
  CollectOptions options;
  options.dataset = dataset;
  options.definitions = definitions;
  FIB_TRY_ASSIGN(const std::vector<SelectedDefinition> selected, load_definitions(options, sink));
  std::vector<ApiTarget> out;
  for (const SelectedDefinition& definition : selected) {
    out.insert(out.end(), definition.targets.begin(), definition.targets.end());
  }
  return out;
}

Json collect_report_json(const CollectReport& report) {
  Json out = Json::object();
  out["calls_read"] = report.calls_read;
  out["calls_rejected"] = report.calls_rejected;
  out["calls_unmatched"] = report.calls_unmatched;
  out["definitions_without_calls"] = report.definitions_without_calls;
  Json definitions = Json::array();
  for (const DefinitionCollection& d : report.definitions) {
    Json entry = Json::object();
    entry["name"] = d.name;
    entry["op_type"] = d.op_type;
    entry["calls"] = d.calls;
    entry["accepted"] = d.accepted;
    Json rejected = Json::object();
    for (const auto& [code, count] : d.rejected) {
      rejected[code] = count;
    }
    entry["rejected"] = std::move(rejected);
    entry["duplicates"] = d.written.selection.duplicates;
    entry["axes_capped"] = d.written.selection.axes_capped;
    entry["not_selected"] = d.written.selection.not_selected;
    entry["selected"] = d.written.selection.selected.size();
    entry["existing"] = d.written.existing;
    entry["removed"] = d.written.removed;
    entry["written"] = d.written.uuids.size();
    entry["blobs_written"] = d.written.blobs_written;
    entry["blobs_removed"] = d.written.blobs_removed;
    entry["uuids"] = d.written.uuids;
    entry["file"] = d.written.file.generic_string();
    definitions.push_back(std::move(entry));
  }
  out["definitions"] = std::move(definitions);
  return out;
}

} // namespace fib
