#include "fib/validate/files.hpp"

#include "util/file_walk.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/definition.hpp>
#include <fib/model/solution.hpp>
#include <fib/model/trace.hpp>
#include <fib/validate/old_schema.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

namespace fib {
namespace {

// Nearest ancestor directory whose name is one of `names`; "" when none.
std::string nearest_named_parent(const std::filesystem::path& file,
                                 std::initializer_list<std::string_view> names) {
  for (auto dir = file.parent_path(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path()) {
    const std::string name = dir.filename().string();
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      return name;
    }
    if (dir == dir.parent_path()) {
      break;
    }
  }
  return {};
}

// Expands directories into their *.json / *.jsonl files, sorted by path components.
std::vector<std::filesystem::path> expand_paths(const std::vector<std::filesystem::path>& paths,
                                                DiagnosticSink& sink) {
  std::vector<std::filesystem::path> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      files.push_back(path);
      continue;
    }
    // Reports that `fib validate --dataset` wrote into DATASET/reports are not dataset files.
    auto found = detail::list_files_below(path, {".json", ".jsonl"});
    for (Diagnostic& error : found.errors) {
      sink.report(std::move(error));
    }
    files.insert(files.end(), found.files.begin(), found.files.end());
  }
  return files;
}

FileKind detect_jsonl_kind(const std::filesystem::path& file, std::string_view text) {
  const std::string parent = nearest_named_parent(file, {"workloads", "traces"});
  if (parent == "workloads") {
    return FileKind::workload;
  }
  if (parent == "traces") {
    return FileKind::trace;
  }
  DiagnosticList ignored;
  for (const JsonlLine& line : split_jsonl_lines(text)) {
    auto doc = parse_json(line.text, file, ignored, line.line);
    if (doc && doc->root.is_object()) {
      const auto has = [&](const char* key) {
        const auto it = doc->root.find(key);
        return it != doc->root.end() && !it->is_null();
      };
      if (has("solution") || has("evaluation")) {
        return FileKind::trace;
      }
    }
  }
  return FileKind::workload;
}

// `root` is null when the file is not JSON.
FileKind detect_json_kind(const std::filesystem::path& file, const Json* root) {
  if (root != nullptr && root->is_object()) {
    if (root->contains("sources") || root->contains("spec")) {
      return FileKind::solution;
    }
    for (const char* key : {"reference", "axes", "inputs", "outputs", "op_type"}) {
      if (root->contains(key)) {
        return FileKind::definition;
      }
    }
  }
  const std::string parent = nearest_named_parent(file, {"definitions", "solutions"});
  if (parent == "definitions") {
    return FileKind::definition;
  }
  if (parent == "solutions") {
    return FileKind::solution;
  }
  return FileKind::automatic;
}

} // namespace

FileKind detect_file_kind(const std::filesystem::path& file, std::string_view text) {
  if (file.extension() == ".jsonl") {
    return detect_jsonl_kind(file, text);
  }
  DiagnosticList ignored;
  auto doc = parse_json(text, file, ignored);
  return detect_json_kind(file, doc ? &doc->root : nullptr);
}

std::optional<Diagnostic> validate_definition_document(const JsonDocument& document,
                                                       PythonFrontend& python,
                                                       DiagnosticSink& sink) {
  DiagnosticList schema;
  const Definition definition = parse_definition(document, schema);
  for (const Diagnostic& d : schema.items()) {
    sink.report(d);
  }
  if (!document.root.is_object()) {
    return std::nullopt;
  }
  const std::optional<Diagnostic> python_failure =
      check_definition_python(definition, document, python, ArityCheck::yes, sink);
  lint_definition(definition, document, sink);
  return python_failure;
}

namespace {

// Validates files one at a time, remembering across files whether Python is usable.
class FileValidator {
public:
  FileValidator(const ValidateFilesOptions& options, PythonFrontend& python)
      : m_options(options), m_python(&python) {}

  void validate(const std::filesystem::path& file, DiagnosticSink& sink) {
    auto text = read_text_file(file, m_options.max_file_bytes);
    if (!text) {
      sink.report(text.error());
      return;
    }
    if (file.extension() == ".jsonl" || m_options.kind == FileKind::workload ||
        m_options.kind == FileKind::trace) {
      FileKind kind = m_options.kind;
      if (kind != FileKind::workload && kind != FileKind::trace) {
        kind = detect_jsonl_kind(file, *text);
      }
      std::ignore = parse_trace_lines(
          *text, file, kind == FileKind::workload ? TraceFileKind::workload : TraceFileKind::trace,
          sink);
      return;
    }
    // One JSON document: parse once, then decide what it is.
    DiagnosticList parse_warnings;
    auto document = parse_json(*text, file, parse_warnings);
    if (!document) {
      sink.report(document.error());
      return;
    }
    const FileKind kind = m_options.kind != FileKind::automatic
                              ? m_options.kind
                              : detect_json_kind(file, &document->root);
    if (kind == FileKind::automatic) {
      Diagnostic d = make_diagnostic(
          codes::k_file_kind_unknown,
          "cannot tell whether this is a definition, solution, workload or trace file");
      d.file = file;
      d.hint = "name it with --kind, or keep it under definitions/, solutions/, workloads/ or "
               "traces/";
      sink.report(std::move(d));
      return;
    }
    for (const Diagnostic& warning : parse_warnings.items()) {
      sink.report(warning);
    }
    if (kind == FileKind::solution) {
      std::ignore = parse_solution(*document, sink);
      return;
    }
    DiagnosticList definition_sink;
    if (auto failure = validate_definition_document(*document, *m_python, definition_sink)) {
      // Python is unusable: say so once, then skip the Python-exact checks.
      if (!m_python_failure_reported) {
        definition_sink.report(std::move(*failure));
      }
      m_python = &m_no_python;
      m_python_failure_reported = true;
    }
    for (const Diagnostic& d : definition_sink.items()) {
      sink.report(d);
    }
    if (m_options.reference_checks != ReferenceChecks::none && m_options.runner != nullptr &&
        !definition_sink.has_errors()) {
      DiagnosticList ignored;
      const Definition definition = parse_definition(*document, ignored);
      for (Diagnostic d :
           run_reference_checks(definition, m_options.reference_checks, *m_options.runner,
                                document->root.value("init", std::string()))) {
        // A machine without the sandbox is said once, at the first file, not for every file.
        if (d.code == codes::k_sandbox_unavailable && m_sandbox_refusal_reported) {
          continue;
        }
        m_sandbox_refusal_reported =
            m_sandbox_refusal_reported || d.code == codes::k_sandbox_unavailable;
        d.file = file;
        if (d.pointer.empty()) {
          d.pointer = "/reference";
        }
        d.line = document->line_of(d.pointer);
        sink.report(std::move(d));
      }
    }
  }

private:
  const ValidateFilesOptions& m_options;
  PythonFrontend* m_python; // becomes &m_no_python after the first failure
  NoPython m_no_python;
  bool m_python_failure_reported = false;
  bool m_sandbox_refusal_reported = false;
};

} // namespace

namespace {

// A directory argument holding files of the Aug 2025 schema: one warning for the directory (the
// files' own errors follow), with the counts and what to rename.
void report_old_schema_directories(const std::vector<std::filesystem::path>& paths,
                                   DiagnosticSink& sink) {
  for (const auto& path : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      continue;
    }
    const auto message =
        old_schema_message(find_old_schema_signs(path), path, DefinitionsLoaded::some);
    if (!message) {
      continue;
    }
    constexpr std::string_view k_prefix = "[fib] ";
    std::string_view text = message->message;
    if (text.starts_with(k_prefix)) {
      text.remove_prefix(k_prefix.size());
    }
    Diagnostic d = make_diagnostic(codes::k_dataset_old_schema, std::string(text));
    d.severity = Severity::warning;
    d.file = path;
    sink.report(std::move(d));
  }
}

} // namespace

ValidateSummary validate_files(const ValidateFilesOptions& options, PythonFrontend& python,
                               DiagnosticSink& sink) {
  ValidateSummary summary;
  report_old_schema_directories(options.paths, sink);
  FileValidator validator(options, python);
  for (const auto& file : expand_paths(options.paths, sink)) {
    // A file's findings are reported in line order once all its checks ran.
    DiagnosticList file_sink;
    validator.validate(file, file_sink);
    std::vector<Diagnostic> items = file_sink.items();
    std::stable_sort(items.begin(), items.end(),
                     [](const Diagnostic& a, const Diagnostic& b) { return a.line < b.line; });
    ++summary.files;
    for (Diagnostic& d : items) {
      sink.report(std::move(d));
    }
  }
  return summary;
}

} // namespace fib
