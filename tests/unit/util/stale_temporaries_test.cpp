// The stale temporaries of atomic writes: which names are fib's, and which of those a run removes.

#include "test_support.hpp"

#include <fib/util/atomic_file.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace fib {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::temporaries_below;
using testing::tree;

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
  StaleTemporarySweeper sweeper;
  const auto handle = open_directory(dir.path());
  ASSERT_TRUE(handle.has_value());
  EXPECT_EQ(sweeper.remove_stale_in(*handle), 1u);
  EXPECT_EQ(tree(dir.path()), (std::vector<std::string>{".fib-abc12", ".fib-dir123", ".fib-lnk123",
                                                        "keep.json", "out.json.fib-4242"}));
  EXPECT_EQ(read_file(dir.path() / ".fib-lnk123"), "{}"); // the link's target is intact
  EXPECT_EQ(sweeper.removed(), 1u);
}

// No clock is compared: a killed write's temporary stamped in the same tick as the run that looks
// at it, or stamped in the future by a skewed clock, is as stale as an old one.
TEST(StaleTemporaries, AnUnlockedOneIsStaleWhateverItsTime) {
  const TempDir dir;
  StaleTemporarySweeper sweeper;
  const auto fresh = dir.write(".fib-new123", "a killed run's, just now");
  const auto future = dir.write(".fib-fut123", "stamped an hour ahead");
  struct timespec times[2] = {};
  ASSERT_EQ(::clock_gettime(CLOCK_REALTIME, &times[0]), 0);
  times[0].tv_sec += 3600;
  times[1] = times[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, future.c_str(), times, 0), 0);
  EXPECT_EQ(sweeper.remove_stale_beside(dir.path() / "target.json"), 2u);
  EXPECT_TRUE(temporaries_below(dir.path()).empty());
}

// A sweep running while writers create temporaries in the same directory: every write lands
// (a writer whose fresh, not yet locked temporary was swept goes on with another name), and a live
// write's temporary is never taken.
TEST(StaleTemporaries, WritesSurviveSweepsRunningBesideThem) {
  const TempDir dir;
  std::atomic<bool> writing{true};
  std::size_t swept = 0;
  std::thread sweeping([&] {
    while (writing.load()) {
      StaleTemporarySweeper sweeper;
      swept += sweeper.remove_stale_beside(dir.path() / "x.json");
    }
  });
  std::size_t failures = 0;
  for (int i = 0; i < 400; ++i) {
    const auto target = dir.path() / fmt::format("f{}.json", i % 8);
    const std::string content = fmt::format("write {}", i);
    const auto written = write_file_atomically(target, content, Overwrite::allowed);
    failures += written.has_value() && read_file(target) == content ? 0 : 1;
  }
  writing = false;
  sweeping.join();
  // `swept` counts the temporaries taken in the instant between their creation and their lock
  // (their writers went on with other names); how many depends on scheduling.
  RecordProperty("swept_in_the_window", static_cast<int>(swept));
  EXPECT_EQ(failures, 0u);
  EXPECT_TRUE(temporaries_below(dir.path()).empty());
}

TEST(StaleTemporaries, ALockedOneIsLiveAndLeftAlone) {
  const TempDir dir;
  const auto live = dir.write(".fib-liv123", "being written");
  const int fd = ::open(live.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  // A separate open file description: flock(2) locks conflict between them as between processes.
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
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
  StaleTemporarySweeper sweeper;
  EXPECT_EQ(sweeper.remove_stale_beside(target), 1u);
  ASSERT_TRUE(write_file_atomically(target, "new", Overwrite::allowed).has_value());
  EXPECT_EQ(tree(dir.path()), std::vector<std::string>{"out.json"});
  EXPECT_EQ(read_file(target), "new");
}

// A write that is still live (stopped just before its rename) holds its temporary's lock: a run
// leaves it alone; once the writer is gone, it goes.
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
