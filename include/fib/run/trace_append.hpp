#pragma once
// Appending trace lines to a dataset's trace file so that concurrent `fib run`s on one dataset
// never lose a line: the append is a read-modify-write of the whole file (the old lines plus the
// new ones replace it atomically), done under the lock of the file's directory (file_lock.hpp).

#include <fib/base/diagnostic.hpp>
#include <fib/util/file_lock.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

// Appends `lines` (each one JSON text without its newline) to the file `relative` below the dataset
// `root` (`traces/<author>/<op_type>/<definition>.jsonl`), creating it and its missing directories.
// The directories are opened without following a link (open_parent_directory_below:
// `io.unsafe-path` for a link or a `..`). Under the exclusive lock of the file's directory (waiting
// up to `lock_timeout`, then `io.lock-timeout` and nothing written) the current file is read again,
// a newline is added to a last line that lacks one, the new lines are added after it and the result
// replaces the file in one rename (after the stale temporaries a killed append left in that
// directory are removed: StaleTemporarySweeper, fib/util/atomic_file.hpp). Every line another
// process appended before the lock was taken is kept. Other errors: read_file_in's (`io.read`,
// `io.too-large`, `io.unsafe-path`) and the atomic write's (`io.write`). nullopt on success.
std::optional<Diagnostic>
append_trace_lines(const std::filesystem::path& root, const std::filesystem::path& relative,
                   const std::vector<std::string>& lines,
                   std::chrono::milliseconds lock_timeout = k_default_lock_timeout);

} // namespace fib
