#pragma once
// Tags of definitions (`fib tag`): checking one tag against the controlled namespaces, editing the
// `tags` list of a definition document, selecting definition files of a dataset (by op_type, name
// glob, modification time or a `fib stage` manifest), and the inventory behind `fib tag list`.
// docs/tag.md describes the rules; nothing here prints.

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/io/json_io.hpp>
#include <fib/util/atomic_file.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// --- Tag checks ---

// One controlled namespace: the text before the first ':' of a tag, and what its value must be.
struct TagNamespace {
  std::string_view name;  // "model", "tp", …
  std::string_view value; // the rule, for docs and messages ("a positive decimal integer …")
  bool (*accepts)(std::string_view value);
};

// The controlled namespaces, sorted by name: backend, ep, fi_api, model, quantization, stage,
// status, tp (docs/tag.md has the table).
std::span<const TagNamespace> tag_namespaces();

// The namespace entry called `name`, or nullptr.
const TagNamespace* find_tag_namespace(std::string_view name);

// The namespace of a tag (the text before its first ':'); "" for a bare flag (no ':').
std::string_view tag_namespace_of(std::string_view tag);

// Checks one tag as `fib tag add` (and `fib stage`) accept it. nullopt when it is well formed and
// its namespace is known (or it is a bare flag such as `fused`). Otherwise a diagnostic without
// file or pointer: `tag.malformed` (error) for an empty tag, whitespace or control characters,
// invalid UTF-8, an empty namespace or value, or a value a controlled namespace rejects;
// `tag.unknown-namespace` (warning) for a well-formed `ns:value` whose namespace is not in the
// table.
std::optional<Diagnostic> check_tag(std::string_view tag);

// --- Editing one document ---

enum class TagAction { add, remove };

// The tags of a definition document. Errors (pointer set, no file): `tag.not-a-definition` at ""
// when `document` is not a JSON object, `schema.type` at /tags when `tags` is not an array, or at
// /tags/<i> for an element that is not a string. A missing `tags` is an empty list.
Expected<std::vector<std::string>> read_tags(const Json& document);

// Whether `pattern` is a namespace wildcard `NAMESPACE:*` (non-empty namespace).
bool is_namespace_wildcard(std::string_view pattern);

// `tags` after the action, sorted (byte order) and without duplicates. `remove` drops every tag
// equal to an operand, and for an operand `NAMESPACE:*` every tag of that namespace.
std::vector<std::string> edit_tag_list(const std::vector<std::string>& tags, TagAction action,
                                       const std::vector<std::string>& operands);

// `document` (a JSON object) with its `tags` set to `tags`: replaced in place when present,
// otherwise inserted right after `op_type` (at the end when there is no `op_type`); the order of
// every other key is kept.
Json with_tags(const Json& document, const std::vector<std::string>& tags);

// `tag.clash` warnings (pointer /tags, no file) for each `model:` tag of `added` that ends up
// beside a different `model:` tag in `after`. Other namespaces never clash: `tp:2` beside `tp:4`
// describes a model served in two configurations.
std::vector<Diagnostic> tag_clashes(const std::vector<std::string>& added,
                                    const std::vector<std::string>& after);

// --- Selection ---

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
  // Problems: the manifest (`tag.manifest-invalid`, usage), the dataset root
  // (`dataset.root-missing`), manifest entries whose file is gone (`io.not-found`, reported and
  // skipped), listing errors.
  std::vector<Diagnostic> problems;
  bool usage_error = false;       // the manifest is invalid: nothing was selected
  bool environment_error = false; // the manifest or the dataset root could not be read
};

// Resolves the selection. A dataset selection scans exactly DIR/definitions/<op_type>/<name>.json
// (symbolic links to directories not followed; a symbolic link to a file is selected, and refused
// later by the write check); a manifest selects its entries' paths below `dataset` (or the
// manifest's own `dataset` when that is ""), de-duplicated. The filters apply to both.
TagSelection select_tag_files(const TagSelectionOptions& options);

// Whether `file` may be written: not a symbolic link itself, and (for dataset selections) no
// component below the root a symbolic link either. nullopt when safe, else `io.unsafe-path`.
std::optional<Diagnostic> check_tag_write_path(const SelectedFile& file);

// --- Editing files ---

struct TagEditOptions {
  TagAction action = TagAction::add;
  std::vector<std::string> tags; // operands, already checked by the caller (check_tag)
  DryRun dry_run = DryRun::no;
};

enum class TagFileStatus { unchanged, changed, skipped };

struct TaggedFile {
  SelectedFile file;
  TagFileStatus status = TagFileStatus::unchanged;
  std::vector<std::string> added;   // sorted
  std::vector<std::string> removed; // sorted
  std::vector<Diagnostic> diagnostics;
  std::string original_text;
  std::string new_text; // canonical JSON; "" unless changed
  bool written = false;
  bool environment_failed = false; // an io.* problem (exit 3)
};

struct TagSummary {
  std::size_t files = 0;
  std::size_t changed = 0;
  std::size_t skipped = 0;
  bool environment_failed = false;
};

// Edits each file in order and hands the outcome to `on_file`. A file whose set of tags does not
// change is not rewritten (its bytes and modification time stay); a changed one is written as
// canonical JSON (2-space indent, UTF-8, trailing newline) atomically, unless DryRun::yes.
// Skipped files: unreadable (`io.*`), not JSON (`json.parse`), not a definition
// (`tag.not-a-definition`, `schema.type`), or in need of a change but unsafe to write
// (check_tag_write_path: `io.unsafe-path`, also under DryRun::yes).
TagSummary edit_tag_files(const std::vector<SelectedFile>& files, const TagEditOptions& options,
                          const std::function<void(const TaggedFile&)>& on_file);

// --- Inventory ---

inline constexpr std::string_view k_flag_namespace = "(flag)";

struct TagInventory {
  std::size_t files = 0; // files read as definitions
  // Number of files carrying at least one tag of the namespace (bare flags under "(flag)").
  std::map<std::string, std::size_t> namespaces;
  std::map<std::string, std::size_t> tags; // number of files carrying the tag
  std::size_t skipped = 0;
  bool environment_failed = false;
};

// Counts the tags of `files`. Unreadable and non-definition files are reported to `sink` and
// skipped; existing tags that check_tag calls malformed are reported as warnings (file, /tags/<i>).
TagInventory inventory_tags(const std::vector<SelectedFile>& files, DiagnosticSink& sink);

// {"files": N, "namespaces": {ns: count}, "tags": {tag: count}}, keys sorted.
Json tag_inventory_json(const TagInventory& inventory);

} // namespace fib
