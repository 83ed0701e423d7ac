#pragma once
// `fib report merge`: merges dataset trees into one output dataset (docs/report.md).
//
// The old tool's `report merge` fails with an AttributeError before it merges anything (and its
// export layout was not the validator's); this one copies files as they are, by their path below
// the dataset root, and never rewrites a document:
//   * the trees merged are `definitions/`, `solutions/`, `workloads/`, `traces/` and `blob/`;
//     anything else at an input's root (reports, READMEs) is left out;
//   * a file only one input has is copied; byte-identical copies collapse into one;
//   * a `*.jsonl` file several inputs have is merged line by line: the lines already in the output
//     file, then the first input's lines, then the lines of the next input that are new, and so on.
//     Exact-duplicate lines are dropped (a trailing `\r` and blank lines do not count), the result
//     ends every line with `\n`;
//   * any other file (definitions, solutions, blobs) that differs from the copy already chosen is a
//     conflict (`merge.conflict`): the first copy wins (the one already in the output, else the one
//     of the earliest input) and the differing one is not written.
// The output may exist; its files count as the earliest input, so running the same merge twice
// changes nothing. Symbolic links and special files inside the inputs are neither followed nor
// copied (`merge.not-copied`); every write goes through write_file_atomically_below, so nothing is
// written outside the output, not even through a link placed inside it.

#include <fib/base/diagnostic.hpp>
#include <fib/base/enum_names.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/dataset_layout.hpp>
#include <fib/util/atomic_file.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// The dataset trees a merge copies, in this order (scan_tree with ScanMode::copy).
inline constexpr std::array k_merge_trees = {DatasetTree::definitions, DatasetTree::solutions,
                                             DatasetTree::workloads, DatasetTree::traces,
                                             DatasetTree::blob};

struct MergeOptions {
  // Created (with parents) when missing. It must not be an input, inside one or contain one.
  std::filesystem::path output;
  std::vector<std::filesystem::path> inputs; // dataset roots, earliest first
  std::uintmax_t max_file_bytes = k_default_max_file_bytes;
};

enum class MergeAction {
  added,     // new in the output
  merged,    // a JSON Lines file that now holds lines of several files
  unchanged, // the output already had this content
  conflict,  // some input's copy differs; the first copy is kept (and written if it was new)
  failed,    // reading or writing failed
};

template <> struct EnumNames<MergeAction> {
  static constexpr std::array k_table = std::to_array<EnumName<MergeAction>>({
      {MergeAction::added, "added"},
      {MergeAction::merged, "merged"},
      {MergeAction::unchanged, "unchanged"},
      {MergeAction::conflict, "conflict"},
      {MergeAction::failed, "failed"},
  });
};

// "added", "merged", "unchanged", "conflict", "failed".
inline std::string_view to_string(MergeAction action) {
  return enum_name(action);
}

// One path of the output.
struct MergeEntry {
  std::filesystem::path path; // relative to the output root
  MergeAction action = MergeAction::unchanged;
  // The inputs that have the path, in input order (the output itself is not listed).
  std::vector<std::filesystem::path> sources;
  bool written = false;            // whether the file was written in this run
  std::size_t lines_added = 0;     // JSON Lines: lines new to the output
  std::size_t duplicate_lines = 0; // JSON Lines: lines dropped as exact duplicates
};

struct MergeSummary {
  std::size_t added = 0;
  std::size_t merged = 0;
  std::size_t unchanged = 0;
  std::size_t conflicts = 0;
  std::size_t failed = 0;
  std::size_t identical_copies = 0; // copies dropped because an identical one was kept
  std::size_t duplicate_lines = 0;
  std::size_t not_copied = 0; // symbolic links and special files left out
};

struct MergeResult {
  std::vector<MergeEntry> entries; // sorted by path
  MergeSummary summary;
};

// Merges `options.inputs` into `options.output` by the rules above. Reports to `sink`:
// `merge.output-is-input` (usage; nothing is done) when the output is, is inside or contains an
// input; `io.not-found` / `io.read` for a missing or unreadable input (nothing is done);
// `merge.conflict` per differing copy (file = that input's copy); `merge.not-copied` (warning)
// per link or special file left out; `io.*` for a file that cannot be read or written (its entry
// is `failed`, the others go on). Temporaries of atomic writes in an input are no files of it;
// before writing into a directory of the output the stale ones there are removed
// (StaleTemporarySweeper, fib/util/atomic_file.hpp). Never throws.
MergeResult merge_datasets(const MergeOptions& options, DiagnosticSink& sink);

} // namespace fib
