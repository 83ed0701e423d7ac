// tags: the controlled tag namespaces, editing a definition's `tags`, selecting the files of a
// dataset for `fib tag`, and the tag inventory.

#include "fib/tag/tags.hpp"

#include "util/strings.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/dtype.hpp>
#include <fib/io/json_io.hpp>
#include <fib/util/atomic_file.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <system_error>

namespace fib {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || is_digit(c);
}

bool is_identifier_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool accepts_positive_integer(std::string_view value) {
  return !value.empty() && value.front() != '0' &&
         std::all_of(value.begin(), value.end(), is_digit);
}

bool accepts_dtype(std::string_view value) {
  return parse_dtype(value).has_value();
}

bool accepts_stage(std::string_view value) {
  return value == "prefill" || value == "decode" || value == "mtp";
}

bool accepts_status(std::string_view value) {
  constexpr std::array<std::string_view, 6> k_statuses = {
      "verified", "unverified", "draft", "deprecated", "experimental", "reference"};
  return std::find(k_statuses.begin(), k_statuses.end(), value) != k_statuses.end();
}

// `[a-z0-9]+` parts joined by single '-', '.' or '_'.
bool accepts_model(std::string_view value) {
  bool part_open = false;
  for (const char c : value) {
    if (is_lower_alnum(c)) {
      part_open = true;
    } else if ((c == '-' || c == '.' || c == '_') && part_open) {
      part_open = false;
    } else {
      return false;
    }
  }
  return part_open;
}

// ASCII Python identifiers joined by single dots.
bool accepts_dotted_name(std::string_view value) {
  bool at_start = true;
  for (const char c : value) {
    if (at_start) {
      if (!is_identifier_start(c)) {
        return false;
      }
      at_start = false;
    } else if (c == '.') {
      at_start = true;
    } else if (!is_identifier_start(c) && !is_digit(c)) {
      return false;
    }
  }
  return !at_start;
}

// Whitespace and control characters are rejected for every tag before the namespace rules run.
bool accepts_any(std::string_view value) {
  return !value.empty();
}

constexpr std::array k_namespaces = {
    TagNamespace{"backend", "any non-empty value (the dumper's backend tags)", accepts_any},
    TagNamespace{"ep", "a positive decimal integer without sign or leading zeros",
                 accepts_positive_integer},
    TagNamespace{"fi_api", "a dotted Python name (identifiers joined by '.')", accepts_dotted_name},
    TagNamespace{"model", "a lower-case slug: [a-z0-9]+ parts joined by single '-', '.' or '_'",
                 accepts_model},
    TagNamespace{"quantization", "a dtype fib knows (float32, bfloat16, float8_e4m3fn, …)",
                 accepts_dtype},
    TagNamespace{"stage", "one of prefill, decode, mtp", accepts_stage},
    TagNamespace{"status",
                 "one of verified, unverified, draft, deprecated, experimental, reference",
                 accepts_status},
    TagNamespace{"tp", "a positive decimal integer without sign or leading zeros",
                 accepts_positive_integer},
};

Diagnostic malformed(std::string_view tag, std::string reason, std::string hint = {}) {
  Diagnostic d = make_diagnostic(codes::k_tag_malformed,
                                 fmt::format("tag '{}': {}", text_excerpt(tag), std::move(reason)));
  d.hint = std::move(hint);
  return d;
}

Diagnostic with_place(Diagnostic d, const std::filesystem::path& file, std::string pointer) {
  d.file = file;
  d.pointer = std::move(pointer);
  return d;
}

bool is_environment(const Diagnostic& d) {
  const CodeInfo* info = find_code(d.code);
  return info != nullptr && info->exit_class == ExitClass::environment;
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
    if (parts.size() != 3 || parts[0] != "definitions" || bad_segment(parts[1]) ||
        bad_segment(parts[2]) || !parts[2].ends_with(".json") || parts[2] == ".json") {
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

std::vector<std::filesystem::path> sorted_entries(const std::filesystem::path& directory,
                                                  std::error_code& ec) {
  std::vector<std::filesystem::path> entries;
  std::filesystem::directory_iterator it(directory, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    entries.push_back(it->path());
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

void scan_definitions(const std::filesystem::path& root, const Filters& filters,
                      TagSelection& out) {
  const std::filesystem::path base = root / "definitions";
  std::error_code ec;
  if (!std::filesystem::is_directory(base, ec)) {
    return;
  }
  const auto report_listing = [&](const std::filesystem::path& directory) {
    Diagnostic d = make_diagnostic(codes::k_io_read,
                                   fmt::format("cannot list the directory: {}", ec.message()));
    d.file = directory;
    out.problems.push_back(std::move(d));
    out.environment_error = true;
  };
  const auto op_dirs = sorted_entries(base, ec);
  if (ec) {
    report_listing(base);
    return;
  }
  for (const auto& op_dir : op_dirs) {
    std::error_code type_ec;
    if (!std::filesystem::is_directory(std::filesystem::symlink_status(op_dir, type_ec))) {
      continue; // files at depth 1 and symbolic links to directories are not part of a dataset
    }
    const auto files = sorted_entries(op_dir, ec);
    if (ec) {
      report_listing(op_dir);
      ec.clear();
      continue;
    }
    for (const auto& file : files) {
      const std::string file_name = file.filename().string();
      if (!file_name.ends_with(".json") || file_name == ".json" ||
          !std::filesystem::is_regular_file(file, type_ec)) {
        continue;
      }
      const std::filesystem::path relative =
          std::filesystem::path("definitions") / op_dir.filename() / file.filename();
      if (filters.keep(file, relative)) {
        out.files.push_back(SelectedFile{file, relative, root});
      }
    }
  }
}

void select_manifest(const TagSelectionOptions& options, const Filters& filters,
                     TagSelection& out) {
  auto text = read_text_file(options.manifest);
  if (!text) {
    out.problems.push_back(text.error());
    out.environment_error = true;
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
    out.usage_error = true;
    return;
  }
  auto manifest = parse_tag_manifest(*document, sink);
  for (const auto& d : sink.items()) {
    out.problems.push_back(d);
  }
  if (!manifest) {
    out.usage_error = true;
    return;
  }
  const std::filesystem::path root = options.dataset.empty() ? manifest->dataset : options.dataset;
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) {
    Diagnostic d = make_diagnostic(
        codes::k_dataset_root_missing,
        fmt::format("the manifest's dataset root {} does not exist or is not a directory",
                    root.string()));
    d.file = options.manifest;
    d.pointer = options.dataset.empty() ? "/dataset" : "";
    out.problems.push_back(std::move(d));
    out.environment_error = true;
    return;
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < manifest->entries.size(); ++i) {
    const std::string& path = manifest->entries[i].path;
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
      d.file = options.manifest;
      d.pointer = pointer_append(pointer_append("/entries", i), "path");
      d.line = document->line_of(d.pointer);
      out.problems.push_back(std::move(d));
      continue;
    }
    if (filters.keep(full, relative)) {
      out.files.push_back(SelectedFile{full, relative, root});
    }
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const SelectedFile& a, const SelectedFile& b) { return a.path < b.path; });
}

} // namespace

std::span<const TagNamespace> tag_namespaces() {
  return k_namespaces;
}

const TagNamespace* find_tag_namespace(std::string_view name) {
  for (const auto& entry : k_namespaces) {
    if (entry.name == name) {
      return &entry;
    }
  }
  return nullptr;
}

std::string_view tag_namespace_of(std::string_view tag) {
  const std::size_t colon = tag.find(':');
  return colon == std::string_view::npos ? std::string_view() : tag.substr(0, colon);
}

std::optional<Diagnostic> check_tag(std::string_view tag) {
  if (tag.empty()) {
    return malformed(tag, "a tag cannot be empty");
  }
  for (std::size_t i = 0; i < tag.size();) {
    const std::size_t length = detail::utf8_sequence_length(tag, i);
    if (length == 0) {
      return malformed(tag, "not valid UTF-8");
    }
    const auto c = static_cast<unsigned char>(tag[i]);
    if (length == 1 && (c <= 0x20 || c == 0x7F)) {
      return malformed(tag, "contains whitespace or a control character");
    }
    i += length;
  }
  const std::size_t colon = tag.find(':');
  if (colon == std::string_view::npos) {
    return std::nullopt; // a bare flag such as `fused`
  }
  const std::string_view space = tag.substr(0, colon);
  const std::string_view value = tag.substr(colon + 1);
  if (space.empty()) {
    return malformed(tag, "the namespace before ':' is empty");
  }
  if (value.empty()) {
    return malformed(tag, fmt::format("the value after '{}:' is empty", space));
  }
  if (value == "*") {
    return malformed(tag,
                     fmt::format("'{}:*' is a pattern: only `fib tag remove` takes it", space));
  }
  if (const TagNamespace* known = find_tag_namespace(space)) {
    if (!known->accepts(value)) {
      return malformed(tag, fmt::format("{}: takes {}", space, known->value));
    }
    return std::nullopt;
  }
  std::string names;
  for (const auto& entry : k_namespaces) {
    names += names.empty() ? "" : ", ";
    names += entry.name;
  }
  Diagnostic d = make_diagnostic(
      codes::k_tag_unknown_namespace,
      fmt::format("tag '{}': namespace '{}' is not a controlled one ({}, or a bare flag)",
                  text_excerpt(tag), text_excerpt(space), names));
  return d;
}

Expected<std::vector<std::string>> read_tags(const Json& document) {
  if (!document.is_object()) {
    Diagnostic d = make_diagnostic(
        codes::k_tag_not_definition,
        fmt::format("not a definition: a JSON object is expected, got {}", json_excerpt(document)));
    return unexpected(std::move(d));
  }
  std::vector<std::string> tags;
  const auto it = document.find("tags");
  if (it == document.end()) {
    return tags;
  }
  if (!it->is_array()) {
    Diagnostic d =
        make_diagnostic(codes::k_schema_type,
                        fmt::format("tags must be a list of strings, got {}", json_excerpt(*it)));
    d.pointer = "/tags";
    return unexpected(std::move(d));
  }
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& tag = (*it)[i];
    if (!tag.is_string()) {
      Diagnostic d = make_diagnostic(
          codes::k_schema_type, fmt::format("a tag must be a string, got {}", json_excerpt(tag)));
      d.pointer = pointer_append("/tags", i);
      return unexpected(std::move(d));
    }
    tags.push_back(tag.get<std::string>());
  }
  return tags;
}

bool is_namespace_wildcard(std::string_view pattern) {
  return pattern.size() >= 3 && pattern.ends_with(":*") && pattern.find(':') == pattern.size() - 2;
}

std::vector<std::string> edit_tag_list(const std::vector<std::string>& tags, TagAction action,
                                       const std::vector<std::string>& operands) {
  std::set<std::string> result(tags.begin(), tags.end());
  if (action == TagAction::add) {
    result.insert(operands.begin(), operands.end());
  } else {
    for (const auto& operand : operands) {
      if (is_namespace_wildcard(operand)) {
        const std::string_view space = std::string_view(operand).substr(0, operand.size() - 1);
        std::erase_if(result, [&](const std::string& tag) { return tag.starts_with(space); });
      } else {
        result.erase(operand);
      }
    }
  }
  return {result.begin(), result.end()};
}

Json with_tags(const Json& document, const std::vector<std::string>& tags) {
  Json list = Json::array();
  for (const auto& tag : tags) {
    list.push_back(tag);
  }
  if (document.contains("tags")) {
    Json out = document;
    out["tags"] = std::move(list);
    return out;
  }
  Json out = Json::object();
  bool inserted = false;
  for (const auto& [key, value] : document.items()) {
    out[key] = value;
    if (key == "op_type") {
      out["tags"] = list;
      inserted = true;
    }
  }
  if (!inserted) {
    out["tags"] = std::move(list);
  }
  return out;
}

std::vector<Diagnostic> tag_clashes(const std::vector<std::string>& added,
                                    const std::vector<std::string>& after) {
  std::vector<Diagnostic> out;
  for (const auto& tag : added) {
    if (tag_namespace_of(tag) != "model") {
      continue;
    }
    std::vector<std::string> others;
    for (const auto& other : after) {
      if (other != tag && tag_namespace_of(other) == "model") {
        others.push_back(other);
      }
    }
    if (others.empty()) {
      continue;
    }
    Diagnostic d = make_diagnostic(codes::k_tag_clash,
                                   fmt::format("{} added beside {}: one definition tagged for two "
                                               "models",
                                               tag, fmt::join(others, ", ")));
    d.pointer = "/tags";
    d.hint = fmt::format("if {} replaces {}, remove the old tag: fib tag remove {} --file FILE",
                         tag, others.front(), others.front());
    out.push_back(std::move(d));
  }
  return out;
}

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
  std::error_code ec;
  if (!std::filesystem::is_directory(options.dataset, ec)) {
    Diagnostic d = make_diagnostic(codes::k_dataset_root_missing,
                                   "the dataset root does not exist or is not a directory");
    d.file = options.dataset;
    out.problems.push_back(std::move(d));
    out.environment_error = true;
    return out;
  }
  scan_definitions(options.dataset, filters, out);
  return out;
}

std::optional<Diagnostic> check_tag_write_path(const SelectedFile& file) {
  const auto unsafe = [&](const std::filesystem::path& link) {
    Diagnostic d = make_diagnostic(
        codes::k_io_unsafe_path,
        fmt::format("{} is a symbolic link; fib tag never writes through one, so the file is left "
                    "as it is",
                    link.string()));
    d.file = file.path;
    return d;
  };
  std::error_code ec;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(file.path, ec))) {
    return unsafe(file.path);
  }
  std::filesystem::path walked = file.root;
  for (const auto& part : file.relative) {
    walked /= part;
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(walked, ec))) {
      return unsafe(walked);
    }
  }
  return std::nullopt;
}

TagSummary edit_tag_files(const std::vector<SelectedFile>& files, const TagEditOptions& options,
                          const std::function<void(const TaggedFile&)>& on_file) {
  TagSummary summary;
  for (const auto& selected : files) {
    TaggedFile out;
    out.file = selected;
    const auto skip = [&](Diagnostic d) {
      if (d.file.empty()) {
        d.file = selected.path;
      }
      out.environment_failed = is_environment(d);
      out.diagnostics.push_back(std::move(d));
      out.status = TagFileStatus::skipped;
    };
    [&] {
      auto text = read_text_file(selected.path);
      if (!text) {
        skip(text.error());
        return;
      }
      out.original_text = std::move(*text);
      DiagnosticList sink;
      auto document = parse_json(out.original_text, selected.path, sink);
      for (const auto& d : sink.items()) {
        out.diagnostics.push_back(d);
      }
      if (!document) {
        skip(document.error());
        return;
      }
      auto tags = read_tags(document->root);
      if (!tags) {
        Diagnostic d = tags.error();
        d.line = document->line_of(d.pointer);
        skip(std::move(d));
        return;
      }
      const std::vector<std::string> after = edit_tag_list(*tags, options.action, options.tags);
      const std::set<std::string> before_set(tags->begin(), tags->end());
      const std::set<std::string> after_set(after.begin(), after.end());
      std::set_difference(after_set.begin(), after_set.end(), before_set.begin(), before_set.end(),
                          std::back_inserter(out.added));
      std::set_difference(before_set.begin(), before_set.end(), after_set.begin(), after_set.end(),
                          std::back_inserter(out.removed));
      if (out.added.empty() && out.removed.empty()) {
        return; // unchanged: the file keeps its bytes and its modification time
      }
      // Checked right before the write (and under --dry-run, which previews it): a link whose
      // file needs no change is harmless.
      if (auto unsafe = check_tag_write_path(selected)) {
        skip(std::move(*unsafe));
        return;
      }
      for (auto& d : tag_clashes(out.added, after)) {
        out.diagnostics.push_back(with_place(std::move(d), selected.path, "/tags"));
      }
      out.status = TagFileStatus::changed;
      out.new_text = canonical_json_text(with_tags(document->root, after));
      if (options.dry_run == DryRun::yes) {
        return;
      }
      // Dataset and manifest selections are written through directory handles: a link put in
      // place after the check above is refused, not followed.
      auto written =
          selected.relative.empty()
              ? write_file_atomically(selected.path, out.new_text, Overwrite::allowed)
              : write_file_atomically_below(selected.root, selected.relative, out.new_text,
                                            Overwrite::allowed, CreateMissing::no);
      if (!written) {
        skip(written.error());
        return;
      }
      out.written = true;
    }();
    ++summary.files;
    summary.changed += out.status == TagFileStatus::changed ? 1 : 0;
    summary.skipped += out.status == TagFileStatus::skipped ? 1 : 0;
    summary.environment_failed = summary.environment_failed || out.environment_failed;
    on_file(out);
  }
  return summary;
}

TagInventory inventory_tags(const std::vector<SelectedFile>& files, DiagnosticSink& sink) {
  TagInventory inventory;
  for (const auto& selected : files) {
    const auto skip = [&](Diagnostic d) {
      if (d.file.empty()) {
        d.file = selected.path;
      }
      inventory.environment_failed = inventory.environment_failed || is_environment(d);
      ++inventory.skipped;
      sink.report(std::move(d));
    };
    auto text = read_text_file(selected.path);
    if (!text) {
      skip(text.error());
      continue;
    }
    auto document = parse_json(*text, selected.path, sink);
    if (!document) {
      skip(document.error());
      continue;
    }
    auto tags = read_tags(document->root);
    if (!tags) {
      Diagnostic d = tags.error();
      d.line = document->line_of(d.pointer);
      skip(std::move(d));
      continue;
    }
    ++inventory.files;
    std::set<std::string> spaces;
    std::set<std::string> distinct;
    for (std::size_t i = 0; i < tags->size(); ++i) {
      const std::string& tag = (*tags)[i];
      if (auto problem = check_tag(tag); problem && problem->code == codes::k_tag_malformed) {
        problem->severity = Severity::warning;
        problem->file = selected.path;
        problem->pointer = pointer_append("/tags", i);
        problem->line = document->line_of(problem->pointer);
        sink.report(std::move(*problem));
      }
      distinct.insert(tag);
      spaces.insert(tag.find(':') == std::string::npos ? std::string(k_flag_namespace)
                                                       : std::string(tag_namespace_of(tag)));
    }
    for (const auto& tag : distinct) {
      ++inventory.tags[tag];
    }
    for (const auto& space : spaces) {
      ++inventory.namespaces[space];
    }
  }
  return inventory;
}

Json tag_inventory_json(const TagInventory& inventory) {
  Json out = Json::object();
  out["files"] = inventory.files;
  Json spaces = Json::object();
  for (const auto& [name, count] : inventory.namespaces) {
    spaces[name] = count;
  }
  Json tags = Json::object();
  for (const auto& [name, count] : inventory.tags) {
    tags[name] = count;
  }
  out["namespaces"] = std::move(spaces);
  out["tags"] = std::move(tags);
  return out;
}

} // namespace fib
