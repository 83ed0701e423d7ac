#pragma once
// `fib stage`: puts definitions where they belong, `DATASET/definitions/<op_type>/<name>.json`,
// without clobbering what is there (docs/stage.md).
//
// Staging is content-aware. A definition whose staged copy has the same content (parsed JSON
// equal; formatting and the order of object keys ignored, except the order of `inputs` and
// `outputs`, which is the kernel's argument order) is unchanged. A staged copy that differs is a
// conflict, described field by field; the same name staged under another op_type is a conflict
// too (the validator rejects duplicate stems). Inputs that share a name are grouped first (rule
// N20): identical ones collapse, ones that differ only in their Python text (`reference`, `init`,
// `check`) stage the first with a warning, others are a conflict.
//
// Everything is planned before anything is written. `name` and `op_type` must be single safe path
// segments; every write goes through DirectoryHandle (no symbolic link is followed below the
// dataset root) and is atomic.

#include <fib/base/diagnostic.hpp>
#include <fib/base/enum_names.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/definition_diff.hpp>
#include <fib/normalize/normalize.hpp>
#include <fib/util/atomic_file.hpp>
#include <fib/util/path_safety.hpp>

#include <array>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fib {

// --- Interface ---

enum class OnConflict { fail, skip, overwrite };

template <> struct EnumNames<OnConflict> {
  static constexpr std::array k_table = std::to_array<EnumName<OnConflict>>({
      {OnConflict::fail, "fail"},
      {OnConflict::skip, "skip"},
      {OnConflict::overwrite, "overwrite"},
  });
};

// "fail", "skip", "overwrite" (the values of --on-conflict).
inline std::string_view to_string(OnConflict mode) {
  return enum_name(mode);
}

enum class StageNormalize { no, yes };

// Whether --on-conflict overwrite may replace a staged definition that workloads, solutions or
// traces of the dataset would no longer fit (`--force`).
enum class OverwriteBreaking { refuse, force };

// Whether an overwrite keeps the curated fields the staged copy has and the incoming one lacks
// (descriptions of the definition, its axes, inputs and outputs; tags), or drops them
// (`--drop-curated`).
enum class CuratedFields { keep, drop };

struct StageOptions {
  // Definition files, or directories searched recursively for *.json (sorted; symbolic links to
  // directories not followed).
  std::vector<std::filesystem::path> sources;
  std::filesystem::path dataset; // the dataset root; must exist
  OnConflict on_conflict = OnConflict::fail;
  StageNormalize normalize = StageNormalize::no;
  NormalizeOptions normalize_options; // used with StageNormalize::yes
  DryRun dry_run = DryRun::no;
  std::uintmax_t max_file_bytes = k_default_max_file_bytes;
  // Globs (--exclude): a source that matches one is not read; its entry is StageAction::excluded
  // (detail::matches_any_glob in src/util/file_walk.hpp says how they match; a file named on the
  // command line is matched by its name and its path as given).
  std::vector<std::string> exclude;
  OverwriteBreaking overwrite_breaking = OverwriteBreaking::refuse;
  CuratedFields curated = CuratedFields::keep;
};

enum class StageAction {
  added,       // new in the dataset
  unchanged,   // the staged copy has the same content
  overwritten, // a conflict replaced under OnConflict::overwrite
  conflict,    // differs and was not written (fail, or a conflict overwrite cannot settle)
  skipped,     // a conflict left alone under OnConflict::skip
  duplicate,   // another input of the same name stands for it
  rejected,    // unreadable, not a definition, or an unsafe name
  failed,      // was to be added or overwritten, but the write failed (the reason is among its
               // diagnostics, an error of the environment exit class); nothing of it was written
  excluded,    // matched an --exclude glob; not read
};

template <> struct EnumNames<StageAction> {
  static constexpr std::array k_table = std::to_array<EnumName<StageAction>>({
      {StageAction::added, "added"},
      {StageAction::unchanged, "unchanged"},
      {StageAction::overwritten, "overwritten"},
      {StageAction::conflict, "conflict"},
      {StageAction::skipped, "skipped"},
      {StageAction::duplicate, "duplicate"},
      {StageAction::rejected, "rejected"},
      {StageAction::failed, "failed"},
      {StageAction::excluded, "excluded"},
  });
};

// "added", "unchanged", "overwritten", "conflict", "skipped", "duplicate", "rejected", "failed",
// "excluded".
inline std::string_view to_string(StageAction action) {
  return enum_name(action);
}

struct StageEntry {
  std::filesystem::path source;
  std::string name;    // "" when rejected before it was known
  std::string op_type; // "" when rejected before it was known
  // `definitions/<op_type>/<name>.json`, relative to the dataset root ("" when rejected).
  std::filesystem::path target;
  StageAction action = StageAction::rejected;
  bool written = false;                     // whether the file was written in this run
  std::vector<Diagnostic> diagnostics;      // why it conflicts or was rejected, open questions
  std::vector<FieldDifference> differences; // for conflicts: staged (or first input) vs this one
  std::string staged_text;                  // canonical text of the staged copy, for diffs
  std::string incoming_text;                // canonical text of what would be written
  std::size_t rules_applied = 0;            // normalize findings that changed the document
  // Overwrites: the curated fields kept from the staged copy ("/description",
  // "/inputs/q/description", "tag model:x"), in document order.
  std::vector<std::string> kept;
};

struct StageSummary {
  std::size_t added = 0;
  std::size_t unchanged = 0;
  std::size_t overwritten = 0;
  std::size_t conflicts = 0; // StageAction::conflict: not settled
  std::size_t skipped = 0;   // conflicts left alone under OnConflict::skip
  std::size_t duplicates = 0;
  std::size_t rejected = 0;
  std::size_t failed = 0; // writes that failed
  std::size_t excluded = 0;
  // OnConflict::fail met a conflict: nothing was written.
  bool blocked_by_conflicts = false;
  DryRun dry_run = DryRun::no;
};

// Every diagnostic of a run is in the result: `diagnostics` and each entry's. An I/O or
// environment problem (unreadable dataset, failed write, unsafe path, no Python) is an error of
// the environment exit class among them: count them with count_stage_diagnostics.
struct StageResult {
  std::vector<StageEntry> entries; // one per input file, in input order
  StageSummary summary;
  std::vector<Diagnostic> diagnostics; // problems not tied to one input (the dataset root)
};

// Plans and (unless DryRun::yes) performs the staging. `python` is used only with
// StageNormalize::yes (NoPython will do otherwise). Before writing into a directory of the dataset
// it removes the stale temporaries a killed run left there (StaleTemporarySweeper,
// fib/util/atomic_file.hpp). Never throws.
StageResult stage_definitions(const StageOptions& options, PythonFrontend& python);

// What the line of `entry` says happened: its action, except for an add or overwrite that was
// planned but not carried out: "would add" / "would overwrite" in a dry run, "not written" when a
// conflict under OnConflict::fail aborted the plan.
std::string_view stage_line_label(const StageEntry& entry, const StageSummary& summary);

// The summary counts, by the labels stage_line_label gives (so they agree with the lines): always
// "added", "unchanged", "overwritten", "conflict", "rejected", "duplicate"; then "skipped",
// "excluded", "failed", "would add", "would overwrite" and "not written" when not zero.
std::vector<std::pair<std::string_view, std::size_t>>
stage_summary_counts(const StageResult& result);

// The counts of every diagnostic of `result`: its own, then each entry's.
DiagnosticCounts count_stage_diagnostics(const StageResult& result);

// Whether some input is left in conflict (StageAction::conflict): a run that did not settle.
bool has_unresolved_conflicts(const StageResult& result);

// The `--manifest` document: the dataset root (absolute) and one entry per written file
// (`path` relative to the root, `name`, `op_type`, `action` added|overwritten, `source`), the
// input of `fib tag --manifest`:
//   {"fib_stage_manifest": 1, "dataset": "/abs/root", "entries": [{"path": ..., ...}]}
Json stage_manifest(const StageResult& result, const std::filesystem::path& dataset);

} // namespace fib
