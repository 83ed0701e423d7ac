#include "fib/util/file_lock.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <thread>
#include <unistd.h>
#include <utility>

namespace fib {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// The longest pause between two attempts: short next to the lock's hold times (a read, an edit
// and a write), so that a waiter notices a released lock quickly.
constexpr milliseconds k_longest_pause{20};

Diagnostic lock_error(const std::filesystem::path& path, std::string_view what, int error) {
  Diagnostic d = make_diagnostic(
      codes::k_io_write, fmt::format("{}: {}: {}", path.string(), what, std::strerror(error)));
  d.file = path;
  return d;
}

Diagnostic lock_timeout(const std::filesystem::path& path, milliseconds timeout) {
  Diagnostic d = make_diagnostic(
      codes::k_io_lock_timeout,
      fmt::format("{}: still locked by another process after {:g} s; nothing was written",
                  path.string(), static_cast<double>(timeout.count()) / 1000.0));
  d.file = path;
  d.hint = "another fib run or fib tag is writing there; a stopped one (Ctrl-Z) keeps the lock "
           "until it resumes or ends";
  return d;
}

// flock's answers that mean "this file system cannot lock a directory", not "someone holds it":
// EBADF is what NFS says for an exclusive lock on a read-only descriptor (the descriptor itself was
// just opened, so it is not bad).
bool lock_unsupported(int error) {
  return error == EBADF || error == ENOLCK || error == EOPNOTSUPP || error == EINVAL ||
         error == ENOSYS;
}

} // namespace

DirectoryLock::~DirectoryLock() {
  if (m_fd >= 0) {
    ::close(m_fd); // closing the last descriptor of the open file description releases the lock
  }
}

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_path(std::move(other.m_path)),
      m_state(std::exchange(other.m_state, LockState::unsupported)) {}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = std::exchange(other.m_fd, -1);
    m_path = std::move(other.m_path);
    m_state = std::exchange(other.m_state, LockState::unsupported);
  }
  return *this;
}

Expected<DirectoryLock> lock_directory(const DirectoryHandle& directory, milliseconds timeout) {
  // A descriptor of its own: a new open file description, so that two locks of one process
  // exclude each other too, and the lock does not depend on the handle staying open.
  const int fd = ::openat(directory.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return unexpected(lock_error(directory.path(), "cannot open the directory to lock it", errno));
  }
  DirectoryLock lock(fd, directory.path(), LockState::held);
  const auto deadline = steady_clock::now() + timeout;
  milliseconds pause{1};
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EINTR) {
      continue;
    }
    if (lock_unsupported(error)) {
      return DirectoryLock(-1, directory.path(), LockState::unsupported); // `lock` closes fd
    }
    if (error != EWOULDBLOCK) {
      return unexpected(lock_error(directory.path(), "cannot lock the directory", error));
    }
    const auto now = steady_clock::now();
    if (now >= deadline) {
      return unexpected(lock_timeout(directory.path(), timeout));
    }
    std::this_thread::sleep_for(
        std::min<steady_clock::duration>(pause, deadline - now)); // never past the deadline
    pause = std::min(pause * 2, k_longest_pause);
  }
  return lock;
}

Expected<DirectoryLock> lock_directory(const std::filesystem::path& path, milliseconds timeout) {
  FIB_TRY_ASSIGN(const DirectoryHandle directory, open_directory(path));
  return lock_directory(directory, timeout);
}

} // namespace fib
