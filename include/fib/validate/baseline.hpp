#pragma once
// The baseline file: known findings a dataset repository accepts for now (JSON cannot carry
// inline suppressions). `fib validate --write-baseline F` records them; `--baseline F` reports
// them as a suppressed count, and the entries that no longer match as fixable.

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/validate/report.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// What identifies a finding across runs and machines.
struct BaselineKey {
  std::string code;
  // The finding's file relative to the baseline file's directory (path_relative_to, "../" parts
  // when outside it), with each byte of invalid UTF-8 and each '%' as %XX; "" for a finding about
  // no file (dataset mode's dataset-level section).
  std::string file;
  std::string pointer; // file mode's JSON pointer; "" in dataset mode (its messages have none)
  // The first 16 hex digits of the SHA-256 of the message, after the baseline directory's
  // absolute path (with its '/') is cut out of it, so a checkout elsewhere gives the same key.
  std::string fingerprint;

  friend auto operator<=>(const BaselineKey&, const BaselineKey&) = default;
};

struct BaselineEntry {
  BaselineKey key;
  std::size_t count = 1;                 // identical findings the entry stands for
  std::string message;                   // for the reader of the file; never compared
  Severity severity = Severity::warning; // as recorded; never compared
  std::size_t position = 0;              // its index in the file's "entries" as read (for pointers)
};

struct Baseline {
  std::filesystem::path file;         // where it was read from or goes
  std::vector<BaselineEntry> entries; // sorted by key, one per key
};

// The format's version, the value of the file's "fib_baseline" key.
inline constexpr int k_baseline_version = 1;

// A finding as the baseline sees it.
struct BaselineFinding {
  std::string_view code;
  std::filesystem::path file;
  std::string_view pointer;
  std::string_view message;
  Severity severity = Severity::warning;
};

// Whether a baseline records `finding`: an error or a warning of a finding code (notes never fail
// a run, and what fib could not do is never a known finding).
bool is_baseline_finding(const BaselineFinding& finding);

// The key of `finding` in a baseline kept in `baseline_file`.
BaselineKey baseline_key(const BaselineFinding& finding,
                         const std::filesystem::path& baseline_file);

// Reads a baseline. Errors: `io.not-found`/`io.read`/`io.too-large`, and `baseline.invalid` with
// the pointer of the bad value (a directory, text that is not JSON, a wrong version, a missing or
// mistyped field, a duplicate key).
Expected<Baseline> read_baseline(const std::filesystem::path& file);

// The file's text: {"fib_baseline": 1, "entries": [...]} with 2-space indent, entries sorted by
// key (code, file, pointer, fingerprint), one per line group, ending with "\n": stable, so that a
// rewrite with the same findings is byte for byte the same file and diffs review well.
std::string render_baseline(const Baseline& baseline);

// Which entries a run judged: a filtered, sharded or partial run must neither call the entries of
// what it did not check fixed nor drop them when it rewrites the baseline.
using BaselineScope = std::function<bool(const BaselineKey&)>;

// What a dataset run judged, for dataset_baseline_scope: every definition and every category
// (`whole`), every category of some definitions (`some_definitions`: --op-types, --definitions,
// --shard), or not every category (`some_categories`: --checks narrower than the default).
enum class DatasetCoverage { whole, some_definitions, some_categories };

// Dataset mode's scope: with `whole` every entry (an entry of a definition file that is gone is
// fixed too), with some_definitions the entries of the report's definition files, with
// some_categories none.
BaselineScope dataset_baseline_scope(const DatasetReport& report,
                                     const std::filesystem::path& baseline_file,
                                     DatasetCoverage coverage);

// File mode's scope: the entries of the files given and of the files below the directories given.
BaselineScope files_baseline_scope(const std::vector<std::filesystem::path>& paths,
                                   const std::filesystem::path& baseline_file);

// Baseline entries for `findings` (errors and warnings of finding codes only: notes never fail a
// run, and what fib could not do is never a known finding), counted by key; the entries of
// `previous` outside `scope` are kept as they were.
Baseline make_baseline(const std::vector<BaselineFinding>& findings,
                       const std::filesystem::path& file, const Baseline* previous,
                       const BaselineScope& scope);

// What matching a run against a baseline did.
struct BaselineMatch {
  std::size_t suppressed = 0;
  // Entries in scope with fewer findings than their count now (count is what is left over).
  std::vector<BaselineEntry> fixed;
};

// Matches a finding: true (and the entry's remaining count goes down) when the baseline still
// holds one like it. Errors and warnings of finding codes only.
class BaselineMatcher {
public:
  explicit BaselineMatcher(const Baseline& baseline);
  bool suppresses(const BaselineFinding& finding);
  // The entries left over that `scope` says the run judged.
  BaselineMatch finish(const BaselineScope& scope) const;

private:
  const Baseline& m_baseline;
  std::vector<std::size_t> m_left; // per entry
  BaselineMatch m_match;
};

// Applies `baseline` to file-mode diagnostics: the suppressed ones are removed; returns the match.
BaselineMatch apply_baseline(const Baseline& baseline, std::vector<Diagnostic>& found,
                             const BaselineScope& scope);

// Applies `baseline` to a dataset report (each definition's messages with its definition file,
// the dataset section's with none): suppressed messages are removed and the statuses recomputed.
// Adds to the dataset section one `baseline.suppressed` info with the count (when nonzero) and
// one `baseline.fixed` info per entry left over.
BaselineMatch apply_baseline(const Baseline& baseline, DatasetReport& report,
                             const BaselineScope& scope);

// The findings of a dataset report (each message with its definition file), for make_baseline.
std::vector<BaselineFinding> report_findings(const DatasetReport& report);

// A `baseline.fixed` note for a file-mode run: file = the baseline file, pointer = the entry's
// position there, the message naming the finding and how to drop it.
Diagnostic fixed_entry_note(const Baseline& baseline, const BaselineEntry& entry);

} // namespace fib
