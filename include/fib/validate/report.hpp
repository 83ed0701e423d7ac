#pragma once
// The dataset validation report: the old tool's report model (a status and leveled messages per
// category and definition), its JSON file and its text rendering, plus fib's dataset-level
// section for files the old tool ignores. Every message carries a code of the codes table.

#include <fib/base/enum_names.hpp>
#include <fib/base/expected.hpp>
#include <fib/io/json_io.hpp>
#include <fib/util/atomic_file.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

enum class CheckLevel { info, warning, error };
enum class CheckStatus { ok, warning, error };

template <> struct EnumNames<CheckLevel> {
  static constexpr std::array k_table = std::to_array<EnumName<CheckLevel>>({
      {CheckLevel::info, "info"},
      {CheckLevel::warning, "warning"},
      {CheckLevel::error, "error"},
  });
};

template <> struct EnumNames<CheckStatus> {
  static constexpr std::array k_table = std::to_array<EnumName<CheckStatus>>({
      {CheckStatus::ok, "ok"},
      {CheckStatus::warning, "warning"},
      {CheckStatus::error, "error"},
  });
};

// "info", "warning" or "error".
inline std::string_view to_string(CheckLevel level) {
  return enum_name(level);
}

// "ok", "warning" or "error".
inline std::string_view to_string(CheckStatus status) {
  return enum_name(status);
}

// The level a diagnostic of `severity` has in the report (a note is an info).
CheckLevel level_of(Severity severity);

// The severity of a report message of `level` (an info is a note): level_of's inverse.
Severity severity_of(CheckLevel level);

// Where in the dataset the problem a message reports is, when its check knows: what annotations
// and SARIF results point at. Not part of the report JSON (whose layout is the old tool's).
struct MessageLocation {
  std::string file;       // relative to the dataset root, '/'-separated; "" when unknown
  std::string pointer;    // RFC 6901, within the file (within the line for JSON Lines); "" = all
  std::uint32_t line = 0; // 1-based; 0 when unknown (then found from the pointer when rendering)
  bool operator==(const MessageLocation&) const = default;
};

struct CheckMessage {
  CheckLevel level = CheckLevel::info;
  // The old tool's text where the old tool has the check; fib's own messages start with "[fib] ".
  std::string message;
  // A code of the codes table, viewing the table's own static text (so a report of a million
  // messages stores no copies); "" for a message read from a report written without codes (the
  // old tool's, or fib's before codes were added) or with a code this fib does not know.
  std::string_view code;
  MessageLocation where;
};

// One category's result. `status` is the worst level of its messages (info never counts).
struct CheckResult {
  CheckStatus status = CheckStatus::ok;
  std::vector<CheckMessage> messages;

  // A message at the default severity of `code` (which must be in the codes table). Each add
  // returns the message added, for its location (`r.add(…).where = …`); the reference is valid
  // until the next add.
  CheckMessage& add(std::string_view code, std::string message);
  // A message at an explicit level (a diagnostic passed through with its own severity).
  CheckMessage& add(CheckLevel level, std::string_view code, std::string message);
  CheckMessage& add(CheckMessage message);
  // Inserts at the front, as the old tool does for its summary lines ("N valid", "k solutions").
  CheckMessage& add_front(std::string_view code, std::string message);
  // Recomputes `status` from the messages (after some were removed or re-levelled).
  void update_status();
};

// The seven categories, in the fixed order they run and print.
enum class Category { layout, definition, workload, solution, trace, baseline, benchmark };

template <> struct EnumNames<Category> {
  static constexpr std::array k_table = std::to_array<EnumName<Category>>({
      {Category::layout, "layout"},
      {Category::definition, "definition"},
      {Category::workload, "workload"},
      {Category::solution, "solution"},
      {Category::trace, "trace"},
      {Category::baseline, "baseline"},
      {Category::benchmark, "benchmark"},
  });
};

inline constexpr std::array k_category_order = {
    Category::layout, Category::definition, Category::workload, Category::solution,
    Category::trace,  Category::baseline,   Category::benchmark};

// The category's name as the report and --checks spell it.
inline std::string_view to_string(Category category) {
  return enum_name(category);
}

// Exact lookup of a category name; nullopt for anything else.
inline std::optional<Category> parse_category(std::string_view name) {
  return parse_enum<Category>(name);
}

struct DefinitionReport {
  CheckStatus status = CheckStatus::ok;
  // Indexed by Category; nullopt for a category that did not run.
  std::array<std::optional<CheckResult>, 7> categories;

  std::optional<CheckResult>& operator[](Category c) { return categories[static_cast<int>(c)]; }
  const std::optional<CheckResult>& operator[](Category c) const {
    return categories[static_cast<int>(c)];
  }
  // Recomputes `status`: the worst status of the categories that ran.
  void update_status();
};

struct ReportConfig {
  std::string dataset;
  std::vector<std::string> checks;
  bool disable_gpu = false;
  std::vector<std::string> op_types;
  std::vector<std::string> definitions;
};

// What a `--shard K/N` run records in its report (JSON "fib_shard", after "fib_dataset"), so that
// validate-merge can tell a complete set of shards of one run from a partial or mixed one.
struct ShardRecord {
  std::size_t index = 1; // K
  std::size_t count = 1; // N
  // The whole dataset the shards split (before filters and sharding): how many definitions, and
  // the first 16 hex digits of the SHA-256 of their sorted names, one per line. The same tree gives
  // the same values wherever it is checked out.
  std::size_t dataset_definitions = 0;
  std::string dataset_fingerprint;
  std::string fib_version; // FIB_VERSION of the fib that wrote it
};

struct DatasetReport {
  ReportConfig config;
  std::map<std::string, DefinitionReport> definitions; // sorted by name
  // Definition name → its definition file as scanned (for annotations); not serialized.
  std::map<std::string, std::filesystem::path> definition_files;
  // fib's dataset-level findings (orphans, misplaced, unreadable files). When there are any, they
  // are written to JSON under "fib_dataset" and printed after the definitions; the old tool has no
  // such section.
  std::optional<CheckResult> dataset;
  // Set by a --shard run; never by a whole run or a merge.
  std::optional<ShardRecord> shard;
};

// Counts of definitions per status.
struct StatusCounts {
  std::size_t ok = 0;
  std::size_t warning = 0;
  std::size_t error = 0;
};
StatusCounts count_statuses(const DatasetReport& report);

// The counts of the report's messages as findings: errors, warnings and notes (infos) of every
// definition and of the dataset section. Findings only: a message's code never makes it an
// environment or usage error, since what fib could not do is reported apart (to the
// environment sink of validate_dataset).
DiagnosticCounts count_findings(const DatasetReport& report);

// The JSON file as the old tool writes it (2-space indent, declaration order, explicit nulls for
// categories that did not run, raw non-ASCII, no trailing newline), with one addition: each
// message has a "code" key after "message" (left out when the code is ""), and the "fib_dataset"
// and "fib_shard" members at the end when there is such a section or record.
std::string render_report_json(const DatasetReport& report);

// The old tool's text report, ending with exactly one "\n". Codes are not shown.
std::string render_report_text(const DatasetReport& report);

// Reads a report JSON (validate-render, validate-merge), with or without "code" keys. Statuses and
// levels must be valid names; unknown keys are ignored. Errors: `report.invalid` with the
// pointer of the bad value.
Expected<DatasetReport> parse_report_json(std::string_view text, const std::filesystem::path& file);

// Where a dataset report goes (`--outputs stdout,json,text`).
struct ReportTargets {
  bool stdout_text = true;
  bool json_file = true;
  bool text_file = true;
};

// Parses the comma-separated `--outputs` value; empty means all three. Error (`cli.usage`):
// "unknown output target '{t}', valid: stdout, json, text".
Expected<ReportTargets> parse_report_targets(std::string_view csv);

struct ReportFiles {
  std::filesystem::path json;
  std::filesystem::path text;
};

// The report files of a run: `folder`/report-{timestamp}.json and .txt for `sequence` 1 (the old
// tool's names; `timestamp` is local time as %Y%m%d-%H%M%S), report-{timestamp}-{sequence}.json and
// .txt after it.
ReportFiles report_files(const std::filesystem::path& folder, std::string_view timestamp,
                         unsigned sequence = 1);

// How many names of report_files' sequence write_report_files tries before `report.exists`.
inline constexpr unsigned k_report_name_attempts = 1000;

// Writes the enabled files atomically under the first name of report_files' sequence whose files
// (of the enabled targets) are all free, so runs in the same second, concurrent ones included,
// each get a pair of their own and never replace a file. The JSON is rendered straight into its
// temporary file; a name is taken only when every enabled file links under it (linkat(2) fails on
// an existing name, so the check and the write are one step). Stale temporaries a killed run left
// are removed first (StaleTemporarySweeper, fib/util/atomic_file.hpp). Returns the files written.
// Errors: `io.write`; `report.exists` when k_report_name_attempts names are all taken.
Expected<ReportFiles> write_report_files(const DatasetReport& report,
                                         const std::filesystem::path& folder,
                                         std::string_view timestamp, const ReportTargets& targets);

} // namespace fib
