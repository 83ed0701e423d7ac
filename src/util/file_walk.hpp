#pragma once
// Listing the files below a directory the way every fib command that takes directories does.

#include <fib/base/diagnostic.hpp>
#include <fib/util/directory_listings.hpp>

#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace fib::detail {

// The status of the entry listed in `directory`, without following a link, as
// std::filesystem::symlink_status gives it, but with the type the listing already gave (readdir's
// d_type) instead of a system call where the file system gave one; only the type is filled in
// then. An entry that is gone since the listing may still show its listed type (a later open
// reports it). Never throws.
std::filesystem::file_status listed_status(const std::filesystem::path& directory,
                                           const DirectoryListing::Entry& entry,
                                           std::error_code& ec);

struct FilesBelow {
  std::vector<std::filesystem::path> files; // sorted by path
  // One `io.read` (file = that directory) for each directory, `directory` itself included, that
  // could not be listed (completely); `files` holds what was found everywhere else.
  std::vector<Diagnostic> errors;
};

// The order in which list_files_below takes each directory's entries. What it finds comes back in
// sorted path order either way; two walks of one tree that share their DirectoryListings, one in
// each order, split the listing between them instead of one waiting for the other's listings.
enum class WalkOrder { names_ascending, names_descending };

// Regular files below `directory` whose extension is one of `extensions` (".json", …). Symbolic
// links to directories are not followed, and the report files `fib validate --dataset` writes
// (`reports/report-*`) and the temporaries of atomic writes (is_atomic_write_temporary) are left
// out. A subdirectory that cannot be listed (no permission, say) is never skipped silently: it is
// an error of its own and the walk goes on. Directories are listed through `listings` when one is
// given (shared with another walk of the same tree). Never throws (but for allocation failure).
FilesBelow list_files_below(const std::filesystem::path& directory,
                            std::initializer_list<std::string_view> extensions,
                            DirectoryListings* listings = nullptr,
                            WalkOrder order = WalkOrder::names_ascending);

// Whether `file`, found below `directory`, matches one of the shell-style `globs` (`*`, `?`,
// `[...]`; `*` also matches `/`): each is tried against the file name, the path relative to
// `directory` and the path as found (generic form, `/` separators).
bool matches_any_glob(const std::vector<std::string>& globs, const std::filesystem::path& file,
                      const std::filesystem::path& directory);

} // namespace fib::detail
