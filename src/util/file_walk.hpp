#pragma once
// Listing the files below a directory the way every fib command that takes directories does.

#include <fib/base/diagnostic.hpp>

#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

namespace fib::detail {

struct FilesBelow {
  std::vector<std::filesystem::path> files; // sorted by path
  // `io.read` (file = the directory) when listing stopped early; `files` holds what was found.
  std::optional<Diagnostic> error;
};

// Regular files below `directory` whose extension is one of `extensions` (".json", …). Symbolic
// links to directories are not followed, unreadable subdirectories are skipped, and the report
// files `fib validate --dataset` writes (`reports/report-*`) and the temporaries of atomic writes
// (is_atomic_write_temporary) are left out. Never throws.
FilesBelow list_files_below(const std::filesystem::path& directory,
                            std::initializer_list<std::string_view> extensions);

} // namespace fib::detail
