#pragma once
// Moving files in and out of a worker's scratch directory (internal to the exec layer). The
// scratch directory is writable from inside the sandbox, where untrusted code (and whatever it
// left running) may replace any entry by a symbolic link to a host file, a FIFO or a device at any
// moment. So fib never follows a path inside it: it works through descriptors (openat with
// O_NOFOLLOW), creates with O_EXCL, reads only regular files, and copies what it reads into a
// directory of its own before parsing it. Only the scratch directory's own path (made by fib with
// mkdtemp, a mount point inside the sandbox) is trusted.

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

namespace fib::detail {

// The largest file fib takes out of a scratch directory (the workers' RLIMIT_FSIZE).
inline constexpr std::uint64_t k_max_taken_file_bytes = std::uint64_t{16} << 30;

// Creates the directory `name` (one path segment) in `scratch`, mode 0700; an error when it
// already exists or cannot be made (`worker.protocol` when something is in the way).
Expected<std::filesystem::path> make_job_directory(const std::filesystem::path& scratch,
                                                   const std::string& name);

// Copies the regular file `scratch`/`directory`/`name` to `destination` (a path fib alone writes;
// replaced if it exists). Errors (`worker.protocol`): missing, not a regular file (a link, a FIFO,
// a device), over k_max_taken_file_bytes, unreadable.
Expected<std::filesystem::path> take_file(const std::filesystem::path& scratch,
                                          const std::string& directory, const std::string& name,
                                          const std::filesystem::path& destination);

// Copies `source` (a file of fib's) to `scratch`/`directory`/`name`, which must not exist yet.
Expected<std::filesystem::path> put_file(const std::filesystem::path& source,
                                         const std::filesystem::path& scratch,
                                         const std::string& directory, const std::string& name);

// What a worker's scratch directory must be: a directory, and in the sandbox a tmpfs (its own
// /tmp, of a bounded size).
enum class ScratchKind { directory, tmpfs };

// Receives, on the worker's channel `socket` (readable now), the one byte 'S' with the descriptor
// of the worker's scratch directory (SCM_RIGHTS), which the worker sends before any untrusted code
// runs: fib reaches the sandbox's own /tmp through it (as /proc/self/fd/N). -1 when the message
// is anything else, or the descriptor is not of `kind`.
int receive_scratch_descriptor(int socket, ScratchKind kind);

} // namespace fib::detail
