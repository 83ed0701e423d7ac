#pragma once
// Recognising a tree written in the Aug 2025 schema of FlashInfer-Trace, which fib (like today's
// flashinfer-bench) does not read: definitions with `type` where `op_type` is expected, solutions
// whose `spec.language` is capitalised ("Python"), and workloads kept as trace records in
// `traces/workloads/<op_type>/<name>.workload.jsonl` (lines `{"definition": …, "solution": "",
// "workload": {…}, "evaluation": {}}`) instead of `workloads/<op_type>/<name>.jsonl`. Without
// this, such a tree validates as a handful of parse errors, or as "0 definitions".

#include <fib/validate/report.hpp>

#include <cstddef>
#include <fib/util/result_cache.hpp>

#include <filesystem>
#include <optional>
#include <vector>

namespace fib {

// --- Interface ---

// What marks the files below a root as the old schema.
struct OldSchemaSigns {
  std::size_t definitions_with_type = 0; // under definitions/: `type` (a string), no `op_type`
  std::size_t capitalised_languages = 0; // under solutions/: spec.language not in lower case
  std::size_t old_workload_files = 0;    // *.workload.jsonl under traces/workloads/
  std::size_t solution_string_lines = 0; // lines there whose `solution` is ""
  // The first files (at most 3, in path order) that show a sign, for the message.
  std::vector<std::filesystem::path> examples;
  // Where old definitions live when not in `root`/definitions/: the directories holding their
  // definitions/ folder (legacy-2025-08/dataset for a root of legacy-2025-08).
  std::vector<std::filesystem::path> nested_roots;

  bool any() const {
    return definitions_with_type + capitalised_languages + old_workload_files +
               solution_string_lines >
           0;
  }
};

// Looks for the signs below `root`, at any depth (symbolic links to directories are not
// followed; fib's own reports/ are skipped). Only .json files below a `definitions` or
// `solutions` directory (at most 4 MiB each) and .jsonl files below `traces/workloads/` (at most
// 64 MiB each) are read; unreadable or unparsable files are left to the other checks.
// With a result cache, what a definition or solution file shows is kept under the digest of its
// bytes (found through the digest memo without reading an unchanged file), and reused.
OldSchemaSigns find_old_schema_signs(const std::filesystem::path& root,
                                     ResultCache* cache = nullptr);

// Whether validation read any definition of the tree: it decides the message's level.
enum class DefinitionsLoaded { none, some };

// The one `dataset.old-schema` message (text starting "[fib] ") for the tree, or nullopt when
// `signs` has none: the counts, up to three example files, and what to rename or move for each
// sign found. An error when no definition of the tree loaded (nothing was validated: the exit
// status must not say "clean"), else a warning (the files that did load were checked).
std::optional<CheckMessage> old_schema_message(const OldSchemaSigns& signs,
                                               const std::filesystem::path& root,
                                               DefinitionsLoaded loaded);

} // namespace fib
