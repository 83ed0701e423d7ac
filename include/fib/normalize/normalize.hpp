#pragma once
// `fib normalize`: repairs the definitions FlashInfer's trace dumper writes so that they validate
// and run (the rules N0–N22 and A3b-1, A3b-2, A3b-3 of the table in docs/normalize.md).
//
// Every rule has a level: mechanical rules (M) are applied and listed; heuristic rules (W) are
// applied with a warning and can be switched off one by one; human rules (H) never guess: they
// report the file, the JSON pointer and the decision to make, which a decisions file answers on the
// next run. Normalizing is idempotent: normalizing a normalized document changes nothing.

#include <fib/base/diagnostic.hpp>
#include <fib/base/enum_names.hpp>
#include <fib/base/expected.hpp>
#include <fib/collect/level10.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/python_checks.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

enum class RuleLevel { mechanical, heuristic, human };

template <> struct EnumNames<RuleLevel> {
  static constexpr std::array k_table = std::to_array<EnumName<RuleLevel>>({
      {RuleLevel::mechanical, "M"},
      {RuleLevel::heuristic, "W"},
      {RuleLevel::human, "H"},
  });
};

// "M", "W" or "H".
inline std::string_view to_string(RuleLevel level) {
  return enum_name(level);
}

// The engine's state while it normalizes one definition (defined privately in src/normalize).
struct NormalizeContext;

// What carries out a rule whose row has no `apply` of its own.
inline constexpr std::string_view k_applied_when_written = "normalize_files"; // N0
inline constexpr std::string_view k_applied_by_stage = "fib stage";           // N20

struct NormalizeRule {
  std::string_view id;   // "N0" … "N21", "A3b-1", "A3b-2", "A3b-3"
  RuleLevel level;       // the level of its usual finding (a W rule may also ask a human)
  std::string_view code; // the diagnostic code of its findings, e.g. "normalize.n5"
  std::string_view title;
  std::string_view text; // what it does, for docs/normalize.md and --list-rules
  // What normalize_definition calls for this rule: after the decisions file's answers, the engine
  // calls the `apply` of every row, in table order. nullptr when `applied_by` names who does it.
  void (*apply)(NormalizeContext&) = nullptr;
  // "" when `apply` carries the rule out. Otherwise the id of an earlier rule whose apply also
  // does this rule's part (one pass over the tensors decides between them, so their findings come
  // in tensor order, not one rule after the other), k_applied_when_written (normalize_files
  // reports the re-encoding) or k_applied_by_stage.
  std::string_view applied_by = {};
};

// Every rule, in the order they are applied.
std::span<const NormalizeRule> all_normalize_rules();

// The rule whose `apply` produces the findings of `rule`: `rule` itself, or the rule it names in
// `applied_by`; nullptr when no apply of the engine does (N0, N20).
const NormalizeRule* applying_rule(const NormalizeRule& rule);

// The rule with `id`, case-insensitive; "A3b-1′" and "A3b-1'" name A3b-1. nullptr when unknown.
const NormalizeRule* find_normalize_rule(std::string_view id);

// The rule whose findings carry `code`; nullptr for other codes.
const NormalizeRule* rule_of_code(std::string_view code);

// The rules table of docs/normalize.md (Markdown), rendered from all_normalize_rules().
std::string render_normalize_rules_markdown();

// A human's answers for one definition (by its `name` before any rename), or for one source file.
struct DefinitionDecisions {
  std::optional<std::string> name;                   // new `name` (N19)
  std::map<std::string, std::string> input_dtypes;   // input → dtype (N7, N11, …)
  std::map<std::string, std::string> output_dtypes;  // output → dtype (N21)
  std::set<std::string> drop_inputs;                 // inputs to remove (N6, N9, N11)
  std::set<std::string> drop_outputs;                // outputs to remove (A3b-3)
  std::map<std::string, std::string> rename_outputs; // output → new name (A3b-3)
  std::map<std::string, std::int64_t> axis_values;   // const axis → value (N13, N14)
  std::map<std::string, std::string> run_arguments;  // entry parameter → Python expression (N2)
  // Where the entry is in the decisions file: "/definitions/<name>" or "/files/<path>" (RFC 6901
  // escaped), and its line (0 when unknown).
  std::string pointer;
  int line = 0;
};

struct NormalizeDecisions {
  std::filesystem::path file; // the decisions file ("" when built in code)
  // By definition name.
  std::map<std::string, DefinitionDecisions> definitions;
  // By source file, resolved with resolved_source_path: an entry here is used instead of the
  // `definitions` entry of the file's name (the two are not merged).
  std::map<std::filesystem::path, DefinitionDecisions> files;
};

// `path` made absolute (against the current directory) and canonical as far as it exists: how a
// `files` key of the decisions file and a source file are compared.
std::filesystem::path resolved_source_path(const std::filesystem::path& path);

// Reads a decisions file:
//   {"definitions": {"<name>": {"name": "...", "input_dtypes": {"x": "int32"},
//     "output_dtypes": {...}, "drop_inputs": ["..."], "drop_outputs": ["..."],
//     "rename_outputs": {"old": "new"}, "axis_values": {"page_size": 16},
//     "run_arguments": {"paged_kv_cache": "(k_cache, v_cache)"}}},
//    "files": {"<path of one source file>": {same keys}}}
// Both sections are optional. A `files` key is a path, relative to the current directory or
// absolute, matched on the resolved path; it answers for that one file even when another file has
// the same definition name. Unknown keys and wrong types are errors
// (`normalize.decisions-invalid`, with their pointer), so a typo never silently leaves a question
// open.
Expected<NormalizeDecisions> parse_normalize_decisions(const JsonDocument& document,
                                                       DiagnosticSink& sink);

// The entry that answers for the definition `name` read from `source`: the `files` entry of the
// source, else the `definitions` entry of the name, else one whose `name` decision gave it that
// name on an earlier run; nullptr when none does.
const DefinitionDecisions* find_definition_decisions(const NormalizeDecisions& decisions,
                                                     const std::filesystem::path& source,
                                                     std::string_view name);

// A `normalize.decision-unused` warning (file = the decisions file, its pointer and line) for
// every entry whose pointer is not in `used` (the NormalizedDefinition::decisions_entry of every
// input of the run): a misspelt name or path must not pass unnoticed.
std::vector<Diagnostic> unused_decisions(const NormalizeDecisions& decisions,
                                         const std::set<std::string>& used);

enum class StripExtras { no, yes };

struct NormalizeOptions {
  // Ids of W rules not to apply, as the rules table spells them ("N5", "A3b-3"): what they would
  // change is left as it is and reported.
  std::set<std::string> disabled_rules;
  StripExtras strip_extras = StripExtras::no;
  const NormalizeDecisions* decisions = nullptr; // may be null
  // Where rule N22 looks up the helpers a reference calls but never defines: the directory holding
  // the `flashinfer` package directory (--flashinfer-src, FIB_FLASHINFER_SRC); empty: the
  // installed flashinfer package, found on the interpreter's import path without importing it.
  std::filesystem::path flashinfer_source;
  // A Level-10 dump of the same serving pass (--evidence): rules R1-R3 repair what its calls
  // prove. Null: those rules do nothing.
  const Level10Dump* evidence = nullptr;
};

// What a finding says: a rule changed the document (`applied`: M rules as notes, W rules as
// warnings, answers from the decisions file as notes); a rule points something out and changes
// nothing (`advice`, a warning or note); or a human must decide (`question`, a warning: the hint
// names the decisions-file key that answers it, when one does).
enum class FindingKind { applied, advice, question };

template <> struct EnumNames<FindingKind> {
  static constexpr std::array k_table = std::to_array<EnumName<FindingKind>>({
      {FindingKind::applied, "applied"},
      {FindingKind::advice, "advice"},
      {FindingKind::question, "question"},
  });
};

// "applied", "advice", "question".
inline std::string_view to_string(FindingKind kind) {
  return enum_name(kind);
}

struct RuleFinding {
  Diagnostic diagnostic; // code `normalize.<rule>` (or `normalize.decision`), pointer, message
  FindingKind kind = FindingKind::applied;
};

struct NormalizedDefinition {
  Json document; // the normalized definition
  // One per rule application or open question: the decisions file's first, then each rule's in
  // the order of the rules table (rules applied by one pass interleave in tensor order).
  std::vector<RuleFinding> findings;
  bool changed = false; // whether `document` differs from the input (as JSON values)
  // The pointer of the decisions-file entry applied (DefinitionDecisions::pointer); "" for none.
  std::string decisions_entry;
};

// Normalizes one definition document. `python` analyses the reference; when it is unavailable the
// reference rules are skipped and the environment diagnostic is returned as the error (the caller
// decides whether to go on). Findings carry `file` and pointers but no lines.
Expected<NormalizedDefinition> normalize_definition(const JsonDocument& input,
                                                    const NormalizeOptions& options,
                                                    PythonFrontend& python);

// --- Files ---

enum class NormalizeWrite { nothing, in_place, output_dir };

struct NormalizeFilesOptions {
  // Files, or directories searched recursively for *.json (sorted; symbolic links to directories
  // are not followed; `reports/` report files are skipped).
  std::vector<std::filesystem::path> paths;
  NormalizeOptions rules;
  NormalizeWrite write = NormalizeWrite::nothing;
  // For NormalizeWrite::output_dir: a file named on the command line lands at DIR/<its name>, a
  // file found below a directory at DIR/<its path relative to that directory>.
  std::filesystem::path output_dir;
  std::uintmax_t max_file_bytes = k_default_max_file_bytes;
  // Globs (--exclude): a file found below a directory that matches one is not read
  // (detail::matches_any_glob in src/util/file_walk.hpp says how they match).
  std::vector<std::string> exclude;
};

enum class NormalizeVerdict { valid, invalid, skipped };

template <> struct EnumNames<NormalizeVerdict> {
  static constexpr std::array k_table = std::to_array<EnumName<NormalizeVerdict>>({
      {NormalizeVerdict::valid, "valid"},
      {NormalizeVerdict::invalid, "invalid"},
      {NormalizeVerdict::skipped, "skipped"},
  });
};

// "valid", "invalid", "skipped".
inline std::string_view to_string(NormalizeVerdict verdict) {
  return enum_name(verdict);
}

struct NormalizedFile {
  std::filesystem::path input;
  std::optional<std::filesystem::path> written; // where the normalized text went, if written
  NormalizeVerdict verdict = NormalizeVerdict::skipped;
  bool changed = false;
  std::string original_text;   // as read ("" when unreadable)
  std::string normalized_text; // canonical text ("" when skipped)
  // Rule findings, plus why a file was skipped or not written (errors: an I/O or environment
  // problem has a code of the environment exit class, which the caller counts with
  // count_diagnostics).
  std::vector<RuleFinding> findings;
  std::vector<Diagnostic> validation; // what the core validator reports on the normalized text
  std::string decisions_entry;        // the decisions-file entry applied ("" for none)
};

// Every diagnostic of `file`: its findings' and its validation's, in that order (what a caller
// counts to choose the exit status).
std::vector<Diagnostic> all_diagnostics(const NormalizedFile& file);

struct NormalizeSummary {
  std::size_t files = 0;
  std::size_t changed = 0;
  std::size_t valid = 0;
  std::size_t invalid = 0;
  std::size_t skipped = 0;
  std::size_t decisions_needed = 0; // files with at least one open question (a warning)
  // Problems of the run, not of one file: the unused entries of the decisions file.
  std::vector<Diagnostic> diagnostics;
};

// Normalizes every file named by `options`, writes results as asked (atomically; never deletes or
// renames an input), validates each result with the core validator, and hands each file to
// `on_file` as soon as it is done. Malformed or unreadable inputs are reported and skipped; the run
// goes on. A write first removes the stale temporaries a killed run left in the target's directory
// (StaleTemporarySweeper, fib/util/atomic_file.hpp); temporaries are never inputs. Never throws.
NormalizeSummary normalize_files(const NormalizeFilesOptions& options, PythonFrontend& python,
                                 const std::function<void(const NormalizedFile&)>& on_file);

// The `--report` document: per file the rules applied, warnings, open decisions, errors (why a
// file was skipped or not written) and the verdict.
Json normalize_report_entry(const NormalizedFile& file);
Json normalize_report(const std::vector<Json>& entries, const NormalizeSummary& summary);

} // namespace fib
