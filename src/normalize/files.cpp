// normalize_files: `fib normalize PATH…` over files and directories, with atomic writes and the
// core validator's verdict on every result; and the --report document.

#include "fib/normalize/normalize.hpp"

#include "util/file_walk.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/atomic_file.hpp>
#include <fib/validate/files.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <system_error>

namespace fib {
namespace {

struct InputFile {
  std::filesystem::path path;
  std::filesystem::path relative; // where it lands below --output-dir
};

Diagnostic file_diagnostic(std::string_view code, const std::filesystem::path& file,
                           std::string message) {
  Diagnostic d = make_diagnostic(code, std::move(message));
  d.file = file;
  return d;
}

void skip(NormalizedFile& out, Diagnostic diagnostic) {
  if (diagnostic.file.empty()) {
    diagnostic.file = out.input;
  }
  out.findings.push_back(RuleFinding{std::move(diagnostic), FindingKind::question});
  out.verdict = NormalizeVerdict::skipped;
}

// Directories expand to their *.json files (sorted; symbolic links to directories not followed;
// report files skipped; files matching an --exclude glob left out). Problems listing a directory
// are returned as skipped files.
std::vector<InputFile> expand(const std::vector<std::filesystem::path>& paths,
                              const std::vector<std::string>& exclude,
                              std::vector<NormalizedFile>& problems) {
  std::vector<InputFile> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      files.push_back(InputFile{path, path.filename()});
      continue;
    }
    auto found = detail::list_files_below(path, {".json"});
    for (Diagnostic& error : found.errors) {
      NormalizedFile problem;
      problem.input = error.file;
      skip(problem, std::move(error));
      problems.push_back(std::move(problem));
    }
    for (const auto& file : found.files) {
      if (detail::matches_any_glob(exclude, file, path)) {
        continue;
      }
      files.push_back(InputFile{file, file.lexically_relative(path)});
    }
  }
  return files;
}

// A name usable as a file name: not empty, no separator, not "." or "..".
bool is_plain_file_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of("/\\") == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

class FileNormalizer {
public:
  FileNormalizer(const NormalizeFilesOptions& options, PythonFrontend& python)
      : m_options(options), m_python(python) {}

  NormalizedFile run(const InputFile& input) {
    NormalizedFile out;
    out.input = input.path;
    auto text = read_text_file(input.path, m_options.max_file_bytes);
    if (!text) {
      skip(out, text.error());
      return out;
    }
    out.original_text = std::move(*text);
    DiagnosticList parse_notes;
    auto document = parse_json(out.original_text, input.path, parse_notes);
    if (!document) {
      skip(out, document.error());
      return out;
    }
    for (const auto& note : parse_notes.items()) {
      Diagnostic d = note;
      out.findings.push_back(RuleFinding{std::move(d), FindingKind::applied});
    }
    auto normalized = normalize_definition(*document, m_options.rules, m_python);
    if (!normalized) {
      skip(out, normalized.error());
      return out;
    }
    out.normalized_text = canonical_json_text(normalized->document);
    out.changed = out.normalized_text != out.original_text;
    out.decisions_entry = normalized->decisions_entry;
    for (auto& finding : normalized->findings) {
      finding.diagnostic.line = 0;
      out.findings.push_back(std::move(finding));
    }
    if (out.changed && !normalized->changed) {
      Diagnostic d = make_diagnostic(codes::k_normalize_n0,
                                     "re-encoded as canonical JSON (2-space indent, UTF-8, "
                                     "trailing newline); the values are unchanged");
      d.file = input.path;
      out.findings.push_back(RuleFinding{std::move(d), FindingKind::applied});
    }
    const auto original_name = document->root.find("name");
    const std::string name_before =
        original_name != document->root.end() && original_name->is_string()
            ? original_name->get<std::string>()
            : std::string();
    validate(out, input.path);
    const bool finding_error =
        std::any_of(out.findings.begin(), out.findings.end(),
                    [](const RuleFinding& f) { return f.diagnostic.severity == Severity::error; });
    if (finding_error) {
      out.verdict = NormalizeVerdict::invalid; // e.g. normalize.decision-outputs
    }
    write(out, input, normalized->document, name_before);
    return out;
  }

private:
  void validate(NormalizedFile& out, const std::filesystem::path& file) {
    DiagnosticList sink;
    auto document = parse_json(out.normalized_text, file, sink);
    if (!document) {
      sink.report(document.error());
    } else if (auto environment = validate_definition_document(*document, m_python, sink)) {
      sink.report(*environment);
    }
    out.validation = sink.items();
    out.verdict = sink.has_errors() ? NormalizeVerdict::invalid : NormalizeVerdict::valid;
  }

  // `name_before`: the definition's name in the input ("" when it had none).
  void write(NormalizedFile& out, const InputFile& input, const Json& document,
             const std::string& name_before) {
    std::filesystem::path target;
    if (m_options.write == NormalizeWrite::in_place) {
      if (!out.changed) {
        return;
      }
      std::error_code ec;
      if (std::filesystem::is_symlink(input.path, ec)) {
        out.findings.push_back(RuleFinding{
            file_diagnostic(codes::k_io_write, input.path,
                            "is a symbolic link; not replaced (normalize its target instead)"),
            FindingKind::question});
        return;
      }
      target = input.path;
    } else if (m_options.write == NormalizeWrite::output_dir) {
      std::filesystem::path relative = input.relative;
      // A definition renamed by the decisions file keeps the `<name>.json` convention.
      const auto name = document.find("name");
      if (name != document.end() && name->is_string() && !name_before.empty() &&
          relative.stem() == name_before) {
        const std::string new_name = name->get<std::string>();
        if (is_plain_file_name(new_name) && new_name != name_before) {
          relative.replace_filename(new_name + ".json");
        }
      }
      target = m_options.output_dir / relative;
      const std::string key = target.lexically_normal().string();
      if (!m_targets.insert(key).second) {
        out.findings.push_back(RuleFinding{
            file_diagnostic(codes::k_normalize_output_collision, input.path,
                            fmt::format("another input was already written to {}; this one is "
                                        "not written",
                                        target.string())),
            FindingKind::question});
        return;
      }
    } else {
      return;
    }
    // In place, the new file keeps the replaced one's permission bits; they are set before the
    // rename, so that a kill at any moment leaves the file with its own bits.
    FileMode mode;
    if (m_options.write == NormalizeWrite::in_place) {
      std::error_code status_ec;
      const auto original = std::filesystem::status(target, status_ec);
      if (!status_ec) {
        mode = original.permissions();
      }
    }
    m_sweeper.remove_stale_beside(target);
    auto written = write_file_atomically(target, out.normalized_text, Overwrite::allowed, mode);
    if (!written) {
      Diagnostic d = written.error();
      if (d.file.empty()) {
        d.file = target;
      }
      out.findings.push_back(RuleFinding{std::move(d), FindingKind::question});
      return;
    }
    out.written = target;
  }

  const NormalizeFilesOptions& m_options;
  PythonFrontend& m_python;
  std::set<std::string> m_targets;
  // Created with the normalizer: its start is the run's start.
  StaleTemporarySweeper m_sweeper;
};

Json diagnostic_json(const Diagnostic& d) {
  Json entry = Json::object();
  if (const auto* rule = rule_of_code(d.code)) {
    entry["rule"] = std::string(rule->id);
  }
  entry["code"] = d.code;
  entry["severity"] = std::string(to_string(d.severity));
  entry["pointer"] = d.pointer;
  if (d.line > 0) {
    entry["line"] = d.line;
  }
  entry["message"] = d.message;
  if (!d.hint.empty()) {
    entry["hint"] = d.hint;
  }
  return entry;
}

} // namespace

std::vector<Diagnostic> all_diagnostics(const NormalizedFile& file) {
  std::vector<Diagnostic> diagnostics;
  diagnostics.reserve(file.findings.size() + file.validation.size());
  for (const auto& finding : file.findings) {
    diagnostics.push_back(finding.diagnostic);
  }
  diagnostics.insert(diagnostics.end(), file.validation.begin(), file.validation.end());
  return diagnostics;
}

NormalizeSummary normalize_files(const NormalizeFilesOptions& options, PythonFrontend& python,
                                 const std::function<void(const NormalizedFile&)>& on_file) {
  NormalizeSummary summary;
  std::vector<NormalizedFile> problems;
  const auto inputs = expand(options.paths, options.exclude, problems);
  const auto count = [&](const NormalizedFile& file) {
    ++summary.files;
    summary.changed += file.changed ? 1 : 0;
    summary.valid += file.verdict == NormalizeVerdict::valid ? 1 : 0;
    summary.invalid += file.verdict == NormalizeVerdict::invalid ? 1 : 0;
    summary.skipped += file.verdict == NormalizeVerdict::skipped ? 1 : 0;
    const bool asks = std::any_of(file.findings.begin(), file.findings.end(), [](const auto& f) {
      return f.kind == FindingKind::question && f.diagnostic.severity != Severity::error;
    });
    summary.decisions_needed += asks ? 1 : 0;
  };
  for (const auto& problem : problems) {
    count(problem);
    on_file(problem);
  }
  FileNormalizer normalizer(options, python);
  std::set<std::string> used_decisions;
  for (const auto& input : inputs) {
    const NormalizedFile file = normalizer.run(input);
    count(file);
    used_decisions.insert(file.decisions_entry);
    on_file(file);
  }
  if (options.rules.decisions != nullptr) {
    summary.diagnostics = unused_decisions(*options.rules.decisions, used_decisions);
  }
  return summary;
}

Json normalize_report_entry(const NormalizedFile& file) {
  Json entry = Json::object();
  entry["file"] = file.input.string();
  entry["written"] = file.written ? Json(file.written->string()) : Json(nullptr);
  entry["changed"] = file.changed;
  entry["verdict"] = std::string(to_string(file.verdict));
  Json applied = Json::array();
  Json advice = Json::array();
  Json questions = Json::array();
  Json errors = Json::array();
  for (const auto& finding : file.findings) {
    Json item = diagnostic_json(finding.diagnostic);
    if (finding.diagnostic.severity == Severity::error) {
      errors.push_back(std::move(item)); // why the file was skipped or not written
      continue;
    }
    switch (finding.kind) {
    case FindingKind::applied:
      applied.push_back(std::move(item));
      break;
    case FindingKind::advice:
      advice.push_back(std::move(item));
      break;
    case FindingKind::question:
      questions.push_back(std::move(item));
      break;
    }
  }
  entry["applied"] = std::move(applied);
  entry["warnings"] = std::move(advice);
  entry["decisions_needed"] = std::move(questions);
  entry["errors"] = std::move(errors);
  Json validation = Json::array();
  for (const auto& d : file.validation) {
    validation.push_back(diagnostic_json(d));
  }
  entry["validation"] = std::move(validation);
  return entry;
}

Json normalize_report(const std::vector<Json>& entries, const NormalizeSummary& summary) {
  Json report = Json::object();
  report["fib_normalize_report"] = 1;
  report["summary"] =
      Json{{"files", summary.files},     {"changed", summary.changed},
           {"valid", summary.valid},     {"invalid", summary.invalid},
           {"skipped", summary.skipped}, {"decisions_needed", summary.decisions_needed}};
  report["files"] = entries;
  return report;
}

} // namespace fib
