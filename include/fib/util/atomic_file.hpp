#pragma once
// Atomic file writes: the content goes to a temporary file in the target's directory (a short
// `.fib-XXXXXX` name, so that any valid target name works), is flushed to disk, and only then takes
// the target's name; the directory is then flushed so that the new name is durable too. A kill at
// any moment leaves either the old state or the complete new file, never a partial one (at worst a
// stray `.fib-XXXXXX` temporary, which the next fib command writing into that directory removes:
// see "Stale temporaries" below).

#include <fib/base/expected.hpp>

#include <cstdint>

#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace fib {

// --- Interface ---

enum class Overwrite { allowed, forbidden };

// For commands that can show what they would write instead of writing it.
enum class DryRun { no, yes };

// The permission bits of the written file. They are set on the temporary before it takes the
// target's name, so no moment shows the new content with other bits: nullopt is 0644 less the
// umask; an in-place rewrite passes the bits of the file it replaces.
using FileMode = std::optional<std::filesystem::perms>;

// Writes `content` to `target` atomically, creating missing parent directories. With
// Overwrite::forbidden an existing target is left alone and the error is `report.exists`
// (checked atomically: the final step is link(2), which fails if the name exists). Other
// failures: `io.write`. The temporary file is removed on every failure path.
Expected<std::filesystem::path> write_file_atomically(const std::filesystem::path& target,
                                                      std::string_view content, Overwrite overwrite,
                                                      FileMode mode = std::nullopt);

// A file written piece by piece, then put in place atomically: create() makes the locked
// temporary beside `target` (creating missing parent directories), append() adds bytes to it (and
// starts their write-back to the disk without waiting), commit() syncs it and links (Overwrite::
// forbidden) or renames it onto `target`, with write_file_atomically's errors. Until commit() the
// target is untouched; an object that goes without a successful commit() removes its temporary.
// After a failed append() the file is dropped and commit() fails. Move-only; not thread-safe.
class PendingFile {
public:
  static Expected<PendingFile> create(const std::filesystem::path& target, Overwrite overwrite,
                                      FileMode mode = std::nullopt);
  PendingFile(PendingFile&&) noexcept;
  PendingFile& operator=(PendingFile&&) noexcept;
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile();

  std::optional<Diagnostic> append(std::string_view bytes);
  Expected<std::filesystem::path> commit();

  // For files that take the first free name of a sequence, in pairs (a report's .json and .txt):
  // link_as() syncs and closes the temporary (the first time) and links it as `target`, a name in
  // the directory of create()'s target, never replacing a file: `LinkOutcome::name_taken` when the
  // name exists. It may be called again with other names; unlink_linked() takes back a name it
  // made; commit_linked() ends the file (the temporary goes, the directory is synced). Errors:
  // `io.write`. Overwrite and create()'s target name play no part on this path.
  enum class LinkOutcome { linked, name_taken };
  Expected<LinkOutcome> link_as(const std::filesystem::path& target);
  void unlink_linked(const std::filesystem::path& target);
  std::optional<Diagnostic> commit_linked();

private:
  struct State;
  explicit PendingFile(std::unique_ptr<State> state);
  std::unique_ptr<State> m_state;
};

// --- Writing below a directory without following symbolic links ---
//
// A tool that writes into a directory it does not own (a dataset clone) must not be led outside it
// by a symbolic link placed there. A DirectoryHandle is an open directory; every step below it
// goes through openat(2) with O_NOFOLLOW, so a link anywhere on the way is refused
// (`io.unsafe-path`) instead of followed, and a link swapped in after a check cannot redirect the
// write either.

enum class CreateMissing { no, yes };

class DirectoryHandle {
public:
  DirectoryHandle() = default;
  DirectoryHandle(int fd, std::filesystem::path path) : m_fd(fd), m_path(std::move(path)) {}
  ~DirectoryHandle();
  DirectoryHandle(DirectoryHandle&& other) noexcept;
  DirectoryHandle& operator=(DirectoryHandle&& other) noexcept;
  DirectoryHandle(const DirectoryHandle&) = delete;
  DirectoryHandle& operator=(const DirectoryHandle&) = delete;

  int fd() const { return m_fd; }
  // The path it was opened by, for messages.
  const std::filesystem::path& path() const { return m_path; }

private:
  int m_fd = -1;
  std::filesystem::path m_path;
};

// Opens `root` itself, following links (the root is the caller's choice). Errors: `io.not-found`
// when it does not exist, `io.read` when it is not a directory or cannot be opened.
Expected<DirectoryHandle> open_directory(const std::filesystem::path& root);

// Opens the subdirectory `name` (one path segment, checked by the caller) of `parent`, creating it
// (mode 0777 & ~umask) with CreateMissing::yes. Returns std::nullopt when it is missing and
// CreateMissing::no. Errors: `io.unsafe-path` when `name` is a symbolic link or not a directory,
// `io.read` / `io.write` for other failures.
Expected<std::optional<DirectoryHandle>>
open_subdirectory(const DirectoryHandle& parent, std::string_view name, CreateMissing create);

// Reads the regular file `name` in `directory` without following a link. std::nullopt when it does
// not exist. Errors: `io.unsafe-path` for a symbolic link or anything but a regular file,
// `io.too-large` above `max_bytes`, `io.read`.
Expected<std::optional<std::string>> read_file_in(const DirectoryHandle& directory,
                                                  std::string_view name, std::uintmax_t max_bytes);

// The permission bits (rwx for user, group and others; never set-id or sticky) of the regular
// file `name` in `directory` (fstatat(2), not following a link), for an in-place rewrite that
// keeps them: nullopt when it is missing, a link, or not a
// regular file (the writer's default then applies).
FileMode file_mode_in(const DirectoryHandle& directory, std::string_view name);

// Removes the regular file `name` of `directory` (unlinkat(2) of the name: a symbolic link there is
// refused, `io.unsafe-path`, never followed), then syncs the directory. Returns false when there
// was no such file. Errors: `io.unsafe-path` for a link or anything but a regular file, `io.write`
// when the removal fails.
Expected<bool> remove_file_in(const DirectoryHandle& directory, std::string_view name);

namespace detail {
// The point of an atomic write between its complete temporary and the step that names it, where
// tests make the process die or stop ($FIB_FAULT_INJECTION kill-before-rename or
// stop-before-rename); nothing happens otherwise. Other writers with the same shape call it too.
void inject_fault_before_rename();
} // namespace detail

// Whether a write waits until the data is on disk (fsync of the file, then of its directory).
// Unsynced writes are still atomic against a killed process (the rename is all or nothing), but a
// power loss may leave an empty or torn file under the new name: only for data that is checked
// when read and may be lost (the result cache).
enum class Durability { synced, unsynced };

// write_file_atomically for the entry `name` of `directory`: the temporary `.fib-XXXXXX` is created
// there with O_EXCL|O_NOFOLLOW and renamed (Overwrite::allowed) or linked (Overwrite::forbidden:
// `io.write` "already exists" when the name is taken) onto `name`; renaming replaces a link named
// `name` instead of writing through it. Returns the path of the written file.
Expected<std::filesystem::path>
write_file_atomically_in(const DirectoryHandle& directory, std::string_view name,
                         std::string_view content, Overwrite overwrite,
                         FileMode mode = std::nullopt, Durability durability = Durability::synced);

// The directory that holds the file `root / relative`, for writing it: every directory of
// `relative` below `root` is opened with open_subdirectory (links refused, `io.unsafe-path`;
// created with CreateMissing::yes, else a missing one is `io.write`). `relative` must be relative,
// name a file and be free of `..` (`io.unsafe-path` otherwise).
Expected<DirectoryHandle> open_parent_directory_below(const std::filesystem::path& root,
                                                      const std::filesystem::path& relative,
                                                      CreateMissing create);

// write_file_atomically_in for `root / relative`, in the directory open_parent_directory_below
// opens (its errors).
Expected<std::filesystem::path> write_file_atomically_below(const std::filesystem::path& root,
                                                            const std::filesystem::path& relative,
                                                            std::string_view content,
                                                            Overwrite overwrite,
                                                            CreateMissing create);

// --- Stale temporaries ---
//
// The temporary of an atomic write is named `.fib-` followed by exactly six ASCII letters or
// digits. The writer takes an exclusive flock(2) on it right after creating it and holds it until
// the new file has its name (released when the process ends, however it ends). Only then, and only
// if the name still leads to its file, does the writer use it; when a sweep removed the name in
// the instant between its creation and its lock (or holds it locked to remove it), the writer
// starts again with another name. A temporary is *stale* when
//   - its name has exactly that form (the worker's own `<target>.fib-<pid>` files never do),
//   - it is a regular file (looked at without following a link), and
//   - no process holds its lock (flock(2) with LOCK_NB succeeds).
// A concurrent fib's live temporary fails the last test, so it is never removed, and a killed
// write's temporary is stale at once, whatever its age (no clock is compared: the kernel's file
// stamps and a process's clock readings need not agree to the tick). On a file system without
// flock(2) nothing can be locked, and so nothing is ever removed.

// True for a name of the atomic writer's temporaries (`.fib-` and six ASCII letters or digits).
// Readers of a directory fib writes into skip regular files with such a name.
bool is_atomic_write_temporary(std::string_view name);

// Removes the stale temporaries of the directories a run writes into. Construct one per run and
// call remove_stale_in before writing into a directory; each directory (by device and inode) is
// looked at once per sweeper. Removal is unlinkat(2) of the name only (never following a link,
// never touching anything but a regular file with that name); entries that cannot be opened or
// locked are left alone, and so are listing errors (the sweep is best effort: the write that
// follows reports its own errors). Not for concurrent use from several threads.
class StaleTemporarySweeper {
public:
  // Sweeps `directory`; returns the number of temporaries removed.
  std::size_t remove_stale_in(const DirectoryHandle& directory);
  // Sweeps the directory that holds `file` (the parent path, or `.`; links on the way followed,
  // as write_file_atomically follows them); nothing when it cannot be opened.
  std::size_t remove_stale_beside(const std::filesystem::path& file);
  // Sweeps the directory that holds `root / relative`, opened as open_parent_directory_below does
  // (links refused); nothing when that directory does not exist or is refused.
  std::size_t remove_stale_below(const std::filesystem::path& root,
                                 const std::filesystem::path& relative);

  std::size_t removed() const { return m_removed; }

private:
  std::set<std::pair<std::uintmax_t, std::uintmax_t>> m_swept;
  std::size_t m_removed = 0;
};

// Test hook (docs/architecture.md): when the environment variable FIB_FAULT_INJECTION is
// `kill-before-rename`, every atomic write kills its own process with SIGKILL after the temporary
// file is complete and before it takes the target's name: the state a crash at the worst moment
// leaves behind. With `stop-before-rename` it stops itself (SIGSTOP) at that moment instead, alive
// and holding its temporary's lock, so that a test can look at a live write.
inline constexpr std::string_view k_fault_injection_variable = "FIB_FAULT_INJECTION";

} // namespace fib
