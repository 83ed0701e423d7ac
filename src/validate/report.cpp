#include "fib/validate/report.hpp"

#include "io/schema_reader.hpp"
#include "util/parallel_for.hpp"
#include "util/strings.hpp"
#include "validate/shard_record.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace fib {
namespace {

CheckStatus worse(CheckStatus a, CheckStatus b) {
  return a > b ? a : b;
}

// The level of a message of `code`: its default severity in the codes table (make_diagnostic
// aborts on a code that is not in it).
CheckLevel default_level(std::string_view code) {
  return level_of(make_diagnostic(code, {}).severity);
}

CheckStatus status_of(CheckLevel level) {
  switch (level) {
  case CheckLevel::error:
    return CheckStatus::error;
  case CheckLevel::warning:
    return CheckStatus::warning;
  case CheckLevel::info:
    return CheckStatus::ok;
  }
  return CheckStatus::ok;
}

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

void render_result(std::string& out, std::string_view name, const std::optional<CheckResult>& r) {
  const std::string label = fmt::format("{}:", name);
  if (!r) {
    out += fmt::format("  {:<12} None (skipped)\n", label);
    return;
  }
  out += fmt::format("  {:<12} {}\n", label, to_string(r->status));
  for (const CheckMessage& m : r->messages) {
    out += fmt::format("    - {}\n", m.message);
  }
}

std::string joined_or_all(const std::vector<std::string>& items) {
  return items.empty() ? std::string("(all)") : fmt::format("{}", fmt::join(items, ", "));
}

// Reads "ok" / "warning" / "error"; anything else is reported and read as ok.
CheckStatus read_status(detail::Reader& reader, const Json& value, const std::string& pointer) {
  const std::string text = value.is_string() ? value.get<std::string>() : std::string{};
  if (const auto status = parse_enum<CheckStatus>(text)) {
    return *status;
  }
  reader.report(
      codes::k_report_invalid, pointer,
      fmt::format("Input should be 'ok', 'warning' or 'error', got {}", json_excerpt(value)));
  return CheckStatus::ok;
}

// Reads one {level, message, code?} object (`code` is fib's; reports without it read as "").
CheckMessage parse_message(detail::Reader& reader, const Json& item,
                           const std::string& item_pointer) {
  CheckMessage message;
  if (const Json* level = reader.member(item, item_pointer, "level", detail::Presence::required)) {
    const std::string text = level->is_string() ? level->get<std::string>() : std::string{};
    if (const auto parsed = parse_enum<CheckLevel>(text)) {
      message.level = *parsed;
    } else {
      reader.report(codes::k_report_invalid, pointer_append(item_pointer, "level"),
                    fmt::format("Input should be 'info', 'warning' or 'error', got {}",
                                json_excerpt(*level)));
    }
  }
  if (const Json* text = reader.member(item, item_pointer, "message", detail::Presence::required)) {
    message.message =
        reader.string(*text, pointer_append(item_pointer, "message"), detail::EmptyString::allowed)
            .value_or("");
  }
  if (const Json* code = reader.member(item, item_pointer, "code", detail::Presence::optional)) {
    message.code = table_code(
        reader.string(*code, pointer_append(item_pointer, "code"), detail::EmptyString::allowed)
            .value_or(""));
  }
  return message;
}

// Reads a CheckResult; reports problems through `reader`.
std::optional<CheckResult> parse_result(detail::Reader& reader, const Json& value,
                                        const std::string& pointer) {
  if (!reader.expect_object(value, pointer)) {
    return std::nullopt;
  }
  CheckResult result;
  if (const Json* status = reader.member(value, pointer, "status", detail::Presence::required)) {
    result.status = read_status(reader, *status, pointer_append(pointer, "status"));
  }
  if (const Json* messages =
          reader.member(value, pointer, "messages", detail::Presence::optional)) {
    const std::string list_pointer = pointer_append(pointer, "messages");
    if (!messages->is_array()) {
      reader.report(codes::k_report_invalid, list_pointer, "Input should be a valid list");
      return result;
    }
    for (std::size_t i = 0; i < messages->size(); ++i) {
      const std::string item_pointer = pointer_append(list_pointer, i);
      const Json& item = (*messages)[i];
      if (!reader.expect_object(item, item_pointer)) {
        continue;
      }
      result.messages.push_back(parse_message(reader, item, item_pointer));
    }
  }
  return result;
}

std::vector<std::string> parse_string_list(detail::Reader& reader, const Json& object,
                                           const std::string& key) {
  if (const Json* value = reader.member(object, "/config", key, detail::Presence::required)) {
    return reader.string_list(*value, pointer_append("/config", key), detail::EmptyString::allowed)
        .value_or(std::vector<std::string>{});
  }
  return {};
}

} // namespace

CheckLevel level_of(Severity severity) {
  switch (severity) {
  case Severity::error:
    return CheckLevel::error;
  case Severity::warning:
    return CheckLevel::warning;
  case Severity::note:
    return CheckLevel::info;
  }
  return CheckLevel::info;
}

CheckMessage& CheckResult::add(std::string_view code, std::string message) {
  return add(default_level(code), code, std::move(message));
}

CheckMessage& CheckResult::add(CheckLevel level, std::string_view code, std::string message) {
  return add(CheckMessage{level, std::move(message), table_code(code), {}});
}

CheckMessage& CheckResult::add(CheckMessage message) {
  status = worse(status, status_of(message.level));
  return messages.emplace_back(std::move(message));
}

CheckMessage& CheckResult::add_front(std::string_view code, std::string message) {
  const CheckLevel level = default_level(code);
  status = worse(status, status_of(level));
  return *messages.insert(messages.begin(),
                          CheckMessage{level, std::move(message), table_code(code), {}});
}

Severity severity_of(CheckLevel level) {
  switch (level) {
  case CheckLevel::error:
    return Severity::error;
  case CheckLevel::warning:
    return Severity::warning;
  case CheckLevel::info:
    return Severity::note;
  }
  return Severity::error;
}

void CheckResult::update_status() {
  status = CheckStatus::ok;
  for (const CheckMessage& message : messages) {
    status = worse(status, status_of(message.level));
  }
}

void DefinitionReport::update_status() {
  status = CheckStatus::ok;
  for (const auto& result : categories) {
    if (result) {
      status = worse(status, result->status);
    }
  }
}

DiagnosticCounts count_findings(const DatasetReport& report) {
  DiagnosticCounts counts;
  const auto count = [&](const CheckResult& result) {
    for (const CheckMessage& m : result.messages) {
      ++(m.level == CheckLevel::error     ? counts.errors
         : m.level == CheckLevel::warning ? counts.warnings
                                          : counts.notes);
    }
  };
  for (const auto& [name, definition] : report.definitions) {
    for (const auto& result : definition.categories) {
      if (result) {
        count(*result);
      }
    }
  }
  if (report.dataset) {
    count(*report.dataset);
  }
  return counts;
}

StatusCounts count_statuses(const DatasetReport& report) {
  StatusCounts counts;
  for (const auto& [name, definition] : report.definitions) {
    switch (definition.status) {
    case CheckStatus::ok:
      ++counts.ok;
      break;
    case CheckStatus::warning:
      ++counts.warning;
      break;
    case CheckStatus::error:
      ++counts.error;
      break;
    }
  }
  return counts;
}

namespace {

// Writes the report JSON straight into a string, byte for byte what nlohmann's
// dump(2, ' ', false, replace) writes for the same tree (the format the old tool's json.dump
// gives), without building the tree.
class ReportJsonWriter {
public:
  // Starts at nesting depth `depth` (a piece of a document rendered by itself).
  explicit ReportJsonWriter(int depth = 0) : m_depth(depth) {}
  std::string take() { return std::move(m_out); }

  // As nlohmann's dump (no ASCII escaping, invalid UTF-8 replaced) writes `text`: `"` and `\`
  // and the control characters escaped (\b \f \n \r \t, else \u00xx), everything else as it is.
  // Plain ASCII is passed over eight bytes at a time.
  void string(std::string_view text) {
    const std::size_t start = m_out.size();
    m_out += '"';
    std::size_t run = 0; // the start of the bytes not yet written
    std::size_t i = 0;
    while (i < text.size()) {
      if (i + 8 <= text.size() && is_plain_ascii_word(text.data() + i)) {
        i += 8;
        continue;
      }
      const auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x80) {
        const std::size_t length = detail::utf8_sequence_length(text, i);
        if (length == 0) {
          // Where the replacement characters go: nlohmann's own serializer decides.
          m_out.resize(start);
          m_out += Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
          return;
        }
        i += length;
        continue;
      }
      if (c >= 0x20 && c != '"' && c != '\\') {
        ++i;
        continue;
      }
      m_out.append(text.data() + run, i - run);
      escape(c);
      run = ++i;
    }
    m_out.append(text.data() + run, text.size() - run);
    m_out += '"';
  }
  void boolean(bool value) { m_out += value ? "true" : "false"; }
  void null() { m_out += "null"; }
  void raw(std::string_view text) { m_out += text; }
  void strings(const std::vector<std::string>& items) {
    if (items.empty()) {
      m_out += "[]";
      return;
    }
    open('[');
    for (std::size_t i = 0; i < items.size(); ++i) {
      item(i);
      string(items[i]);
    }
    close(']');
  }
  // Starts an object or array (never empty ones: callers write "{}" / "[]" themselves).
  void open(char bracket) {
    m_out += bracket;
    ++m_depth;
  }
  void close(char bracket) {
    --m_depth;
    newline();
    m_out += bracket;
  }
  // Before the `index`-th member or element.
  void item(std::size_t index) {
    if (index > 0) {
      m_out += ',';
    }
    newline();
  }
  void key(std::size_t index, std::string_view name) {
    item(index);
    string(name);
    m_out += ": ";
  }
  // fib's own member names and enum values, which need no escape: written as they are.
  void fixed_key(std::size_t index, std::string_view name) {
    item(index);
    fixed_string(name);
    m_out += ": ";
  }
  void fixed_string(std::string_view text) {
    m_out += '"';
    m_out += text;
    m_out += '"';
  }

private:
  // True when none of the eight bytes at `bytes` is above 0x7f, below 0x20, `"` or `\` (the
  // "has a byte less than" and "has a zero byte" word tests: exact as to whether any byte is).
  static bool is_plain_ascii_word(const char* bytes) {
    constexpr std::uint64_t k_ones = 0x0101010101010101ULL;
    constexpr std::uint64_t k_highs = 0x8080808080808080ULL;
    std::uint64_t word = 0;
    std::memcpy(&word, bytes, sizeof word);
    const auto has_zero_byte = [&](std::uint64_t w) { return (w - k_ones) & ~w & k_highs; };
    const std::uint64_t control = (word - k_ones * 0x20) & ~word & k_highs;
    return ((word & k_highs) | control | has_zero_byte(word ^ (k_ones * '"')) |
            has_zero_byte(word ^ (k_ones * '\\'))) == 0;
  }
  void escape(unsigned char c) {
    switch (c) {
    case '"':
      m_out += "\\\"";
      return;
    case '\\':
      m_out += "\\\\";
      return;
    case '\b':
      m_out += "\\b";
      return;
    case '\f':
      m_out += "\\f";
      return;
    case '\n':
      m_out += "\\n";
      return;
    case '\r':
      m_out += "\\r";
      return;
    case '\t':
      m_out += "\\t";
      return;
    default: {
      static constexpr char k_hex[] = "0123456789abcdef";
      const char code[] = {'\\', 'u', '0', '0', k_hex[c >> 4], k_hex[c & 0xF]};
      m_out.append(code, sizeof code);
      return;
    }
    }
  }
  void newline() {
    m_out += '\n';
    m_out.append(static_cast<std::size_t>(m_depth) * 2, ' ');
  }

  std::string m_out;
  int m_depth = 0;
};

void write_check_result(ReportJsonWriter& out, const CheckResult& result) {
  out.open('{');
  out.fixed_key(0, "status");
  out.fixed_string(to_string(result.status));
  out.fixed_key(1, "messages");
  if (result.messages.empty()) {
    out.raw("[]");
  } else {
    out.open('[');
    for (std::size_t i = 0; i < result.messages.size(); ++i) {
      const CheckMessage& m = result.messages[i];
      out.item(i);
      out.open('{');
      out.fixed_key(0, "level");
      out.fixed_string(to_string(m.level));
      out.fixed_key(1, "message");
      out.string(m.message);
      if (!m.code.empty()) {
        out.fixed_key(2, "code");
        out.string(m.code);
      }
      out.close('}');
    }
    out.close(']');
  }
  out.close('}');
}

// The members [begin, end) of the report's "definitions" object, the first with index `index`, as
// they stand inside it (at depth 2).
using DefinitionIterator = std::map<std::string, DefinitionReport>::const_iterator;
std::string definition_members(DefinitionIterator begin, DefinitionIterator end,
                               std::size_t index) {
  ReportJsonWriter out(2);
  for (auto it = begin; it != end; ++it) {
    out.key(index++, it->first);
    out.open('{');
    out.fixed_key(0, "status");
    out.fixed_string(to_string(it->second.status));
    std::size_t member = 1;
    for (const Category category : k_category_order) {
      out.fixed_key(member++, to_string(category));
      if (const auto& result = it->second[category]) {
        write_check_result(out, *result);
      } else {
        out.null();
      }
    }
    out.close('}');
  }
  return out.take();
}

// A large report's definitions are rendered in pieces on all cores while the pieces already done
// are handed on, in order. 16 definitions keep a piece's text under the 1 MiB above which glibc
// gives a block a mapping of its own (fresh pages on every piece, outside the huge-page heap);
// pieces of 128 took the peak RSS of a warm ×100 run from 42 to 47 MB, at the same speed.
constexpr std::size_t k_definitions_per_piece = 16;

using PieceWriter = std::function<std::optional<Diagnostic>(std::string_view)>;

// The start of every piece of the report's definitions, then their end.
std::vector<DefinitionIterator> piece_starts(const DatasetReport& report) {
  std::vector<DefinitionIterator> starts;
  starts.reserve(report.definitions.size() / k_definitions_per_piece + 2);
  std::size_t position = 0;
  for (auto it = report.definitions.begin(); it != report.definitions.end(); ++it, ++position) {
    if (position % k_definitions_per_piece == 0) {
      starts.push_back(it);
    }
  }
  starts.push_back(report.definitions.end());
  return starts;
}

// Renders the definitions' pieces on a thread of their own (which runs them on all cores) and
// hands each to `write` in order as soon as it and those before it are done. Stops rendering at
// the first piece `write` refuses, and returns that refusal. A rendering failure (out of memory)
// is rethrown here.
std::optional<Diagnostic> stream_definition_members(const DatasetReport& report,
                                                    const PieceWriter& write) {
  const std::vector<DefinitionIterator> starts = piece_starts(report);
  const std::size_t pieces = starts.size() - 1;
  std::vector<std::string> rendered(pieces);
  std::vector<char> done(pieces, 0);
  std::mutex mutex;
  std::condition_variable ready;
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  std::thread renderer([&] {
    try {
      detail::parallel_for(pieces, [&](std::size_t piece) {
        if (stop.load(std::memory_order_relaxed)) {
          return;
        }
        std::string text =
            definition_members(starts[piece], starts[piece + 1], piece * k_definitions_per_piece);
        const std::lock_guard lock(mutex);
        rendered[piece] = std::move(text);
        done[piece] = 1;
        ready.notify_all();
      });
    } catch (...) {
      const std::lock_guard lock(mutex);
      failure = std::current_exception();
    }
    const std::lock_guard lock(mutex);
    stop = true;
    ready.notify_all();
  });
  std::optional<Diagnostic> refused;
  try {
    for (std::size_t piece = 0; piece < pieces && !refused; ++piece) {
      std::string text;
      {
        std::unique_lock lock(mutex);
        ready.wait(lock, [&] { return done[piece] != 0 || stop.load(); });
        if (done[piece] == 0) {
          break; // the renderer failed
        }
        text = std::move(rendered[piece]);
      }
      refused = write(text);
    }
  } catch (...) {
    stop = true; // `write` threw (out of memory): the renderer is joined before it goes on
    renderer.join();
    throw;
  }
  stop = true;
  renderer.join();
  if (failure) {
    std::rethrow_exception(failure);
  }
  return refused;
}

// The report JSON handed to `write` piece by piece, in order (render_report_json's bytes); stops
// at the first piece `write` refuses and returns that refusal.
std::optional<Diagnostic> stream_report_json(const DatasetReport& report,
                                             const PieceWriter& write) {
  ReportJsonWriter head;
  head.open('{');
  head.fixed_key(0, "config");
  head.open('{');
  head.fixed_key(0, "dataset");
  head.string(report.config.dataset);
  head.fixed_key(1, "checks");
  head.strings(report.config.checks);
  head.fixed_key(2, "disable_gpu");
  head.boolean(report.config.disable_gpu);
  head.fixed_key(3, "op_types");
  head.strings(report.config.op_types);
  head.fixed_key(4, "definitions");
  head.strings(report.config.definitions);
  head.close('}');
  head.fixed_key(1, "definitions");
  const bool any = !report.definitions.empty();
  head.raw(any ? "{" : "{}");
  if (auto refused = write(head.take())) {
    return refused;
  }
  if (any) {
    if (auto refused = stream_definition_members(report, write)) {
      return refused;
    }
  }
  // The rest as a writer at the depth the head left would write it.
  ReportJsonWriter tail(any ? 2 : 1);
  if (any) {
    tail.close('}');
  }
  if (report.dataset && !report.dataset->messages.empty()) {
    tail.fixed_key(2, "fib_dataset");
    write_check_result(tail, *report.dataset);
  }
  if (const auto& shard = report.shard) {
    tail.fixed_key(3, "fib_shard");
    tail.open('{');
    tail.fixed_key(0, "index");
    tail.raw(std::to_string(shard->index));
    tail.fixed_key(1, "count");
    tail.raw(std::to_string(shard->count));
    tail.fixed_key(2, "dataset_definitions");
    tail.raw(std::to_string(shard->dataset_definitions));
    tail.fixed_key(3, "dataset_fingerprint");
    tail.string(shard->dataset_fingerprint);
    tail.fixed_key(4, "fib_version");
    tail.string(shard->fib_version);
    tail.close('}');
  }
  tail.close('}');
  return write(tail.take());
}

} // namespace

std::string render_report_json(const DatasetReport& report) {
  std::string out;
  (void)stream_report_json(report, [&](std::string_view piece) -> std::optional<Diagnostic> {
    out += piece;
    return std::nullopt;
  });
  return out;
}

std::string render_report_text(const DatasetReport& report) {
  const StatusCounts counts = count_statuses(report);
  std::string out = "=== Dataset Validation Report ===\n";
  out += fmt::format("dataset:       {}\n", report.config.dataset);
  out += fmt::format("checks:        {}\n", fmt::join(report.config.checks, ", "));
  out += fmt::format("disable_gpu:   {}\n", report.config.disable_gpu ? "True" : "False");
  out += fmt::format("op_types:      {}\n", joined_or_all(report.config.op_types));
  out += fmt::format("definitions:   {}\n", joined_or_all(report.config.definitions));
  out += "\n";
  out += fmt::format("{} definitions: {} ok, {} warning, {} error\n", report.definitions.size(),
                     counts.ok, counts.warning, counts.error);
  out += "\n";
  for (const auto& [name, definition] : report.definitions) {
    out += fmt::format("--- {} [{}] ---\n", name, upper(to_string(definition.status)));
    for (const Category category : k_category_order) {
      render_result(out, to_string(category), definition[category]);
    }
    out += "\n";
  }
  if (report.dataset && !report.dataset->messages.empty()) {
    out += fmt::format("--- dataset (fib: files outside any definition's report) [{}] ---\n",
                       upper(to_string(report.dataset->status)));
    for (const CheckMessage& m : report.dataset->messages) {
      out += fmt::format("    - {}\n", m.message);
    }
    out += "\n";
  }
  // The old tool joins lines with "\n" and ends with an empty line: exactly one trailing "\n".
  out.pop_back();
  return out;
}

Expected<DatasetReport> parse_report_json(std::string_view text,
                                          const std::filesystem::path& file) {
  DiagnosticList sink;
  auto document = parse_json(text, file, sink);
  if (!document) {
    return unexpected(document.error());
  }
  DatasetReport report;
  detail::Reader reader(*document, sink);
  const Json& root = document->root;
  if (reader.expect_object(root, "")) {
    if (const Json* config = reader.member(root, "", "config", detail::Presence::required);
        config != nullptr && reader.expect_object(*config, "/config")) {
      if (const Json* dataset =
              reader.member(*config, "/config", "dataset", detail::Presence::required)) {
        report.config.dataset =
            reader.string(*dataset, "/config/dataset", detail::EmptyString::allowed).value_or("");
      }
      report.config.checks = parse_string_list(reader, *config, "checks");
      if (const Json* gpu =
              reader.member(*config, "/config", "disable_gpu", detail::Presence::required)) {
        report.config.disable_gpu = reader.boolean(*gpu, "/config/disable_gpu").value_or(false);
      }
      report.config.op_types = parse_string_list(reader, *config, "op_types");
      report.config.definitions = parse_string_list(reader, *config, "definitions");
    }
    if (const Json* definitions =
            reader.member(root, "", "definitions", detail::Presence::required);
        definitions != nullptr && reader.expect_object(*definitions, "/definitions")) {
      for (const auto& [name, value] : definitions->items()) {
        const std::string pointer = pointer_append("/definitions", name);
        if (!reader.expect_object(value, pointer)) {
          continue;
        }
        DefinitionReport entry;
        for (const Category category : k_category_order) {
          const std::string key(to_string(category));
          const auto it = value.find(key);
          if (it != value.end() && !it->is_null()) {
            entry[category] = parse_result(reader, *it, pointer_append(pointer, key));
          }
        }
        entry.update_status();
        if (const auto it = value.find("status"); it != value.end()) {
          entry.status = read_status(reader, *it, pointer_append(pointer, "status"));
        }
        report.definitions.emplace(name, std::move(entry));
      }
    }
    if (const auto it = root.find("fib_dataset"); it != root.end() && !it->is_null()) {
      report.dataset = parse_result(reader, *it, "/fib_dataset");
    }
    if (const auto it = root.find("fib_shard"); it != root.end() && !it->is_null()) {
      report.shard = parse_shard_record(reader, *it);
    }
  }
  for (const Diagnostic& d : sink.items()) {
    if (d.severity == Severity::error) {
      Diagnostic error = d;
      error.code = codes::k_report_invalid;
      return unexpected(std::move(error));
    }
  }
  return report;
}

namespace {

// One report file waiting for its name.
struct PendingReportFile {
  PendingFile file;
  std::filesystem::path ReportFiles::*name;
};

bool any_name_exists(const std::vector<PendingReportFile>& pending, const ReportFiles& files) {
  return std::any_of(pending.begin(), pending.end(), [&](const PendingReportFile& p) {
    std::error_code ec;
    return std::filesystem::symlink_status(files.*p.name, ec).type() !=
           std::filesystem::file_type::not_found;
  });
}

// Links every pending file under its name in `files`: all of them, or none (what was linked is
// taken back when a later name is taken or fails).
Expected<PendingFile::LinkOutcome> link_all(std::vector<PendingReportFile>& pending,
                                            const ReportFiles& files) {
  std::size_t linked = 0;
  Expected<PendingFile::LinkOutcome> outcome = PendingFile::LinkOutcome::linked;
  for (; linked < pending.size(); ++linked) {
    outcome = pending[linked].file.link_as(files.*pending[linked].name);
    if (!outcome || *outcome == PendingFile::LinkOutcome::name_taken) {
      break;
    }
  }
  if (linked < pending.size()) {
    for (std::size_t i = 0; i < linked; ++i) {
      pending[i].file.unlink_linked(files.*pending[i].name);
    }
  }
  return outcome;
}

} // namespace

Expected<ReportFiles> write_report_files(const DatasetReport& report,
                                         const std::filesystem::path& folder,
                                         std::string_view timestamp, const ReportTargets& targets) {
  const ReportFiles first = report_files(folder, timestamp);
  // A validation killed while writing its report left its temporary in the reports directory.
  StaleTemporarySweeper sweeper;
  std::vector<PendingReportFile> pending;
  if (targets.json_file) {
    sweeper.remove_stale_beside(first.json);
    // Written as it is rendered: the file's write-back overlaps the rendering of the rest.
    auto json = PendingFile::create(first.json, Overwrite::forbidden);
    if (!json) {
      return unexpected(std::move(json.error()));
    }
    if (auto refused = stream_report_json(
            report, [&](std::string_view piece) { return json->append(piece); })) {
      return unexpected(std::move(*refused));
    }
    pending.push_back({std::move(*json), &ReportFiles::json});
  }
  if (targets.text_file) {
    sweeper.remove_stale_beside(first.text);
    auto text = PendingFile::create(first.text, Overwrite::forbidden);
    if (!text) {
      return unexpected(std::move(text.error()));
    }
    if (auto refused = text->append(render_report_text(report))) {
      return unexpected(std::move(*refused));
    }
    pending.push_back({std::move(*text), &ReportFiles::text});
  }
  if (pending.empty()) {
    return first;
  }
  for (unsigned sequence = 1; sequence <= k_report_name_attempts; ++sequence) {
    const ReportFiles files = report_files(folder, timestamp, sequence);
    if (any_name_exists(pending, files)) {
      continue;
    }
    FIB_TRY_ASSIGN(const auto outcome, link_all(pending, files));
    if (outcome == PendingFile::LinkOutcome::name_taken) {
      continue; // another run took the name meanwhile
    }
    for (PendingReportFile& p : pending) {
      if (auto failed = p.file.commit_linked()) {
        return unexpected(std::move(*failed));
      }
    }
    return files;
  }
  Diagnostic d =
      make_diagnostic(codes::k_report_exists,
                      fmt::format("no free report name: {} and the next {} names after it exist",
                                  first.json.string(), k_report_name_attempts - 1));
  d.hint = "remove old reports or choose another --output-folder";
  d.file = first.json;
  return unexpected(std::move(d));
}

} // namespace fib
