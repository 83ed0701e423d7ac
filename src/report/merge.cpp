#include "fib/report/merge.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/dataset_layout.hpp>
#include <fib/model/definition_diff.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_set>
#include <utility>

namespace fib {
namespace {

namespace fs = std::filesystem;

fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  if (ec) {
    absolute = path;
  }
  fs::path canonical = fs::weakly_canonical(absolute, ec);
  return (ec ? absolute : canonical).lexically_normal();
}

// Whether `inner` is `outer` or below it, component by component.
bool is_within(const fs::path& inner, const fs::path& outer) {
  auto o = outer.begin();
  auto i = inner.begin();
  for (; o != outer.end(); ++o, ++i) {
    if (o->empty() && std::next(o) == outer.end()) {
      break; // a trailing separator
    }
    if (i == inner.end() || *i != *o) {
      return false;
    }
  }
  return true;
}

void report_not_copied(const fs::path& path, std::string_view what, MergeSummary& summary,
                       DiagnosticSink& sink) {
  Diagnostic d = make_diagnostic(codes::k_merge_not_copied,
                                 fmt::format("{} is {}; it is not copied", path.string(), what));
  d.file = path;
  sink.report(std::move(d));
  ++summary.not_copied;
}

std::string_view kind_of(SkipReason reason) {
  return reason == SkipReason::symbolic_link ? "a symbolic link" : "not a regular file";
}

// Every regular file of the merged trees of `root` (ScanMode::copy), relative to it, added to
// `paths` with `input`. Links and special files are reported, never followed. Returns false when a
// directory could not be listed.
bool collect_files(const fs::path& root, std::size_t input,
                   std::map<fs::path, std::vector<std::size_t>>& paths, MergeSummary& summary,
                   DiagnosticSink& sink) {
  bool complete = true;
  for (const DatasetTree tree : k_merge_trees) {
    const TreeScan scan = scan_tree(root, tree, ScanMode::copy);
    for (const SkippedEntry& skipped : scan.skipped) {
      report_not_copied(skipped.path, kind_of(skipped.reason), summary, sink);
    }
    for (const LayoutEntry& entry : scan.entries) {
      paths[entry.relative].push_back(input);
    }
    for (const ListingFailure& failure : scan.failures) {
      Diagnostic d = make_diagnostic(
          codes::k_io_read, fmt::format("{}: cannot list the directory: {}",
                                        failure.directory.string(), failure.error.message()));
      d.file = failure.directory;
      sink.report(std::move(d));
      complete = false;
    }
  }
  return complete;
}

// Reads `root / relative` without following a link anywhere below `root`. nullopt when missing.
Expected<std::optional<std::string>> read_below(const fs::path& root, const fs::path& relative,
                                                std::uintmax_t max_bytes) {
  auto directory = open_directory(root);
  if (!directory) {
    return unexpected(std::move(directory).error());
  }
  DirectoryHandle current = std::move(*directory);
  for (const auto& part : relative.parent_path()) {
    auto next = open_subdirectory(current, part.string(), CreateMissing::no);
    if (!next) {
      return unexpected(std::move(next).error());
    }
    if (!*next) {
      return std::optional<std::string>();
    }
    current = std::move(**next);
  }
  return read_file_in(current, relative.filename().string(), max_bytes);
}

// The distinct non-blank lines of JSON Lines files, in first-seen order.
class LineMerger {
public:
  // Adds the new lines of `text`; returns how many were new.
  std::size_t add(std::string_view text, std::size_t& duplicates) {
    std::size_t added = 0;
    while (!text.empty()) {
      const std::size_t end = text.find('\n');
      std::string_view line = text.substr(0, end);
      text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
      if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
      }
      if (line.find_first_not_of(" \t\f\v") == std::string_view::npos) {
        continue;
      }
      if (m_seen.emplace(line).second) {
        m_lines.emplace_back(line);
        ++added;
      } else {
        ++duplicates;
      }
    }
    return added;
  }

  std::string text() const {
    std::string out;
    for (const std::string& line : m_lines) {
      out += line;
      out += '\n';
    }
    return out;
  }

private:
  std::vector<std::string> m_lines;
  std::unordered_set<std::string> m_seen;
};

// Where two JSON copies differ, for the conflict message ("" when either is not JSON).
std::string json_differences(const std::string& kept, const std::string& other,
                             const fs::path& relative) {
  if (relative.extension() != ".json") {
    return "";
  }
  DiagnosticList ignored;
  auto a = parse_json(kept, relative, ignored, 1, LineIndex::skipped);
  auto b = parse_json(other, relative, ignored, 1, LineIndex::skipped);
  if (!a || !b) {
    return "";
  }
  const auto differences = diff_definitions(a->root, b->root);
  if (differences.empty()) {
    return "same JSON content, different formatting";
  }
  std::string out = "differs at ";
  const std::size_t shown = std::min<std::size_t>(differences.size(), 3);
  for (std::size_t i = 0; i < shown; ++i) {
    out += (i == 0 ? "" : ", ") + (differences[i].pointer.empty() ? "/" : differences[i].pointer);
  }
  if (differences.size() > shown) {
    out += fmt::format(" and {} more", differences.size() - shown);
  }
  return out;
}

class Merger {
public:
  Merger(const MergeOptions& options, DiagnosticSink& sink) : m_options(options), m_sink(sink) {}

  MergeEntry merge(const fs::path& relative, const std::vector<std::size_t>& inputs) {
    MergeEntry entry;
    entry.path = relative;
    for (const std::size_t input : inputs) {
      entry.sources.push_back(m_options.inputs[input]);
    }
    auto existing = read_below(m_options.output, relative, m_options.max_file_bytes);
    if (!existing) {
      return fail(std::move(entry), std::move(existing).error());
    }
    if (relative.extension() == ".jsonl") {
      return merge_lines(std::move(entry), *existing);
    }
    return merge_file(std::move(entry), std::move(*existing));
  }

  // Copies dropped so far because an identical one was kept.
  std::size_t identical_copies() const { return m_identical_copies; }

private:
  MergeEntry fail(MergeEntry entry, Diagnostic diagnostic) {
    entry.action = MergeAction::failed;
    m_sink.report(std::move(diagnostic));
    return entry;
  }

  Expected<std::string> read_source(const MergeEntry& entry, std::size_t index) {
    auto text = read_below(entry.sources[index], entry.path, m_options.max_file_bytes);
    if (!text) {
      return unexpected(std::move(text).error());
    }
    if (!*text) {
      Diagnostic d = make_diagnostic(codes::k_io_not_found,
                                     fmt::format("{}: disappeared while merging",
                                                 (entry.sources[index] / entry.path).string()));
      d.file = entry.sources[index] / entry.path;
      return unexpected(std::move(d));
    }
    return std::move(**text);
  }

  MergeEntry write(MergeEntry entry, const std::string& content, Overwrite overwrite) {
    m_sweeper.remove_stale_below(m_options.output, entry.path);
    auto written = write_file_atomically_below(m_options.output, entry.path, content, overwrite,
                                               CreateMissing::yes);
    if (!written) {
      return fail(std::move(entry), std::move(written).error());
    }
    entry.written = true;
    return entry;
  }

  MergeEntry merge_lines(MergeEntry entry, const std::optional<std::string>& existing) {
    LineMerger merger;
    std::size_t contributors = 0;
    if (existing) {
      contributors += merger.add(*existing, entry.duplicate_lines) > 0 ? 1 : 0;
    }
    for (std::size_t i = 0; i < entry.sources.size(); ++i) {
      auto text = read_source(entry, i);
      if (!text) {
        return fail(std::move(entry), std::move(text).error());
      }
      const std::size_t added = merger.add(*text, entry.duplicate_lines);
      entry.lines_added += added;
      contributors += added > 0 ? 1 : 0;
    }
    const std::string merged = merger.text();
    if (existing && *existing == merged) {
      entry.action = MergeAction::unchanged;
      return entry;
    }
    entry.action = contributors > 1 || existing ? MergeAction::merged : MergeAction::added;
    if (existing) {
      return write(std::move(entry), merged, Overwrite::allowed);
    }
    return write(std::move(entry), merged, Overwrite::forbidden);
  }

  MergeEntry merge_file(MergeEntry entry, std::optional<std::string> existing) {
    std::optional<std::string> kept = std::move(existing);
    const bool was_there = kept.has_value();
    fs::path kept_from = m_options.output;
    bool conflict = false;
    for (std::size_t i = 0; i < entry.sources.size(); ++i) {
      auto text = read_source(entry, i);
      if (!text) {
        return fail(std::move(entry), std::move(text).error());
      }
      if (!kept) {
        kept = std::move(*text);
        kept_from = entry.sources[i];
        continue;
      }
      if (*text == *kept) {
        ++m_identical_copies;
        continue;
      }
      conflict = true;
      const fs::path file = entry.sources[i] / entry.path;
      Diagnostic d =
          make_diagnostic(codes::k_merge_conflict,
                          fmt::format("{} differs from the copy from {}; the first copy is kept",
                                      entry.path.generic_string(), kept_from.string()));
      d.file = file;
      d.hint = json_differences(*kept, *text, entry.path);
      m_sink.report(std::move(d));
    }
    entry.action = conflict    ? MergeAction::conflict
                   : was_there ? MergeAction::unchanged
                               : MergeAction::added;
    if (was_there) {
      return entry;
    }
    const MergeAction action = entry.action;
    entry = write(std::move(entry), *kept, Overwrite::forbidden);
    if (entry.action != MergeAction::failed) {
      entry.action = action;
    }
    return entry;
  }

  const MergeOptions& m_options;
  DiagnosticSink& m_sink;
  // Created with the merger: its start is the run's start.
  StaleTemporarySweeper m_sweeper;
  std::size_t m_identical_copies = 0;
};

// Checks the roots; reports and returns false when the merge cannot start.
bool check_roots(const MergeOptions& options, DiagnosticSink& sink) {
  const fs::path output = resolved(options.output);
  bool ok = true;
  for (const fs::path& input : options.inputs) {
    std::error_code ec;
    if (!fs::exists(input, ec)) {
      Diagnostic d = make_diagnostic(
          codes::k_io_not_found, fmt::format("dataset root does not exist: {}", input.string()));
      d.file = input;
      sink.report(std::move(d));
      ok = false;
      continue;
    }
    if (!fs::is_directory(input, ec)) {
      Diagnostic d = make_diagnostic(
          codes::k_io_read, fmt::format("dataset root is not a directory: {}", input.string()));
      d.file = input;
      sink.report(std::move(d));
      ok = false;
      continue;
    }
    const fs::path root = resolved(input);
    if (is_within(output, root) || is_within(root, output)) {
      Diagnostic d =
          make_diagnostic(codes::k_merge_output_is_input,
                          fmt::format("the output {} {} the input {}", options.output.string(),
                                      output == root            ? "is"
                                      : is_within(output, root) ? "is inside"
                                                                : "contains",
                                      input.string()));
      d.file = input;
      d.hint = "merge into a new directory outside every input";
      sink.report(std::move(d));
      ok = false;
    }
  }
  return ok;
}

} // namespace

MergeResult merge_datasets(const MergeOptions& options, DiagnosticSink& sink) {
  MergeResult result;
  if (!check_roots(options, sink)) {
    return result;
  }
  std::error_code ec;
  fs::create_directories(options.output, ec);
  if (ec || !fs::is_directory(options.output, ec)) {
    Diagnostic d =
        make_diagnostic(codes::k_io_write, fmt::format("{}: cannot create the output directory{}",
                                                       options.output.string(),
                                                       ec ? ": " + ec.message() : std::string()));
    d.file = options.output;
    sink.report(std::move(d));
    return result;
  }
  std::map<fs::path, std::vector<std::size_t>> paths;
  for (std::size_t i = 0; i < options.inputs.size(); ++i) {
    collect_files(options.inputs[i], i, paths, result.summary, sink);
  }
  Merger merger(options, sink);
  for (const auto& [relative, inputs] : paths) {
    MergeEntry entry = merger.merge(relative, inputs);
    switch (entry.action) {
    case MergeAction::added:
      ++result.summary.added;
      break;
    case MergeAction::merged:
      ++result.summary.merged;
      break;
    case MergeAction::unchanged:
      ++result.summary.unchanged;
      break;
    case MergeAction::conflict:
      ++result.summary.conflicts;
      break;
    case MergeAction::failed:
      ++result.summary.failed;
      break;
    }
    result.summary.duplicate_lines += entry.duplicate_lines;
    result.entries.push_back(std::move(entry));
  }
  result.summary.identical_copies = merger.identical_copies();
  return result;
}

} // namespace fib
