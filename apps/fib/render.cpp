#include "render.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace fib::app {
namespace {

std::string indent_continuations(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    out += c;
    if (c == '\n') {
      out += "    ";
    }
  }
  return out;
}

} // namespace

void write_all(std::FILE* stream, std::string_view text) {
  if (!text.empty()) {
    std::fwrite(text.data(), 1, text.size(), stream);
  }
}

void write_line(std::FILE* stream, std::string_view text) {
  write_all(stream, text);
  std::fputc('\n', stream);
}

std::string render_text(const Diagnostic& d, const Palette& colors) {
  std::string location = d.file.empty() ? std::string("fib") : d.file.string();
  if (d.line > 0) {
    location += fmt::format(":{}", d.line);
  }
  const std::string_view severity_color = d.severity == Severity::error     ? colors.error
                                          : d.severity == Severity::warning ? colors.warning
                                                                            : colors.note;
  std::string out = fmt::format("{}{}{}: {}{}{}[{}]", colors.bold, location, colors.reset,
                                severity_color, to_string(d.severity), colors.reset, d.code);
  if (!d.pointer.empty()) {
    out += ' ';
    out += d.pointer;
  }
  out += ": ";
  out += indent_continuations(d.message);
  if (!d.hint.empty()) {
    out += fmt::format("\n  {}hint:{} ", colors.dim, colors.reset);
    out += indent_continuations(d.hint);
  }
  return out;
}

void write_diagnostic(std::FILE* stream, const Diagnostic& diagnostic) {
  write_line(stream, render_text(diagnostic, palette_for(stream)));
}

std::string render_json(const std::vector<Diagnostic>& diagnostics) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Diagnostic& d : diagnostics) {
    out.push_back({
        {"file", d.file.string()},
        {"line", d.line > 0 ? nlohmann::ordered_json(d.line) : nlohmann::ordered_json(nullptr)},
        {"pointer", d.pointer},
        {"severity", std::string(to_string(d.severity))},
        {"code", d.code},
        {"message", d.message},
        {"hint", d.hint},
    });
  }
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string render_stage_line(const StageEntry& entry, const StageSummary& summary) {
  const std::string_view label = stage_line_label(entry, summary);
  if (entry.target.empty()) {
    return fmt::format("{:<11} {}", label, entry.source.string());
  }
  std::string line =
      fmt::format("{:<11} {}  ({})", label, entry.target.generic_string(), entry.source.string());
  if (!entry.kept.empty()) {
    line += fmt::format("  kept: {}", fmt::join(entry.kept, ", "));
  }
  return line;
}

std::string render_stage_counts(const StageResult& result) {
  std::string out;
  for (const auto& [label, count] : stage_summary_counts(result)) {
    const bool plural = count != 1 && (label == "conflict" || label == "duplicate");
    out += fmt::format("{}{} {}{}", out.empty() ? "" : ", ", count, label, plural ? "s" : "");
  }
  return out;
}

std::string render_tag_change(const TaggedFile& file) {
  switch (file.status) {
  case TagFileStatus::skipped:
    return "skipped";
  case TagFileStatus::unchanged:
    return "unchanged";
  case TagFileStatus::changed:
    break;
  }
  const auto replaced_tag = [&](const std::string& tag, std::string TagReplacement::*side) {
    return std::any_of(file.replaced.begin(), file.replaced.end(),
                       [&](const TagReplacement& r) { return r.*side == tag; });
  };
  std::string out;
  for (const auto& tag : file.added) {
    if (!replaced_tag(tag, &TagReplacement::new_tag)) {
      out += fmt::format("{}+{}", out.empty() ? "" : " ", tag);
    }
  }
  for (const auto& tag : file.removed) {
    if (!replaced_tag(tag, &TagReplacement::old_tag)) {
      out += fmt::format("{}-{}", out.empty() ? "" : " ", tag);
    }
  }
  for (const auto& replacement : file.replaced) {
    out += fmt::format("{}replaced {} with {}", out.empty() ? "" : "; ", replacement.old_tag,
                       replacement.new_tag);
  }
  return out;
}

std::string render_collect_report(const CollectReport& report, DryRun dry_run) {
  std::string out;
  out +=
      fmt::format("{:<44} {:>6} {:>8} {:>8} {:>6} {:>8} {:>7}\n", "definition", "calls", "accepted",
                  "refused", "dups", "selected", dry_run == DryRun::yes ? "would" : "written");
  for (const DefinitionCollection& d : report.definitions) {
    std::size_t refused = 0;
    for (const auto& [code, count] : d.rejected) {
      refused += count;
    }
    const Selection& s = d.written.selection;
    out += fmt::format("{:<44} {:>6} {:>8} {:>8} {:>6} {:>8} {:>7}\n", d.name, d.calls, d.accepted,
                       refused, s.duplicates + s.axes_capped, s.selected.size(),
                       d.written.uuids.size());
    for (const auto& [code, count] : d.rejected) {
      out += fmt::format("    refused {:>5}  {}\n", count, code);
    }
    if (!d.written.uuids.empty() || d.written.removed > 0) {
      out += fmt::format("    {} {} ({} existing line(s){}; {} blob(s) written, {} removed)\n",
                         dry_run == DryRun::yes ? "would write" : "wrote", d.written.file.string(),
                         d.written.existing,
                         d.written.removed > 0 ? fmt::format(", {} replaced", d.written.removed)
                                               : std::string(),
                         d.written.blobs_written, d.written.blobs_removed);
    } else if (d.accepted > 0) {
      out += fmt::format("    nothing new for {} ({} existing line(s) kept)\n",
                         d.written.file.string(), d.written.existing);
    }
  }
  out += fmt::format("{} call(s) read, {} left out by the dump reader, {} of APIs no selected "
                     "definition takes; {} definition(s) without calls\n",
                     report.calls_read, report.calls_rejected, report.calls_unmatched,
                     report.definitions_without_calls);
  return out;
}

} // namespace fib::app
