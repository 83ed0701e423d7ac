#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/file_lock.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fib {
namespace {

using namespace std::chrono_literals;
using std::chrono::steady_clock;
using testing::TempDir;
using testing::tree;

// A child process that takes the lock of a directory and holds it until its parent says so (or
// for a fixed time), for tests that need the holder to be another process.
class LockHolder {
public:
  // Forks; returns once the child holds the lock of `directory` (or failed to take it: locked()).
  // With `hold_for` set, the child creates the file `done` beside `directory` after that time,
  // then exits (releasing the lock); without it, the child holds the lock until release() or
  // kill().
  LockHolder(const std::filesystem::path& directory,
             std::optional<steady_clock::duration> hold_for) {
    int ready[2];
    int release[2];
    if (::pipe(ready) != 0 || ::pipe(release) != 0) {
      ADD_FAILURE() << "pipe failed";
      return;
    }
    m_pid = ::fork();
    if (m_pid == 0) {
      ::close(ready[0]);
      ::close(release[1]);
      auto lock = lock_directory(directory, 5s);
      const char byte = lock.has_value() && lock->state() == LockState::held ? 'y' : 'n';
      (void)!::write(ready[1], &byte, 1);
      if (hold_for) {
        std::this_thread::sleep_for(*hold_for);
        std::ofstream(directory.parent_path() / "done") << "done\n";
      } else {
        char ignored = 0;
        (void)!::read(release[0], &ignored, 1); // returns when the parent closes its end
      }
      ::_exit(lock.has_value() ? 0 : 1);
    }
    ::close(ready[1]);
    ::close(release[0]);
    m_release = release[1];
    char byte = 0;
    const bool read_one = ::read(ready[0], &byte, 1) == 1;
    ::close(ready[0]);
    m_locked = read_one && byte == 'y';
  }
  ~LockHolder() {
    release();
    wait();
  }
  LockHolder(const LockHolder&) = delete;
  LockHolder& operator=(const LockHolder&) = delete;

  bool locked() const { return m_locked; }
  void release() {
    if (m_release >= 0) {
      ::close(m_release);
      m_release = -1;
    }
  }
  void kill() { ::kill(m_pid, SIGKILL); }
  // The child's wait status (reaped once).
  int wait() {
    if (m_pid > 0) {
      ::waitpid(m_pid, &m_status, 0);
      m_pid = -1;
    }
    return m_status;
  }

private:
  pid_t m_pid = -1;
  int m_release = -1;
  int m_status = 0;
  bool m_locked = false;
};

TEST(FileLock, LocksADirectoryWithoutLeavingAFileInIt) {
  const TempDir dir;
  const auto locked = dir.path() / "traces";
  std::filesystem::create_directories(locked);
  {
    auto lock = lock_directory(locked);
    ASSERT_TRUE(lock.has_value()) << lock.error().message;
    EXPECT_EQ(lock->state(), LockState::held);
    EXPECT_EQ(lock->path(), locked);
    EXPECT_EQ(tree(dir.path()), std::vector<std::string>{"traces"});
  }
  EXPECT_EQ(tree(dir.path()), std::vector<std::string>{"traces"});
}

TEST(FileLock, TwoLocksOfOneProcessExcludeEachOther) {
  const TempDir dir;
  auto first = lock_directory(dir.path());
  ASSERT_TRUE(first.has_value()) << first.error().message;
  auto second = lock_directory(dir.path(), 50ms);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, codes::k_io_lock_timeout);
  // Destroying the holder releases the lock.
  *first = DirectoryLock();
  auto third = lock_directory(dir.path(), 50ms);
  ASSERT_TRUE(third.has_value()) << third.error().message;
  EXPECT_EQ(third->state(), LockState::held);
}

TEST(FileLock, AWaiterGetsTheLockOnceTheOtherProcessReleasesIt) {
  const TempDir dir;
  const auto locked = dir.path() / "defs";
  std::filesystem::create_directories(locked);
  LockHolder holder(locked, 300ms);
  ASSERT_TRUE(holder.locked());
  const auto start = steady_clock::now();
  auto lock = lock_directory(locked, 10s);
  const auto waited = steady_clock::now() - start;
  ASSERT_TRUE(lock.has_value()) << lock.error().message;
  EXPECT_EQ(lock->state(), LockState::held);
  // The holder finished its work before the waiter got in.
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "done"));
  EXPECT_GE(waited, 100ms);
  EXPECT_EQ(holder.wait(), 0);
}

TEST(FileLock, TheDeadlineGivesALockTimeoutNamingTheDirectory) {
  const TempDir dir;
  const auto locked = dir.path() / "traces" / "alice";
  std::filesystem::create_directories(locked);
  LockHolder holder(locked, std::nullopt);
  ASSERT_TRUE(holder.locked());
  const auto start = steady_clock::now();
  auto lock = lock_directory(locked, 200ms);
  const auto waited = steady_clock::now() - start;
  ASSERT_FALSE(lock.has_value());
  const Diagnostic& d = lock.error();
  EXPECT_EQ(d.code, codes::k_io_lock_timeout);
  EXPECT_EQ(d.severity, Severity::error);
  EXPECT_EQ(d.file, locked);
  EXPECT_EQ(d.message,
            locked.string() + ": still locked by another process after 0.2 s; nothing was written");
  EXPECT_FALSE(d.hint.empty());
  EXPECT_TRUE(is_environment_failure(d));
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 5s);
  holder.release();
  EXPECT_EQ(holder.wait(), 0);
  EXPECT_TRUE(lock_directory(locked, 5s).has_value());
}

TEST(FileLock, AKilledHolderLeavesNoLockBehind) {
  const TempDir dir;
  LockHolder holder(dir.path(), std::nullopt);
  ASSERT_TRUE(holder.locked());
  EXPECT_FALSE(lock_directory(dir.path(), 20ms).has_value());
  holder.kill();
  const int status = holder.wait();
  EXPECT_TRUE(WIFSIGNALED(status));
  auto lock = lock_directory(dir.path(), 1s);
  ASSERT_TRUE(lock.has_value()) << lock.error().message;
  EXPECT_EQ(lock->state(), LockState::held);
}

TEST(FileLock, AMissingDirectoryIsNotFound) {
  const TempDir dir;
  auto lock = lock_directory(dir.path() / "absent");
  ASSERT_FALSE(lock.has_value());
  EXPECT_EQ(lock.error().code, codes::k_io_not_found);
  EXPECT_EQ(lock.error().file, dir.path() / "absent");
}

} // namespace
} // namespace fib
