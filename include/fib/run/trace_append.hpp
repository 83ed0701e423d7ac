#pragma once
// Appending trace lines to a dataset's trace file so that concurrent `fib run`s on one dataset
// never lose a line: the append is a read-modify-write of the whole file (the old lines plus the
// new ones replace it atomically), done under the lock of the file's directory (file_lock.hpp).

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/model/trace.hpp>
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

// Adds one evaluated trace `line` (JSON text without its newline) whose identity is `identity`
// (trace_identity) to the file, as append_trace_lines does, and removes the lines already there
// with the same identity: the new evaluation replaces them, so running the same evaluation again
// never leaves it twice. Lines that are no valid trace, or that have another identity (another
// solution, workload or settings, or no settings at all: the old tool's lines), are kept as they
// are, in their order; the new line comes last. The number of lines removed, or the errors of
// append_trace_lines.
Expected<std::size_t>
record_trace_line(const std::filesystem::path& root, const std::filesystem::path& relative,
                  std::string_view line, const TraceIdentity& identity,
                  std::chrono::milliseconds lock_timeout = k_default_lock_timeout);

} // namespace fib
