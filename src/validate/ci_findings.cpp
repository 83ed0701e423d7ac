// A dataset report's findings as located diagnostics, and lines found from pointers (see
// ci_formats.hpp).

#include <fib/validate/ci_formats.hpp>

#include <fib/io/json_io.hpp>

#include <fmt/format.h>

#include <map>

namespace fib {

std::vector<Diagnostic> report_findings_located(const DatasetReport& report,
                                                const std::filesystem::path& root) {
  std::vector<Diagnostic> out;
  const auto add = [&](const CheckMessage& m, const std::filesystem::path& fallback_file,
                       const std::string& subject) {
    if (m.level == CheckLevel::info) {
      return;
    }
    Diagnostic& d = out.emplace_back();
    d.severity = severity_of(m.level);
    d.code = std::string(m.code);
    d.message = fmt::format("{}: {}", subject, m.message);
    d.file = m.where.file.empty() ? fallback_file : root / m.where.file;
    d.pointer = m.where.pointer;
    d.line = static_cast<int>(m.where.line);
  };
  for (const auto& [name, definition] : report.definitions) {
    const auto file = report.definition_files.find(name);
    const std::filesystem::path definition_file =
        file == report.definition_files.end() ? std::filesystem::path() : file->second;
    for (const Category category : k_category_order) {
      if (const auto& result = definition[category]) {
        const std::string subject = fmt::format("{} {}", name, to_string(category));
        for (const CheckMessage& m : result->messages) {
          add(m, definition_file, subject);
        }
      }
    }
  }
  if (report.dataset) {
    const std::string subject = fmt::format("dataset {}", root.string());
    for (const CheckMessage& m : report.dataset->messages) {
      add(m, {}, subject);
    }
  }
  return out;
}

void resolve_pointer_lines(std::vector<Diagnostic>& diagnostics) {
  // One file at a time, so that at most one parsed document is held.
  std::map<std::filesystem::path, std::vector<std::size_t>> by_file;
  for (std::size_t i = 0; i < diagnostics.size(); ++i) {
    const Diagnostic& d = diagnostics[i];
    if (d.line <= 0 && !d.file.empty() && !d.pointer.empty() && d.file.extension() != ".jsonl") {
      by_file[d.file].push_back(i);
    }
  }
  for (const auto& [file, indices] : by_file) {
    const auto text = read_text_file(file, k_max_line_lookup_bytes);
    if (!text) {
      continue;
    }
    DiagnosticList ignored;
    const auto document = parse_json(*text, file, ignored);
    if (!document) {
      continue;
    }
    for (const std::size_t i : indices) {
      diagnostics[i].line = document->line_of(diagnostics[i].pointer);
    }
  }
}

} // namespace fib
