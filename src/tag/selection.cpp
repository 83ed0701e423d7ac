// selection: which definition files `fib tag` works on (explicit files, a dataset's definitions,
// a stage manifest's entries) and the filters that narrow them (op_type, name glob, --since).

#include "fib/tag/selection.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/dataset_layout.hpp>

#include <fmt/format.h>

#include <fnmatch.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <system_error>

namespace fib {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// --- Times ---

// Reads exactly `count` digits at `pos` into `out`.
bool read_digits(std::string_view text, std::size_t& pos, std::size_t count, int& out) {
  if (pos + count > text.size()) {
    return false;
  }
  out = 0;
  for (std::size_t k = 0; k < count; ++k) {
    const char c = text[pos + k];
    if (!is_digit(c)) {
      return false;
    }
    out = out * 10 + (c - '0');
  }
  pos += count;
  return true;
}

// A fraction of a second after the '.', as nanoseconds (digits past the ninth are dropped).
bool read_fraction(std::string_view text, std::size_t& pos, std::int64_t& nanoseconds) {
  const std::size_t start = pos;
  nanoseconds = 0;
  std::int64_t scale = 100'000'000;
  while (pos < text.size() && is_digit(text[pos])) {
    nanoseconds += (text[pos] - '0') * scale;
    scale /= 10;
    ++pos;
  }
  return pos > start;
}

std::optional<TagTime> parse_epoch(std::string_view text) {
  std::size_t pos = 0;
  std::int64_t seconds = 0;
  while (pos < text.size() && is_digit(text[pos])) {
    seconds = seconds * 10 + (text[pos] - '0');
    if (seconds > 9'000'000'000) { // past 2255: beyond the nanosecond clock
      return std::nullopt;
    }
    ++pos;
  }
  if (pos == 0) {
    return std::nullopt;
  }
  std::int64_t nanoseconds = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    if (!read_fraction(text, pos, nanoseconds)) {
      return std::nullopt;
    }
  }
  if (pos != text.size()) {
    return std::nullopt;
  }
  return TagTime(std::chrono::seconds(seconds) + std::chrono::nanoseconds(nanoseconds));
}

std::optional<TagTime> parse_iso(std::string_view text) {
  std::size_t pos = 0;
  int year = 0;
  int month = 0;
  int day = 0;
  if (!read_digits(text, pos, 4, year) || pos >= text.size() || text[pos++] != '-' ||
      !read_digits(text, pos, 2, month) || pos >= text.size() || text[pos++] != '-' ||
      !read_digits(text, pos, 2, day)) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(year),
                                         std::chrono::month(static_cast<unsigned>(month)),
                                         std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok() || year < 1900 || year > 2200) {
    return std::nullopt;
  }
  TagTime time = std::chrono::sys_days(date);
  if (pos == text.size()) {
    return time;
  }
  int hour = 0;
  int minute = 0;
  int second = 0;
  if (text[pos++] != 'T' || !read_digits(text, pos, 2, hour) || pos >= text.size() ||
      text[pos++] != ':' || !read_digits(text, pos, 2, minute) || pos >= text.size() ||
      text[pos++] != ':' || !read_digits(text, pos, 2, second) || hour > 23 || minute > 59 ||
      second > 59) {
    return std::nullopt;
  }
  time += std::chrono::hours(hour) + std::chrono::minutes(minute) + std::chrono::seconds(second);
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::int64_t nanoseconds = 0;
    if (!read_fraction(text, pos, nanoseconds)) {
      return std::nullopt;
    }
    time += std::chrono::nanoseconds(nanoseconds);
  }
  if (pos == text.size()) {
    return time;
  }
  if (text[pos] == 'Z') {
    return pos + 1 == text.size() ? std::optional<TagTime>(time) : std::nullopt;
  }
  if (text[pos] != '+' && text[pos] != '-') {
    return std::nullopt;
  }
  const bool east = text[pos++] == '+';
  int offset_hours = 0;
  int offset_minutes = 0;
  if (!read_digits(text, pos, 2, offset_hours) || pos >= text.size() || text[pos++] != ':' ||
      !read_digits(text, pos, 2, offset_minutes) || pos != text.size() || offset_hours > 23 ||
      offset_minutes > 59) {
    return std::nullopt;
  }
  const auto offset = std::chrono::hours(offset_hours) + std::chrono::minutes(offset_minutes);
  // 14:05+02:00 is 12:05 UTC.
  return east ? time - offset : time + offset;
}

// --- Manifest ---

class ManifestReader {
public:
  ManifestReader(const JsonDocument& document, DiagnosticSink& sink)
      : m_document(document), m_sink(sink) {}

  void problem(const std::string& pointer, std::string message) {
    Diagnostic d = make_diagnostic(codes::k_tag_manifest_invalid, std::move(message));
    d.file = m_document.file;
    d.pointer = pointer;
    d.line = m_document.line_of(pointer);
    d.hint = "a manifest is written by `fib stage --manifest FILE` (docs/tag.md has the format)";
    if (!m_first) {
      m_first = d;
    }
    m_sink.report(std::move(d));
  }

  // The string member `key` of `object` (at `pointer`), or nullopt after reporting why not.
  std::optional<std::string> string_member(const Json& object, const std::string& pointer,
                                           std::string_view key) {
    const std::string member = pointer_append(pointer, key);
    const auto it = object.find(key);
    if (it == object.end()) {
      problem(pointer, fmt::format("missing key '{}'", key));
      return std::nullopt;
    }
    if (!it->is_string()) {
      problem(member, fmt::format("'{}' must be a string, got {}", key, json_excerpt(*it)));
      return std::nullopt;
    }
    return it->get<std::string>();
  }

  void check_entry_path(const std::string& path, const std::string& pointer) {
    if (path.starts_with('/')) {
      problem(pointer, fmt::format("entry path '{}' is absolute; it must be "
                                   "definitions/<op_type>/<name>.json below the dataset root",
                                   text_excerpt(path)));
      return;
    }
    std::vector<std::string_view> parts;
    std::string_view rest = path;
    while (true) {
      const std::size_t slash = rest.find('/');
      parts.push_back(rest.substr(0, slash));
      if (slash == std::string_view::npos) {
        break;
      }
      rest.remove_prefix(slash + 1);
    }
    if (std::find(parts.begin(), parts.end(), "..") != parts.end()) {
      problem(pointer, fmt::format("entry path '{}' contains '..'; it must stay below the dataset "
                                   "root",
                                   text_excerpt(path)));
      return;
    }
    const auto bad_segment = [](std::string_view part) {
      return part.empty() || part == "." || part.find('\\') != std::string_view::npos ||
             part.find('\0') != std::string_view::npos;
    };
    const TreeLayout& layout = layout_of(DatasetTree::definitions);
    const bool in_layout = parts.size() == layout.depth + 1 && parts[0] == layout.directory &&
                           std::none_of(parts.begin() + 1, parts.end(), bad_segment) &&
                           parts.back().ends_with(layout.extension) &&
                           parts.back().size() > layout.extension.size();
    if (!in_layout) {
      problem(pointer, fmt::format("entry path '{}' is not definitions/<op_type>/<name>.json",
                                   text_excerpt(path)));
    }
  }

  Expected<TagManifest> read() {
    const Json& root = m_document.root;
    TagManifest manifest;
    if (!root.is_object()) {
      problem("", fmt::format("a stage manifest is a JSON object, got {}", json_excerpt(root)));
      return unexpected(*m_first);
    }
    const auto version = root.find("fib_stage_manifest");
    if (version == root.end()) {
      problem("", "missing key 'fib_stage_manifest' (the manifest format version, 1)");
    } else if (!version->is_number_integer() || *version != 1) {
      problem("/fib_stage_manifest",
              fmt::format("unsupported manifest version {}; fib reads version 1",
                          json_excerpt(*version)));
    }
    if (auto dataset = string_member(root, "", "dataset")) {
      if (!std::filesystem::path(*dataset).is_absolute()) {
        problem("/dataset", fmt::format("'dataset' must be an absolute path, got '{}'",
                                        text_excerpt(*dataset)));
      }
      manifest.dataset = *dataset;
    }
    const auto entries = root.find("entries");
    if (entries == root.end()) {
      problem("", "missing key 'entries'");
    } else if (!entries->is_array()) {
      problem("/entries",
              fmt::format("'entries' must be an array, got {}", json_excerpt(*entries)));
    } else {
      for (std::size_t i = 0; i < entries->size(); ++i) {
        read_entry((*entries)[i], pointer_append("/entries", i), manifest);
      }
    }
    if (m_first) {
      return unexpected(*m_first);
    }
    return manifest;
  }

private:
  void read_entry(const Json& entry, const std::string& pointer, TagManifest& manifest) {
    if (!entry.is_object()) {
      problem(pointer, fmt::format("an entry must be an object, got {}", json_excerpt(entry)));
      return;
    }
    TagManifestEntry out;
    auto path = string_member(entry, pointer, "path");
    auto name = string_member(entry, pointer, "name");
    auto op_type = string_member(entry, pointer, "op_type");
    auto action = string_member(entry, pointer, "action");
    auto source = string_member(entry, pointer, "source");
    if (path) {
      check_entry_path(*path, pointer_append(pointer, "path"));
    }
    if (action && *action != "added" && *action != "overwritten") {
      problem(pointer_append(pointer, "action"),
              fmt::format("'action' must be \"added\" or \"overwritten\", got '{}'",
                          text_excerpt(*action)));
    }
    if (path && name && op_type && action && source) {
      manifest.entries.push_back(TagManifestEntry{*path, *name, *op_type, *action, *source});
    }
  }

  const JsonDocument& m_document;
  DiagnosticSink& m_sink;
  std::optional<Diagnostic> m_first;
};

// --- Selection ---

struct Filters {
  const TagSelectionOptions& options;

  bool keep(const std::filesystem::path& full, const std::filesystem::path& relative) const {
    const std::string op_type = relative.parent_path().filename().string();
    if (!options.op_types.empty() && std::find(options.op_types.begin(), options.op_types.end(),
                                               op_type) == options.op_types.end()) {
      return false;
    }
    if (!options.name_globs.empty()) {
      const std::string stem = relative.stem().string();
      const bool matched = std::any_of(
          options.name_globs.begin(), options.name_globs.end(),
          [&](const std::string& glob) { return ::fnmatch(glob.c_str(), stem.c_str(), 0) == 0; });
      if (!matched) {
        return false;
      }
    }
    if (options.since) {
      std::error_code ec;
      const auto modified = std::filesystem::last_write_time(full, ec);
      if (ec) {
        return true; // kept: reading it reports the problem
      }
      const auto system = std::chrono::time_point_cast<std::chrono::nanoseconds>(
          std::chrono::file_clock::to_sys(modified));
      if (system < *options.since) {
        return false;
      }
    }
    return true;
  }
};

// Every DIR/definitions/<op_type>/<name>.json the filters keep (ScanMode::strict), and one
// `io.read` problem per directory that cannot be listed.
void scan_definitions(const std::filesystem::path& root, const Filters& filters,
                      TagSelection& out) {
  const TreeScan scan = scan_tree(root, DatasetTree::definitions, ScanMode::strict);
  for (const ListingFailure& failure : scan.failures) {
    Diagnostic d = make_diagnostic(
        codes::k_io_read, fmt::format("cannot list the directory: {}", failure.error.message()));
    d.file = failure.directory;
    out.problems.push_back(std::move(d));
  }
  for (const LayoutEntry& entry : scan.entries) {
    if (filters.keep(entry.path, entry.relative)) {
      out.files.push_back(SelectedFile{entry.path, entry.relative, root});
    }
  }
}

// The entries of a read manifest below `root`, de-duplicated and sorted; entries whose file is
// gone go to `out.missing_entries`.
void select_manifest_entries(const TagManifest& manifest, const JsonDocument& document,
                             const std::filesystem::path& root, const Filters& filters,
                             TagSelection& out) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < manifest.entries.size(); ++i) {
    const std::string& path = manifest.entries[i].path;
    if (!seen.insert(path).second) {
      continue;
    }
    const std::filesystem::path relative(path);
    const std::filesystem::path full = root / relative;
    std::error_code status_ec;
    const auto status = std::filesystem::symlink_status(full, status_ec);
    if (!std::filesystem::exists(status)) {
      Diagnostic d = make_diagnostic(
          codes::k_io_not_found,
          fmt::format("{} is listed in the manifest but no longer exists below {}; skipped", path,
                      root.string()));
      d.file = document.file;
      d.pointer = pointer_append(pointer_append("/entries", i), "path");
      d.line = document.line_of(d.pointer);
      out.missing_entries.push_back(std::move(d));
      continue;
    }
    if (filters.keep(full, relative)) {
      out.files.push_back(SelectedFile{full, relative, root});
    }
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const SelectedFile& a, const SelectedFile& b) { return a.path < b.path; });
}

void select_manifest(const TagSelectionOptions& options, const Filters& filters,
                     TagSelection& out) {
  auto text = read_text_file(options.manifest);
  if (!text) {
    out.problems.push_back(text.error());
    return;
  }
  DiagnosticList sink;
  auto document = parse_json(*text, options.manifest, sink);
  if (!document) {
    Diagnostic d = document.error();
    d.code = codes::k_tag_manifest_invalid;
    d.severity = Severity::error;
    d.message = "not a stage manifest: " + d.message;
    out.problems.push_back(std::move(d));
    return;
  }
  auto manifest = parse_tag_manifest(*document, sink);
  for (const auto& d : sink.items()) {
    out.problems.push_back(d);
  }
  if (!manifest) {
    return; // the problems are tag.manifest-invalid errors
  }
  const std::filesystem::path root = options.dataset.empty() ? manifest->dataset : options.dataset;
  if (const auto problem = dataset_root_problem(root)) {
    Diagnostic d =
        make_diagnostic(codes::k_dataset_root_missing,
                        fmt::format("the manifest's dataset root {} {}", root.string(), *problem));
    d.file = options.manifest;
    d.pointer = options.dataset.empty() ? "/dataset" : "";
    out.problems.push_back(std::move(d));
    return;
  }
  select_manifest_entries(*manifest, *document, root, filters, out);
}

} // namespace

Expected<TagTime> parse_tag_time(std::string_view text) {
  std::optional<TagTime> time;
  if (!text.empty() && text.find('-') == std::string_view::npos) {
    time = parse_epoch(text);
  } else {
    time = parse_iso(text);
  }
  if (!time) {
    Diagnostic d = make_diagnostic(
        codes::k_usage,
        fmt::format("--since: '{}' is not a time: give epoch seconds (1764511500, 1764511500.5) or "
                    "ISO-8601 (2026-11-30, 2026-11-30T14:05:00, 2026-11-30T14:05:00.5+02:00)",
                    text_excerpt(text)));
    return unexpected(std::move(d));
  }
  return *time;
}

Expected<TagManifest> parse_tag_manifest(const JsonDocument& document, DiagnosticSink& sink) {
  return ManifestReader(document, sink).read();
}

TagSelection select_tag_files(const TagSelectionOptions& options) {
  TagSelection out;
  if (!options.files.empty()) {
    for (const auto& file : options.files) {
      out.files.push_back(SelectedFile{file, {}, {}});
    }
    return out;
  }
  const Filters filters{options};
  if (!options.manifest.empty()) {
    select_manifest(options, filters, out);
    return out;
  }
  if (const auto problem = dataset_root_problem(options.dataset)) {
    Diagnostic d = make_diagnostic(codes::k_dataset_root_missing, "the dataset root " + *problem);
    d.file = options.dataset;
    out.problems.push_back(std::move(d));
    return out;
  }
  scan_definitions(options.dataset, filters, out);
  return out;
}

} // namespace fib
