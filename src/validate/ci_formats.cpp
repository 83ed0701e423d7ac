// Paths for CI systems, GitHub Actions annotations and the step summary digest (see
// ci_formats.hpp).

#include <fib/validate/ci_formats.hpp>

#include <fib/base/codes.hpp>
#include <fib/validate/finding_policy.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

namespace fib {
namespace {

// Escapes data for a workflow command: %, CR and LF everywhere, and also : and , in properties
// (GitHub's rules).
enum class CommandPart { message, property };

std::string escape_command(std::string_view text, CommandPart part) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '%') {
      out += "%25";
    } else if (c == '\r') {
      out += "%0D";
    } else if (c == '\n') {
      out += "%0A";
    } else if (part == CommandPart::property && c == ':') {
      out += "%3A";
    } else if (part == CommandPart::property && c == ',') {
      out += "%2C";
    } else {
      out += c;
    }
  }
  return out;
}

std::string annotation(const Diagnostic& d, const CiPaths& paths) {
  std::string properties;
  if (!d.file.empty()) {
    properties += "file=" + escape_command(ci_path(d.file, paths), CommandPart::property) + ",";
  }
  if (d.line > 0) {
    properties += fmt::format("line={},", d.line);
  }
  properties += "title=" + escape_command(d.code.empty() ? "fib" : d.code, CommandPart::property);
  const std::string message = d.pointer.empty() ? d.message : d.pointer + ": " + d.message;
  return fmt::format("::{} {}::{}\n", d.severity == Severity::error ? "error" : "warning",
                     properties, escape_command(message, CommandPart::message));
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// Whose text goes into a Markdown table cell: fib's own (the codes table's summaries, which use
// `code` spans) or text that echoes the data (messages, paths), where every character Markdown
// or HTML would act on is escaped.
enum class CellText { fib, data };

// Text for one Markdown table cell: its first line, escaped, cut to 200 bytes (at a UTF-8
// boundary).
std::string table_cell(std::string_view text, CellText whose = CellText::data) {
  text = text.substr(0, text.find('\n'));
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= 200 && (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      out += "…";
      break;
    }
    const char c = text[i];
    const bool special =
        c == '|' || (whose == CellText::data && (c == '\\' || c == '`' || c == '<' || c == '>' ||
                                                 c == '*' || c == '_' || c == '[' || c == ']'));
    if (special) {
      out += '\\';
    }
    out += c == '\r' ? ' ' : c;
  }
  return out;
}

} // namespace

std::filesystem::path ci_workspace() {
  const char* workspace = std::getenv("GITHUB_WORKSPACE");
  if (workspace != nullptr && *workspace != '\0') {
    return workspace;
  }
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec);
  return ec ? std::filesystem::path(".") : cwd;
}

std::string ci_path(const std::filesystem::path& file, const CiPaths& paths) {
  if (file.empty()) {
    return {};
  }
  if (!paths.prefix.empty()) {
    std::string prefix = paths.prefix;
    while (prefix.size() > 1 && prefix.back() == '/') {
      prefix.pop_back();
    }
    const std::string relative = path_relative_to(file, paths.base);
    return prefix == "/" ? "/" + relative : prefix + "/" + relative;
  }
  return path_relative_to(file, paths.workspace);
}

std::string render_github_annotations(const std::vector<Diagnostic>& findings, const CiPaths& paths,
                                      std::size_t max_per_severity) {
  std::string out;
  std::size_t errors = 0;
  std::size_t warnings = 0;
  std::size_t left_errors = 0;
  std::size_t left_warnings = 0;
  for (const Diagnostic& d : findings) {
    if (d.severity == Severity::note) {
      continue;
    }
    std::size_t& written = d.severity == Severity::error ? errors : warnings;
    if (max_per_severity != 0 && written >= max_per_severity) {
      ++(d.severity == Severity::error ? left_errors : left_warnings);
      continue;
    }
    ++written;
    out += annotation(d, paths);
  }
  if (left_errors + left_warnings > 0) {
    std::string left;
    if (left_errors > 0) {
      left = plural(left_errors, "error", "errors");
    }
    if (left_warnings > 0) {
      left += (left.empty() ? "" : " and ") + plural(left_warnings, "warning", "warnings");
    }
    out += fmt::format("::notice title=fib::{} not annotated (--max-annotations {}: GitHub shows "
                       "only the first few of each kind per step); the job summary, the report "
                       "and --format sarif list every finding\n",
                       left, max_per_severity);
  }
  return out;
}

std::string render_step_summary(const std::vector<Diagnostic>& findings, const CiPaths& paths,
                                std::string_view title) {
  const DiagnosticCounts counts = count_diagnostics(findings);
  std::string out = fmt::format("### {}\n\n", table_cell(title));
  if (findings.empty()) {
    return out + "No findings.\n\n";
  }
  out += fmt::format("{}, {}, {}.\n\n", plural(counts.errors, "error", "errors"),
                     plural(counts.warnings, "warning", "warnings"),
                     plural(counts.notes, "note", "notes"));
  // Codes by count (most first), then severity (errors first), then code.
  std::map<std::pair<std::string, Severity>, std::size_t> per_code;
  for (const Diagnostic& d : findings) {
    ++per_code[{d.code, d.severity}];
  }
  std::vector<std::tuple<std::size_t, Severity, std::string>> rows;
  for (const auto& [key, count] : per_code) {
    rows.emplace_back(count, key.second, key.first);
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(a)) <
           std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(b));
  });
  out += "| count | severity | code | what |\n|---:|---|---|---|\n";
  for (const auto& [count, severity, code] : rows) {
    const CodeInfo* info = find_code(code);
    out += fmt::format("| {} | {} | `{}` | {} |\n", count, to_string(severity),
                       code.empty() ? "(none)" : code,
                       info == nullptr ? "" : table_cell(info->summary, CellText::fib));
  }
  const std::size_t shown = std::min(findings.size(), k_step_summary_findings);
  out += fmt::format("\n<details><summary>{}</summary>\n\n",
                     shown == findings.size()
                         ? plural(findings.size(), "finding", "findings")
                         : fmt::format("The first {} of {} findings", shown, findings.size()));
  out += "| where | severity | code | message |\n|---|---|---|---|\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const Diagnostic& d = findings[i];
    std::string where = d.file.empty() ? std::string("fib") : ci_path(d.file, paths);
    if (d.line > 0) {
      where += fmt::format(":{}", d.line);
    }
    const std::string message = d.pointer.empty() ? d.message : d.pointer + ": " + d.message;
    out += fmt::format("| {} | {} | `{}` | {} |\n", table_cell(where), to_string(d.severity),
                       d.code.empty() ? "(none)" : d.code, table_cell(message));
  }
  out += "\n</details>\n\n";
  return out;
}

} // namespace fib
