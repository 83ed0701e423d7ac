#pragma once
// Editing the `tags` list of definitions: the pure edit of one document, and `fib tag add|remove`
// over selected files (atomic, never through a symbolic link).

#include <fib/base/diagnostic.hpp>
#include <fib/base/enum_names.hpp>
#include <fib/base/expected.hpp>
#include <fib/io/json_io.hpp>
#include <fib/tag/selection.hpp>
#include <fib/util/atomic_file.hpp>
#include <fib/util/file_lock.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// --- Editing one document ---

enum class TagAction { add, remove };

template <> struct EnumNames<TagAction> {
  static constexpr std::array k_table = std::to_array<EnumName<TagAction>>({
      {TagAction::add, "add"},
      {TagAction::remove, "remove"},
  });
};

// "add" or "remove" (the `fib tag` subcommand).
inline std::string_view to_string(TagAction action) {
  return enum_name(action);
}

// The tags of a definition document. Errors (pointer set, no file): `tag.not-a-definition` at ""
// when `document` is not a JSON object, `schema.type` at /tags when `tags` is not an array, or at
// /tags/<i> for an element that is not a string. A missing `tags` is an empty list.
Expected<std::vector<std::string>> read_tags(const Json& document);

// Whether `pattern` is a namespace wildcard `NAMESPACE:*` (non-empty namespace).
bool is_namespace_wildcard(std::string_view pattern);

// `tags` after the action, sorted (byte order) and without duplicates. `add` of a tag of a
// single-valued namespace (status:, stage:; replaces_namespace_values) first drops the other
// values of that namespace: adding status:unverified to status:verified replaces it. `remove`
// drops every tag equal to an operand, and for an operand `NAMESPACE:*` every tag of that
// namespace.
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

// --- Editing files ---

// Whether `file` may be written: not a symbolic link itself, and (for dataset selections) no
// component below the root a symbolic link either. nullopt when safe, else `io.unsafe-path`.
std::optional<Diagnostic> check_tag_write_path(const SelectedFile& file);

struct TagEditOptions {
  TagAction action = TagAction::add;
  std::vector<std::string> tags; // operands, already checked by the caller (check_tag)
  DryRun dry_run = DryRun::no;
  // How long a write waits for the lock of the file's directory (edit_tag_files).
  std::chrono::milliseconds lock_timeout = k_default_lock_timeout;
};

enum class TagFileStatus { unchanged, changed, skipped };

// A value of a single-valued namespace that an added tag replaced.
struct TagReplacement {
  std::string old_tag; // status:verified
  std::string new_tag; // status:unverified
};

struct TaggedFile {
  SelectedFile file;
  TagFileStatus status = TagFileStatus::unchanged;
  std::vector<std::string> added;   // sorted
  std::vector<std::string> removed; // sorted
  // The removed tags an added one replaced (each old_tag is in `removed`, each new_tag in
  // `added`), in the order of `removed`.
  std::vector<TagReplacement> replaced;
  // Every diagnostic about the file, with its file set. A skipped file has exactly one error
  // (why it was skipped); its exit class tells an environment failure (`io.*`) from a finding.
  std::vector<Diagnostic> diagnostics;
  std::string original_text;
  std::string new_text; // canonical JSON; "" unless changed
  bool written = false;
};

struct TagSummary {
  std::size_t files = 0;
  std::size_t changed = 0;
  std::size_t skipped = 0;
};

// Edits each file in order and hands the outcome to `on_file`. A file whose set of tags does not
// change is not rewritten (its bytes and modification time stay); a changed one is written as
// canonical JSON (2-space indent, UTF-8, trailing newline) atomically, unless DryRun::yes. The
// write is made under the exclusive lock of the file's directory (file_lock.hpp), after reading
// the file again: when another process changed it in the meantime, the edit is made on its new
// content, so that concurrent `fib tag` runs keep each other's tags. A lock still held by another
// process after `options.lock_timeout` skips the file (`io.lock-timeout`, file: the directory).
// Skipped files: unreadable or not lockable (`io.*`), not JSON (`json.parse`), not a definition
// (`tag.not-a-definition`, `schema.type`), or in need of a change but unsafe to write
// (check_tag_write_path: `io.unsafe-path`, also under DryRun::yes). A write first removes the stale
// temporaries a killed run left in the file's directory (StaleTemporarySweeper,
// fib/util/atomic_file.hpp).
TagSummary edit_tag_files(const std::vector<SelectedFile>& files, const TagEditOptions& options,
                          const std::function<void(const TaggedFile&)>& on_file);

} // namespace fib
