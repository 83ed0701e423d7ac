// The stale temporaries of atomic writes: which names are fib's, and which of those a run removes.

#include "test_support.hpp"

#include <fib/util/atomic_file.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fib {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::temporaries_below;
using testing::tree;
using testing::wait_until_older_than_now;

TEST(StaleTemporaries, OnlyTheAtomicWritersNamesMatch) {
  EXPECT_TRUE(is_atomic_write_temporary(".fib-aZ09xy"));
  EXPECT_TRUE(is_atomic_write_temporary(".fib-ABCDEF"));
  EXPECT_FALSE(is_atomic_write_temporary(".fib-abcde"));   // too short
  EXPECT_FALSE(is_atomic_write_temporary(".fib-abcdefg")); // too long
  EXPECT_FALSE(is_atomic_write_temporary(".fib-abc-de"));  // not alphanumeric
  EXPECT_FALSE(is_atomic_write_temporary(".fib-abc.de"));
  EXPECT_FALSE(is_atomic_write_temporary("fib-abcdef"));
  EXPECT_FALSE(is_atomic_write_temporary("x.fib-abcdef"));
  // The worker's own temporaries (`<target>.fib-<pid>`) are never fib's atomic writer's.
  EXPECT_FALSE(is_atomic_write_temporary("out.json.fib-123456"));
  EXPECT_FALSE(is_atomic_write_temporary(".fib-12345\xc3\xa9"));
}

TEST(StaleTemporaries, OldOnesAreRemovedAndNothingElseIsTouched) {
  const TempDir dir;
  dir.write(".fib-abc123", "stale");
  dir.write(".fib-abc12", "not the pattern");
  dir.write("out.json.fib-4242", "the worker's");
  dir.write("keep.json", "{}");
  std::filesystem::create_directory(dir.path() / ".fib-dir123");
  std::filesystem::create_symlink(dir.path() / "keep.json", dir.path() / ".fib-lnk123");
  wait_until_older_than_now(dir.path());
  StaleTemporarySweeper sweeper;
  const auto handle = open_directory(dir.path());
  ASSERT_TRUE(handle.has_value());
  EXPECT_EQ(sweeper.remove_stale_in(*handle), 1u);
  EXPECT_EQ(tree(dir.path()), (std::vector<std::string>{".fib-abc12", ".fib-dir123", ".fib-lnk123",
                                                        "keep.json", "out.json.fib-4242"}));
  EXPECT_EQ(read_file(dir.path() / ".fib-lnk123"), "{}"); // the link's target is intact
  EXPECT_EQ(sweeper.removed(), 1u);
}

TEST(StaleTemporaries, OnesNewerThanTheRunAreLeftAlone) {
  const TempDir dir;
  StaleTemporarySweeper sweeper; // the run starts before the temporary appears
  wait_until_older_than_now(dir.path());
  dir.write(".fib-new123", "a concurrent run's");
  EXPECT_EQ(sweeper.remove_stale_beside(dir.path() / "target.json"), 0u);
  EXPECT_EQ(temporaries_below(dir.path()), std::vector<std::string>{".fib-new123"});
}

TEST(StaleTemporaries, ALockedOneIsLiveAndLeftAlone) {
  const TempDir dir;
  const auto live = dir.write(".fib-liv123", "being written");
  const int fd = ::open(live.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  // A separate open file description: flock(2) locks conflict between them as between processes.
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  wait_until_older_than_now(dir.path());
  StaleTemporarySweeper sweeper;
  EXPECT_EQ(sweeper.remove_stale_beside(dir.path() / "target.json"), 0u);
  EXPECT_EQ(temporaries_below(dir.path()), std::vector<std::string>{".fib-liv123"});
  ::close(fd);
  // Unlocked (its writer is gone): a later run removes it.
  StaleTemporarySweeper later;
  EXPECT_EQ(later.remove_stale_beside(dir.path() / "target.json"), 1u);
  EXPECT_TRUE(temporaries_below(dir.path()).empty());
}

TEST(StaleTemporaries, EachDirectoryIsSweptOncePerRun) {
  const TempDir dir;
  dir.write(".fib-one123", "stale");
  wait_until_older_than_now(dir.path());
  StaleTemporarySweeper sweeper;
  EXPECT_EQ(sweeper.remove_stale_below(dir.path(), "a.json"), 1u);
  dir.write(".fib-two123", "stale too, but appeared after the sweep");
  EXPECT_EQ(sweeper.remove_stale_below(dir.path(), "b.json"), 0u);
  EXPECT_EQ(temporaries_below(dir.path()), std::vector<std::string>{".fib-two123"});
}

TEST(StaleTemporaries, BelowARootALinkedDirectoryIsNotSwept) {
  const TempDir dir;
  const TempDir outside;
  outside.write(".fib-out123", "not below the root");
  std::filesystem::create_directory_symlink(outside.path(), dir.path() / "sub");
  wait_until_older_than_now(outside.path());
  StaleTemporarySweeper sweeper;
  EXPECT_EQ(sweeper.remove_stale_below(dir.path(), "sub/a.json"), 0u);
  EXPECT_EQ(temporaries_below(outside.path()), std::vector<std::string>{".fib-out123"});
}

// The writer holds the lock on its temporary until the rename: a kill between the two leaves an
// unlocked temporary, which a later run's sweep removes before it writes the same file again.
TEST(StaleTemporaries, AKilledWriteIsCleanedUpByTheNextOne) {
  const TempDir dir;
  const auto target = dir.path() / "out.json";
  ASSERT_TRUE(testing::dies_in_an_atomic_write(
      [&] { (void)write_file_atomically(target, "new", Overwrite::allowed); }));
  ASSERT_EQ(temporaries_below(dir.path()).size(), 1u);
  wait_until_older_than_now(dir.path());
  StaleTemporarySweeper sweeper;
  EXPECT_EQ(sweeper.remove_stale_beside(target), 1u);
  ASSERT_TRUE(write_file_atomically(target, "new", Overwrite::allowed).has_value());
  EXPECT_EQ(tree(dir.path()), std::vector<std::string>{"out.json"});
  EXPECT_EQ(read_file(target), "new");
}

// A write that is still live (stopped just before its rename) holds its temporary's lock: a run
// that started after the temporary was written leaves it alone; once the writer is gone, it goes.
TEST(StaleTemporaries, ALiveWritersTemporaryIsNeverRemoved) {
  const TempDir dir;
  const auto target = dir.path() / "out.json";
  const pid_t child = ::fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    ::setenv(std::string(k_fault_injection_variable).c_str(), "stop-before-rename", 1);
    (void)write_file_atomically(target, "new", Overwrite::allowed);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status));
  ASSERT_EQ(temporaries_below(dir.path()).size(), 1u);
  wait_until_older_than_now(dir.path());
  StaleTemporarySweeper during;
  EXPECT_EQ(during.remove_stale_beside(target), 0u);
  EXPECT_EQ(temporaries_below(dir.path()).size(), 1u);
  ::kill(child, SIGKILL);
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  StaleTemporarySweeper after;
  EXPECT_EQ(after.remove_stale_beside(target), 1u);
  EXPECT_TRUE(tree(dir.path()).empty());
}

} // namespace
} // namespace fib
