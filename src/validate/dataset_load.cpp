// Reading and parsing the files of dataset validation, with the old tool's error texts.

#include "validate/dataset_job.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace fib::dataset_checks {
namespace {

std::vector<Diagnostic> legacy_errors(const DiagnosticList& list) {
  std::vector<Diagnostic> out;
  for (const Diagnostic& d : list.items()) {
    if (is_legacy_error(d)) {
      out.push_back(d);
    }
  }
  return out;
}

// The load error of `model`: the old tool's text, and the code of the first error.
LoadError load_error(std::string_view model, const std::vector<Diagnostic>& errors) {
  const Diagnostic& first = errors.front();
  return LoadError{first.code, validation_error_text(model, errors), first.line, first.pointer};
}

bool is_model_level(std::string_view code) {
  const CodeInfo* info = find_code(code);
  return info != nullptr && info->scope == ErrorScope::model;
}

} // namespace

bool is_legacy_error(const Diagnostic& d) {
  const CodeInfo* info = find_code(d.code);
  return d.severity == Severity::error && info != nullptr && info->origin == CheckOrigin::legacy;
}

std::string validation_error_text(std::string_view model, const std::vector<Diagnostic>& errors) {
  std::string text = fmt::format("{} validation error{} for {}", errors.size(),
                                 errors.size() == 1 ? "" : "s", model);
  for (const Diagnostic& d : errors) {
    std::string message = d.message;
    if (d.code == codes::k_json_parse || d.code == codes::k_json_too_deep ||
        d.code == codes::k_json_too_large) {
      message = "Invalid JSON: " + message.substr(message.find(':') + 2);
    }
    if (is_model_level(d.code)) {
      text += fmt::format("\n  Value error, {}", message);
    } else if (d.pointer.empty()) {
      text += fmt::format("\n  {}", message);
    } else {
      std::string location = d.pointer.substr(1);
      std::replace(location.begin(), location.end(), '/', '.');
      text += fmt::format("\n{}\n  {}", location, message);
    }
  }
  return text;
}

void load_definition(LoadedDefinition& out) {
  load_definition(out, read_text_file(out.entry->file.path));
}

void load_trace_file(LoadedTraceFile& out) {
  load_trace_file(out, read_text_file(out.file->path));
}

void load_solution(LoadedSolution& out) {
  load_solution(out, read_text_file(out.file->path));
}

void load_definition(LoadedDefinition& out, const Expected<std::string>& text) {
  const auto& path = out.entry->file.path;
  if (!text) {
    out.errors.push_back(text.error());
    return;
  }
  // The report shows no line numbers, so the line index is not built.
  auto document = parse_json(*text, path, out.findings, 1, LineIndex::skipped);
  if (!document) {
    out.errors.push_back(document.error());
    return;
  }
  out.definition = parse_definition(*document, out.findings);
  out.document = std::move(*document);
  out.errors = legacy_errors(out.findings);
}

void load_trace_file(LoadedTraceFile& out, const Expected<std::string>& text) {
  if (!text) {
    out.error = LoadError{text.error().code, text.error().message, 0, {}};
    return;
  }
  for (const JsonlLine& line : split_jsonl_lines(*text)) {
    DiagnosticList sink;
    // As the old tool does, each line is parsed as a document of its own: positions in its
    // messages count from the line's start, and the file's line number follows them.
    auto parsed = parse_trace_line(JsonlLine{1, line.text}, out.file->path, TraceFileKind::any,
                                   sink, LineIndex::skipped);
    std::vector<Diagnostic> errors = legacy_errors(sink);
    if (!errors.empty()) {
      // One bad line fails the whole file, as in the old tool.
      out.error = load_error("Trace", errors);
      out.error.text += fmt::format(" (line {})", line.line);
      out.error.line = line.line;
      out.lines.clear();
      return;
    }
    if (!parsed) {
      continue;
    }
    parsed->line = line.line;
    out.lines.push_back(std::move(*parsed));
  }
  out.parsed = true;
}

void load_solution(LoadedSolution& out, const Expected<std::string>& text) {
  if (!text) {
    out.error = LoadError{text.error().code, text.error().message, 0, {}};
    return;
  }
  DiagnosticList sink;
  auto document = parse_json(*text, out.file->path, sink, 1, LineIndex::skipped);
  if (!document) {
    out.error = load_error("Solution", {document.error()});
    return;
  }
  out.solution = parse_solution(*document, sink);
  const auto errors = legacy_errors(sink);
  if (!errors.empty()) {
    out.error = load_error("Solution", errors);
    return;
  }
  out.parsed = true;
}

std::string init_source(const LoadedDefinition& definition) {
  if (!definition.document || !definition.document->root.is_object()) {
    return "";
  }
  const auto it = definition.document->root.find("init");
  return it != definition.document->root.end() && it->is_string() ? it->get<std::string>() : "";
}

} // namespace fib::dataset_checks
