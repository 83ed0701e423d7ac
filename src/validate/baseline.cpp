// The baseline file: reading, writing, and matching a run's findings against it.

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/util/sha256.hpp>
#include <fib/validate/baseline.hpp>
#include <fib/validate/finding_policy.hpp>

#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <system_error>

namespace fib {
namespace {

constexpr std::size_t k_fingerprint_digits = 16;

std::string fingerprint(std::string_view message, const std::string& directory_prefix) {
  std::string text(message);
  if (!directory_prefix.empty()) {
    for (auto at = text.find(directory_prefix); at != std::string::npos;
         at = text.find(directory_prefix, at)) {
      text.erase(at, directory_prefix.size());
    }
  }
  return to_hex(sha256(text)).substr(0, k_fingerprint_digits);
}

// The baseline directory's absolute path with its '/', as cut out of messages.
std::string directory_prefix(const std::filesystem::path& baseline_file) {
  std::error_code error;
  auto directory = std::filesystem::absolute(baseline_file, error).lexically_normal().parent_path();
  if (error || directory.empty()) {
    return {};
  }
  std::string prefix = directory.string();
  if (prefix == "/") {
    return {}; // a baseline at the root: cutting "/" would cut every path apart
  }
  if (prefix.back() != '/') {
    prefix += '/';
  }
  return prefix;
}

// Errors and warnings about the data: notes never fail a run, and what fib could not do
// (environment, usage) is never a known finding.
// A path as the file keeps it: valid UTF-8 as it is, each byte of an invalid sequence and each
// '%' as %XX, so that any file name survives the JSON text and reads back the same.
std::string file_text(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (std::size_t i = 0; i < path.size();) {
    const auto c = static_cast<unsigned char>(path[i]);
    const std::size_t length = c < 0x80 ? 1 : detail::utf8_sequence_length(path, i);
    if (length == 0 || c == '%') {
      out += fmt::format("%{:02X}", c);
      ++i;
      continue;
    }
    out.append(path.substr(i, length));
    i += length;
  }
  return out;
}

Diagnostic invalid(const std::filesystem::path& file, std::string pointer, std::string message,
                   int line = 0) {
  Diagnostic d = make_diagnostic(codes::k_baseline_invalid, std::move(message));
  d.file = file;
  d.pointer = std::move(pointer);
  d.line = line;
  d.hint = "fib never overwrites a file that is not a baseline: remove it, then write it again "
           "with `fib validate ... --write-baseline FILE`";
  return d;
}

Expected<std::string> string_member(const Json& object, const char* key,
                                    const std::filesystem::path& file, const std::string& at) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return unexpected(
        invalid(file, pointer_append(at, key), fmt::format("'{}' must be a string", key)));
  }
  return it->get<std::string>();
}

Severity parse_recorded_severity(const Json& entry) {
  const auto it = entry.find("severity");
  if (it != entry.end() && it->is_string()) {
    if (const auto severity = parse_enum<Severity>(it->get<std::string>())) {
      return *severity;
    }
  }
  return Severity::warning;
}

Expected<BaselineEntry> parse_entry(const Json& value, const std::filesystem::path& file,
                                    const std::string& at) {
  if (!value.is_object()) {
    return unexpected(invalid(file, at, "an entry must be an object"));
  }
  BaselineEntry entry;
  FIB_TRY_ASSIGN(entry.key.code, string_member(value, "code", file, at));
  FIB_TRY_ASSIGN(entry.key.file, string_member(value, "file", file, at));
  FIB_TRY_ASSIGN(entry.key.pointer, string_member(value, "pointer", file, at));
  FIB_TRY_ASSIGN(entry.key.fingerprint, string_member(value, "fingerprint", file, at));
  const auto count = value.find("count");
  if (count == value.end() || !count->is_number_integer() || count->get<long long>() <= 0) {
    return unexpected(
        invalid(file, pointer_append(at, "count"), "'count' must be a positive integer"));
  }
  entry.count = count->get<std::size_t>();
  if (const auto message = value.find("message"); message != value.end() && message->is_string()) {
    entry.message = message->get<std::string>();
  }
  entry.severity = parse_recorded_severity(value);
  return entry;
}

const BaselineEntry* find_entry(const Baseline& baseline, const BaselineKey& key,
                                std::size_t* index) {
  const auto it = std::lower_bound(
      baseline.entries.begin(), baseline.entries.end(), key,
      [](const BaselineEntry& entry, const BaselineKey& wanted) { return entry.key < wanted; });
  if (it == baseline.entries.end() || it->key != key) {
    return nullptr;
  }
  *index = static_cast<std::size_t>(it - baseline.entries.begin());
  return &*it;
}

std::string describe(const BaselineEntry& entry) {
  std::string where = entry.key.file.empty() ? std::string("the dataset") : entry.key.file;
  if (!entry.key.pointer.empty()) {
    where += " " + entry.key.pointer;
  }
  std::string text = fmt::format("{} in {}", entry.key.code, where);
  if (!entry.message.empty()) {
    text += fmt::format(" ({})", text_excerpt(entry.message));
  }
  if (entry.count > 1) {
    text += fmt::format(", {} of them", entry.count);
  }
  return text;
}

} // namespace

bool is_baseline_finding(const BaselineFinding& finding) {
  const CodeInfo* info = find_code(finding.code);
  return finding.severity != Severity::note && info != nullptr &&
         info->exit_class == ExitClass::finding;
}

BaselineKey baseline_key(const BaselineFinding& finding,
                         const std::filesystem::path& baseline_file) {
  BaselineKey key;
  key.code = std::string(finding.code);
  const auto base = std::filesystem::absolute(baseline_file).lexically_normal().parent_path();
  key.file = finding.file.empty() ? std::string() : file_text(path_relative_to(finding.file, base));
  key.pointer = std::string(finding.pointer);
  key.fingerprint = fingerprint(finding.message, directory_prefix(baseline_file));
  return key;
}

Expected<Baseline> read_baseline(const std::filesystem::path& file) {
  std::error_code error;
  if (std::filesystem::is_directory(file, error)) {
    return unexpected(invalid(file, "", "a baseline is a file, and this is a directory"));
  }
  FIB_TRY_ASSIGN(const std::string text, read_text_file(file));
  DiagnosticList ignored;
  auto parsed = parse_json(text, file, ignored);
  if (!parsed) {
    return unexpected(invalid(file, parsed.error().pointer,
                              "not a baseline: " + parsed.error().message, parsed.error().line));
  }
  const JsonDocument& document = *parsed;
  const Json& root = document.root;
  if (!root.is_object()) {
    return unexpected(invalid(file, "", "a baseline is a JSON object"));
  }
  const auto version = root.find("fib_baseline");
  if (version == root.end() || !version->is_number_integer() ||
      version->get<long long>() != k_baseline_version) {
    return unexpected(invalid(
        file, "/fib_baseline",
        fmt::format("'fib_baseline' must be {} (the format this fib reads)", k_baseline_version)));
  }
  const auto entries = root.find("entries");
  if (entries == root.end() || !entries->is_array()) {
    return unexpected(invalid(file, "/entries", "'entries' must be an array"));
  }
  Baseline baseline;
  baseline.file = file;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    FIB_TRY_ASSIGN(BaselineEntry entry,
                   parse_entry((*entries)[i], file, pointer_append("/entries", i)));
    entry.position = i;
    baseline.entries.push_back(std::move(entry));
  }
  std::vector<std::size_t> order(baseline.entries.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return baseline.entries[a].key < baseline.entries[b].key;
  });
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (baseline.entries[order[i]].key == baseline.entries[order[i - 1]].key) {
      return unexpected(invalid(file, pointer_append("/entries", order[i]),
                                fmt::format("entry {} repeats the key of entry {} (one entry per "
                                            "key; its count says how many findings)",
                                            order[i], order[i - 1])));
    }
  }
  std::vector<BaselineEntry> sorted;
  sorted.reserve(order.size());
  for (const std::size_t i : order) {
    sorted.push_back(std::move(baseline.entries[i]));
  }
  baseline.entries = std::move(sorted);
  return baseline;
}

std::string render_baseline(const Baseline& baseline) {
  Json entries = Json::array();
  for (const BaselineEntry& entry : baseline.entries) {
    Json item = Json::object();
    item["code"] = entry.key.code;
    item["file"] = entry.key.file;
    item["pointer"] = entry.key.pointer;
    item["fingerprint"] = entry.key.fingerprint;
    item["count"] = entry.count;
    item["severity"] = std::string(to_string(entry.severity));
    item["message"] = entry.message;
    entries.push_back(std::move(item));
  }
  Json root = Json::object();
  root["fib_baseline"] = k_baseline_version;
  root["entries"] = std::move(entries);
  return canonical_json_text(root);
}

Baseline make_baseline(const std::vector<BaselineFinding>& findings,
                       const std::filesystem::path& file, const Baseline* previous,
                       const BaselineScope& scope) {
  std::map<BaselineKey, BaselineEntry> by_key;
  for (const BaselineFinding& finding : findings) {
    if (!is_baseline_finding(finding)) {
      continue;
    }
    BaselineKey key = baseline_key(finding, file);
    auto [it, inserted] = by_key.try_emplace(key);
    if (inserted) {
      it->second.key = std::move(key);
      it->second.message = std::string(finding.message);
      it->second.severity = finding.severity;
      it->second.count = 0;
    }
    ++it->second.count;
  }
  if (previous != nullptr) {
    for (const BaselineEntry& entry : previous->entries) {
      if (!scope(entry.key)) {
        by_key.try_emplace(entry.key, entry);
      }
    }
  }
  Baseline baseline;
  baseline.file = file;
  for (auto& [key, entry] : by_key) {
    entry.position = baseline.entries.size();
    baseline.entries.push_back(std::move(entry));
  }
  return baseline;
}

BaselineScope dataset_baseline_scope(const DatasetReport& report,
                                     const std::filesystem::path& baseline_file,
                                     DatasetCoverage coverage) {
  if (coverage == DatasetCoverage::some_categories) {
    return [](const BaselineKey&) { return false; };
  }
  if (coverage == DatasetCoverage::whole) {
    // Every definition was checked: an entry of a file that is gone (a deleted or renamed
    // definition) is fixed too.
    return [](const BaselineKey&) { return true; };
  }
  const auto base = std::filesystem::absolute(baseline_file).lexically_normal().parent_path();
  std::set<std::string> files;
  for (const auto& [name, file] : report.definition_files) {
    files.insert(file_text(path_relative_to(file, base)));
  }
  return [files = std::move(files)](const BaselineKey& key) { return files.contains(key.file); };
}

BaselineScope files_baseline_scope(const std::vector<std::filesystem::path>& paths,
                                   const std::filesystem::path& baseline_file) {
  const auto base = std::filesystem::absolute(baseline_file).lexically_normal().parent_path();
  std::vector<std::string> given;
  for (const auto& path : paths) {
    std::string relative = file_text(path_relative_to(path, base));
    while (relative.size() > 1 && relative.back() == '/') {
      relative.pop_back();
    }
    given.push_back(relative == "." ? std::string() : std::move(relative));
  }
  return [given = std::move(given)](const BaselineKey& key) {
    return std::any_of(given.begin(), given.end(), [&](const std::string& path) {
      return path.empty() || key.file == path ||
             (key.file.starts_with(path) && key.file[path.size()] == '/');
    });
  };
}

BaselineMatcher::BaselineMatcher(const Baseline& baseline)
    : m_baseline(baseline), m_left(baseline.entries.size()) {
  for (std::size_t i = 0; i < m_left.size(); ++i) {
    m_left[i] = baseline.entries[i].count;
  }
}

bool BaselineMatcher::suppresses(const BaselineFinding& finding) {
  if (m_baseline.entries.empty() || !is_baseline_finding(finding)) {
    return false;
  }
  std::size_t index = 0;
  if (find_entry(m_baseline, baseline_key(finding, m_baseline.file), &index) == nullptr ||
      m_left[index] == 0) {
    return false;
  }
  --m_left[index];
  ++m_match.suppressed;
  return true;
}

BaselineMatch BaselineMatcher::finish(const BaselineScope& scope) const {
  BaselineMatch match = m_match;
  for (std::size_t i = 0; i < m_left.size(); ++i) {
    if (m_left[i] > 0 && scope(m_baseline.entries[i].key)) {
      BaselineEntry left = m_baseline.entries[i];
      left.count = m_left[i];
      match.fixed.push_back(std::move(left));
    }
  }
  return match;
}

BaselineMatch apply_baseline(const Baseline& baseline, std::vector<Diagnostic>& found,
                             const BaselineScope& scope) {
  BaselineMatcher matcher(baseline);
  std::erase_if(found, [&](const Diagnostic& d) {
    return matcher.suppresses({d.code, d.file, d.pointer, d.message, d.severity});
  });
  return matcher.finish(scope);
}

BaselineMatch apply_baseline(const Baseline& baseline, DatasetReport& report,
                             const BaselineScope& scope) {
  BaselineMatcher matcher(baseline);
  const auto filter = [&](CheckResult& result, const std::filesystem::path& file) {
    const auto before = result.messages.size();
    std::erase_if(result.messages, [&](const CheckMessage& m) {
      return matcher.suppresses({m.code, file, "", m.message, severity_of(m.level)});
    });
    if (result.messages.size() != before) {
      result.update_status();
    }
  };
  for_each_result(report, filter);
  BaselineMatch match = matcher.finish(scope);
  if (match.suppressed == 0 && match.fixed.empty()) {
    return match;
  }
  if (!report.dataset) {
    report.dataset.emplace();
  }
  if (match.suppressed > 0) {
    report.dataset->add(codes::k_baseline_suppressed,
                        fmt::format("[fib] {} finding{} suppressed by the baseline {}",
                                    match.suppressed, match.suppressed == 1 ? "" : "s",
                                    baseline.file.string()));
  }
  for (const BaselineEntry& entry : match.fixed) {
    report.dataset->add(codes::k_baseline_fixed,
                        fmt::format("[fib] baseline entry fixed: {}; --write-baseline {} drops it",
                                    describe(entry), baseline.file.string()));
  }
  return match;
}

std::vector<BaselineFinding> report_findings(const DatasetReport& report) {
  std::vector<BaselineFinding> findings;
  for_each_result(report, [&](const CheckResult& result, const std::filesystem::path& file) {
    for (const CheckMessage& m : result.messages) {
      findings.push_back({m.code, file, "", m.message, severity_of(m.level)});
    }
  });
  return findings;
}

Diagnostic fixed_entry_note(const Baseline& baseline, const BaselineEntry& entry) {
  Diagnostic d = make_diagnostic(codes::k_baseline_fixed,
                                 fmt::format("baseline entry fixed: {}", describe(entry)));
  d.file = baseline.file;
  d.pointer = pointer_append("/entries", entry.position);
  d.hint = fmt::format("`--write-baseline {}` drops it", baseline.file.string());
  return d;
}

} // namespace fib
