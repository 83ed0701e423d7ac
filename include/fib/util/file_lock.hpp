#pragma once
// Serializing read-modify-write edits of files between processes: an exclusive advisory lock
// (flock(2)) on the directory that holds the edited file, taken with a deadline and released when
// the DirectoryLock that holds it goes away.
//
// What is locked, and why the directory: fib's writes are atomic (a temporary file renamed over the
// target, atomic_file.hpp), so the target's inode changes with every write. A lock on the file
// itself would be held on the old inode, and the next writer would open and lock the new one while
// the first still works: no exclusion at all. The containing directory stays the same inode across
// those renames, and flock works on a directory descriptor opened read-only, so locking it needs no
// lock file: nothing is left in the dataset, not even after a crash. The kernel drops the lock when
// its holder exits or is killed, so a dead holder never blocks anyone.
//
// The lock is advisory: it excludes other DirectoryLocks (other fib processes, and other threads of
// one process, since each lock has its own open file description), not programs that ignore it.
// One process must not lock a directory it already holds: the second lock waits for the first and
// times out.

#include <fib/base/expected.hpp>
#include <fib/util/atomic_file.hpp>

#include <chrono>
#include <filesystem>

namespace fib {

// --- Interface ---

// How long lock_directory waits by default. The lock is held only for a read, an edit and an atomic
// write, so a holder that keeps it this long is stuck (stopped with Ctrl-Z, or on a hung file
// system), not busy.
inline constexpr std::chrono::milliseconds k_default_lock_timeout{30'000};

// Whether a DirectoryLock excludes others. `unsupported`: the file system refused flock on a
// directory (NFS without the local_lock mount option emulates flock with fcntl locks, which need a
// descriptor open for writing, and a directory cannot be): the caller goes on unlocked, as fib
// did before it locked at all, rather than failing every write there.
enum class LockState { held, unsupported };

// Holds the lock from lock_directory until destroyed or assigned over. Move-only; a
// default-constructed or moved-from lock holds nothing (state() reads `unsupported`).
class DirectoryLock {
public:
  DirectoryLock() = default;
  DirectoryLock(int fd, std::filesystem::path path, LockState state)
      : m_fd(fd), m_path(std::move(path)), m_state(state) {}
  ~DirectoryLock();
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  LockState state() const { return m_state; }
  // The locked directory, for messages.
  const std::filesystem::path& path() const { return m_path; }

private:
  int m_fd = -1;
  std::filesystem::path m_path;
  LockState m_state = LockState::unsupported;
};

// Takes the exclusive lock of `directory`, trying without blocking and sleeping a few milliseconds
// between attempts until `timeout` has passed. The lock is on a descriptor of its own (the handle
// may be closed while the lock is held). Errors: `io.lock-timeout` (file: the directory) when
// another process still holds it at the deadline; `io.write` when the directory cannot be opened
// again or flock fails otherwise. A file system that cannot lock directories gives a lock in
// LockState::unsupported, not an error.
Expected<DirectoryLock> lock_directory(const DirectoryHandle& directory,
                                       std::chrono::milliseconds timeout = k_default_lock_timeout);

// lock_directory for the directory `path` (links followed: open_directory's errors, `io.not-found`
// when it does not exist).
Expected<DirectoryLock> lock_directory(const std::filesystem::path& path,
                                       std::chrono::milliseconds timeout = k_default_lock_timeout);

} // namespace fib
