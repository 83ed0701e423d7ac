#pragma once
// Which definition files `fib tag` works on: explicit files, every definition of a dataset, or the
// files a `fib stage --manifest` run staged, narrowed by op_type, name glob and modification time.

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/io/json_io.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// A point in time, in nanoseconds since the Unix epoch (UTC).
using TagTime = std::chrono::sys_time<std::chrono::nanoseconds>;

// Parses a --since value: epoch seconds (`1764511500`, `1764511500.25`), or ISO-8601
// `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS` with an optional fraction (`.5`, at most nanoseconds kept)
// and an optional `Z` or `±hh:mm` offset after the time. A date alone is midnight UTC; a time
// without offset is UTC. Error: `cli.usage` naming the value.
Expected<TagTime> parse_tag_time(std::string_view text);

// The stage manifest as `fib tag --manifest` reads it (written by `fib stage --manifest`):
//   {"fib_stage_manifest": 1, "dataset": "<absolute root>", "entries": [{"path":
//    "definitions/<op_type>/<name>.json", "name": …, "op_type": …, "action": "added" |
//    "overwritten", "source": …}]}
// Unknown keys are ignored.
struct TagManifestEntry {
  std::string path; // relative to the dataset root, checked safe
  std::string name;
  std::string op_type;
  std::string action;
  std::string source;
};

struct TagManifest {
  std::filesystem::path dataset;
  std::vector<TagManifestEntry> entries;
};

// Every problem goes to `sink` as `tag.manifest-invalid` with file and pointer (the version, a
// missing or mistyped key, a relative `dataset`, an unknown action, an entry path that is absolute,
// contains `..` or is not `definitions/<a>/<b>.json`); the result is an error when there was any
// (the first problem).
Expected<TagManifest> parse_tag_manifest(const JsonDocument& document, DiagnosticSink& sink);

struct TagSelectionOptions {
  std::vector<std::filesystem::path> files; // explicit files; exclusive with dataset/manifest
  std::filesystem::path dataset;            // "" when not given
  std::filesystem::path manifest;           // "" when not given
  std::vector<std::string> op_types;        // any of them (the directory name)
  std::vector<std::string> name_globs;      // any of them (fnmatch on the file stem)
  std::optional<TagTime> since;             // modification time >= since
};

struct SelectedFile {
  std::filesystem::path path; // for I/O and messages: the file, or dataset root / relative
  // For dataset and manifest selections, the path below the dataset root (every component of it
  // must not be a symbolic link before a write); "" for explicit files.
  std::filesystem::path relative;
  std::filesystem::path root;
};

struct TagSelection {
  std::vector<SelectedFile> files; // sorted by path (explicit files in command-line order)
  // Problems with the selection itself, in the order found: an invalid manifest
  // (`tag.manifest-invalid`, usage), an unreadable manifest or dataset root
  // (`io.read`, `dataset.root-missing`), directories that cannot be listed (`io.read`), and the
  // manifest's JSON warnings. A usage or environment error among them means the selection is not
  // to be acted on; count them with count_diagnostics.
  std::vector<Diagnostic> problems;
  // Manifest entries whose file is gone (`io.not-found` at /entries/<i>/path), skipped. They are
  // findings about the data, not environment failures: the other files are still selected (and a
  // command exits 1, not 3, for them).
  std::vector<Diagnostic> missing_entries;
};

// Resolves the selection. A dataset selection takes exactly DIR/definitions/<op_type>/<name>.json
// (scan_tree with ScanMode::strict: symbolic links to directories not followed; a symbolic link
// to a file is selected, and refused later by the write check); a manifest selects its entries'
// paths below `dataset` (or the manifest's own `dataset` when that is ""), de-duplicated. The
// filters apply to both.
TagSelection select_tag_files(const TagSelectionOptions& options);

} // namespace fib
