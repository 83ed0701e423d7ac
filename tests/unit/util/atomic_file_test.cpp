#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/atomic_file.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fib {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::tree;

TEST(AtomicFile, WritesContent) {
  const TempDir dir;
  const auto target = dir.path() / "report.json";
  const std::string content("{\"a\": \"x\0y\"}\n", 14);
  auto written = write_file_atomically(target, content, Overwrite::forbidden);
  ASSERT_TRUE(written.has_value()) << written.error().message;
  EXPECT_EQ(*written, target);
  EXPECT_EQ(read_file(target), content);
  EXPECT_EQ(tree(dir.path()), std::vector<std::string>{"report.json"});
}

std::filesystem::perms permissions_of(const std::filesystem::path& path) {
  return std::filesystem::symlink_status(path).permissions() & std::filesystem::perms::mask;
}

// The bits asked for are the temporary's before it takes the target's name: a kill at any moment
// never shows the new content with other bits.
TEST(AtomicFile, TheGivenModeIsSetBeforeTheRename) {
  const TempDir dir;
  const auto target = dir.path() / "def.json";
  constexpr auto k_bits = std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                          std::filesystem::perms::group_read;
  std::vector<std::filesystem::perms> seen;
  ASSERT_TRUE(testing::inspect_a_stopped_atomic_write(
      [&] { (void)write_file_atomically(target, "new", Overwrite::allowed, k_bits); },
      [&] {
        for (const auto& temporary : testing::temporaries_below(dir.path())) {
          seen.push_back(permissions_of(dir.path() / temporary));
        }
      }));
  EXPECT_EQ(seen, std::vector<std::filesystem::perms>{k_bits});
  ASSERT_TRUE(write_file_atomically(target, "new", Overwrite::allowed, k_bits).has_value());
  EXPECT_EQ(permissions_of(target), k_bits);
}

TEST(AtomicFile, OverwriteAllowedReplacesTheFile) {
  const TempDir dir;
  const auto target = dir.write("out.txt", "old");
  ASSERT_TRUE(write_file_atomically(target, "new", Overwrite::allowed).has_value());
  EXPECT_EQ(read_file(target), "new");
  EXPECT_EQ(tree(dir.path()), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFile, OverwriteForbiddenKeepsTheExistingFile) {
  const TempDir dir;
  const auto target = dir.write("report.json", "old");
  auto written = write_file_atomically(target, "new", Overwrite::forbidden);
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().code, codes::k_report_exists);
  EXPECT_EQ(written.error().file, target);
  EXPECT_EQ(read_file(target), "old");
  // The temporary file is gone too.
  EXPECT_EQ(tree(dir.path()), std::vector<std::string>{"report.json"});
}

TEST(AtomicFile, LongFileNameWorks) {
  const TempDir dir;
  const std::string name = std::string(245, 'r') + ".json";
  ASSERT_EQ(name.size(), 250u);
  const auto target = dir.path() / name;
  for (const Overwrite overwrite : {Overwrite::forbidden, Overwrite::allowed}) {
    auto written = write_file_atomically(target, "content", overwrite);
    ASSERT_TRUE(written.has_value()) << written.error().message;
    EXPECT_EQ(read_file(target), "content");
  }
  EXPECT_EQ(tree(dir.path()), std::vector<std::string>{name});
}

TEST(AtomicFile, CreatesParentDirectories) {
  const TempDir dir;
  const auto target = dir.path() / "a" / "b" / "c" / "report.txt";
  ASSERT_TRUE(write_file_atomically(target, "text", Overwrite::forbidden).has_value());
  EXPECT_EQ(read_file(target), "text");
  EXPECT_EQ(tree(dir.path()), (std::vector<std::string>{"a", "a/b", "a/b/c", "a/b/c/report.txt"}));
}

TEST(AtomicFile, UnwritablePlaceIsAnIoWriteError) {
  const TempDir dir;
  // A regular file where a directory should be: no one (root included) can create it.
  dir.write("blocker", "x");
  const auto target = dir.path() / "blocker" / "sub" / "report.json";
  auto written = write_file_atomically(target, "content", Overwrite::forbidden);
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().code, codes::k_io_write);
  EXPECT_EQ(written.error().file, target);
  EXPECT_EQ(tree(dir.path()), std::vector<std::string>{"blocker"});
}

TEST(AtomicFile, FailedRenameLeavesNoTemporaryFile) {
  const TempDir dir;
  // The target is a non-empty directory: the final rename(2) fails after the data was written.
  dir.write("target/keep", "x");
  const auto target = dir.path() / "target";
  auto written = write_file_atomically(target, "content", Overwrite::allowed);
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().code, codes::k_io_write);
  EXPECT_EQ(tree(dir.path()), (std::vector<std::string>{"target", "target/keep"}));
}

TEST(PendingFile, PiecesAppearTogetherAtTheCommit) {
  const TempDir dir;
  const auto target = dir.path() / "sub" / "out.json";
  auto pending = PendingFile::create(target, Overwrite::forbidden);
  ASSERT_TRUE(pending) << pending.error().message;
  std::string expected;
  for (int i = 0; i < 40; ++i) {
    const std::string piece(64 * 1024, static_cast<char>('a' + i % 26)); // past the write-back step
    expected += piece;
    EXPECT_FALSE(pending->append(piece).has_value());
    EXPECT_FALSE(std::filesystem::exists(target)) << "visible before the commit";
  }
  const auto written = pending->commit();
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(*written, target);
  EXPECT_EQ(read_file(target), expected);
  EXPECT_TRUE(testing::temporaries_below(dir.path()).empty());
  EXPECT_EQ(pending->commit().error().code, codes::k_io_write) << "a second commit";
}

TEST(PendingFile, OneDroppedWithoutCommitLeavesNothing) {
  const TempDir dir;
  {
    auto pending = PendingFile::create(dir.path() / "out.json", Overwrite::allowed);
    ASSERT_TRUE(pending);
    EXPECT_FALSE(pending->append("half a file").has_value());
    EXPECT_EQ(testing::temporaries_below(dir.path()).size(), 1U);
  }
  EXPECT_TRUE(tree(dir.path()).empty());
}

TEST(PendingFile, ATakenNameIsReportExistsAndIsLeftAlone) {
  const TempDir dir;
  const auto target = dir.path() / "report.json";
  auto pending = PendingFile::create(target, Overwrite::forbidden);
  ASSERT_TRUE(pending);
  EXPECT_FALSE(pending->append("new").has_value());
  std::ofstream(target) << "old"; // appeared meanwhile
  const auto written = pending->commit();
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().code, codes::k_report_exists);
  EXPECT_EQ(read_file(target), "old");
  EXPECT_TRUE(testing::temporaries_below(dir.path()).empty());
}

// link_as() puts one synced file under names of the caller's choosing, never over an existing one;
// unlink_linked() takes a name back; commit_linked() removes the temporary and keeps the names.
TEST(PendingFile, LinkedUnderChosenNamesNeverOverAnExistingOne) {
  const TempDir dir;
  auto pending = PendingFile::create(dir.path() / "a.json", Overwrite::forbidden);
  ASSERT_TRUE(pending);
  EXPECT_FALSE(pending->append("content").has_value());
  std::ofstream(dir.path() / "a.json") << "old";
  const auto taken = pending->link_as(dir.path() / "a.json");
  ASSERT_TRUE(taken);
  EXPECT_EQ(*taken, PendingFile::LinkOutcome::name_taken);
  EXPECT_EQ(read_file(dir.path() / "a.json"), "old");
  for (const char* name : {"b.json", "c.json"}) {
    const auto linked = pending->link_as(dir.path() / name);
    ASSERT_TRUE(linked);
    EXPECT_EQ(*linked, PendingFile::LinkOutcome::linked);
  }
  pending->unlink_linked(dir.path() / "c.json");
  EXPECT_EQ(testing::temporaries_below(dir.path()).size(), 1U);
  EXPECT_FALSE(pending->commit_linked().has_value());
  EXPECT_EQ(tree(dir.path()), (std::vector<std::string>{"a.json", "b.json"}));
  EXPECT_EQ(read_file(dir.path() / "b.json"), "content");
  EXPECT_FALSE(pending->link_as(dir.path() / "d.json"));
}

// A file that was never linked has nothing to commit on that path; commit() after link_as() is
// refused, so one file is never both renamed and linked.
TEST(PendingFile, TheLinkedPathAndTheCommitPathDoNotMix) {
  const TempDir dir;
  auto never_linked = PendingFile::create(dir.path() / "a.json", Overwrite::forbidden);
  ASSERT_TRUE(never_linked);
  const auto refused = never_linked->commit_linked();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code, codes::k_io_write);
  auto linked = PendingFile::create(dir.path() / "b.json", Overwrite::forbidden);
  ASSERT_TRUE(linked);
  ASSERT_TRUE(linked->link_as(dir.path() / "c.json"));
  const auto committed = linked->commit();
  ASSERT_FALSE(committed);
  EXPECT_EQ(committed.error().code, codes::k_io_write);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "b.json"));
}

// A write that fails (here: past the file-size limit) drops the file; the commit then fails and
// nothing is left.
TEST(PendingFile, AFailedAppendDropsTheFile) {
  const TempDir dir;
  const auto target = dir.path() / "out.json";
  auto pending = PendingFile::create(target, Overwrite::allowed);
  ASSERT_TRUE(pending);
  const auto failed = [&] {
    const testing::FileSizeLimit limit(1000);
    return pending->append(std::string(4000, 'x'));
  }();
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->code, codes::k_io_write);
  EXPECT_TRUE(pending->append("more").has_value());
  EXPECT_FALSE(pending->commit());
  EXPECT_TRUE(tree(dir.path()).empty());
}

TEST(AtomicFile, TargetInTheWorkingDirectory) {
  const TempDir dir;
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  auto written = write_file_atomically("plain.txt", "here", Overwrite::forbidden);
  std::filesystem::current_path(previous);
  ASSERT_TRUE(written.has_value()) << written.error().message;
  EXPECT_EQ(read_file(dir.path() / "plain.txt"), "here");
  EXPECT_EQ(tree(dir.path()), std::vector<std::string>{"plain.txt"});
}

} // namespace
} // namespace fib

namespace fib {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::tree;

TEST(AtomicFileBelow, CreatesDirectoriesAndWrites) {
  const TempDir dir;
  auto written = write_file_atomically_below(dir.path(), "definitions/op/x.json", "{}",
                                             Overwrite::forbidden, CreateMissing::yes);
  ASSERT_TRUE(written.has_value()) << written.error().message;
  EXPECT_EQ(read_file(dir.path() / "definitions/op/x.json"), "{}");
  EXPECT_EQ(tree(dir.path()),
            (std::vector<std::string>{"definitions", "definitions/op", "definitions/op/x.json"}));
}

TEST(AtomicFileBelow, MissingDirectoryWithoutCreateIsAnError) {
  const TempDir dir;
  auto written = write_file_atomically_below(dir.path(), "a/b.json", "{}", Overwrite::allowed,
                                             CreateMissing::no);
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().code, codes::k_io_write);
  EXPECT_TRUE(tree(dir.path()).empty());
}

TEST(AtomicFileBelow, ALinkedDirectoryIsRefused) {
  const TempDir dir;
  const TempDir outside;
  std::filesystem::create_directory_symlink(outside.path(), dir.path() / "a");
  auto written = write_file_atomically_below(dir.path(), "a/b.json", "{}", Overwrite::allowed,
                                             CreateMissing::yes);
  ASSERT_FALSE(written.has_value());
  EXPECT_EQ(written.error().code, codes::k_io_unsafe_path);
  EXPECT_NE(written.error().message.find("symbolic link"), std::string::npos);
  EXPECT_TRUE(tree(outside.path()).empty());
}

TEST(AtomicFileBelow, PathsLeavingTheRootAreRefused) {
  const TempDir dir;
  for (const char* relative : {"../x.json", "a/../../x.json", "/tmp/x.json"}) {
    auto written = write_file_atomically_below(dir.path() / "root", relative, "{}",
                                               Overwrite::allowed, CreateMissing::yes);
    ASSERT_FALSE(written.has_value()) << relative;
    EXPECT_EQ(written.error().code, codes::k_io_unsafe_path) << relative;
  }
  EXPECT_TRUE(tree(dir.path()).empty());
}

TEST(AtomicFileBelow, ReplacingALinkedFileReplacesTheLinkNotItsTarget) {
  const TempDir dir;
  const auto outside = dir.write("outside.json", "old");
  std::filesystem::create_directories(dir.path() / "root");
  std::filesystem::create_symlink(outside, dir.path() / "root/x.json");
  auto written = write_file_atomically_below(dir.path() / "root", "x.json", "new",
                                             Overwrite::allowed, CreateMissing::no);
  ASSERT_TRUE(written.has_value()) << written.error().message;
  EXPECT_EQ(read_file(outside), "old");
  EXPECT_FALSE(std::filesystem::is_symlink(dir.path() / "root/x.json"));
  EXPECT_EQ(read_file(dir.path() / "root/x.json"), "new");
}

TEST(AtomicFileIn, ReadingALinkIsRefused) {
  const TempDir dir;
  const auto outside = dir.write("outside.json", "secret");
  std::filesystem::create_directories(dir.path() / "root");
  std::filesystem::create_symlink(outside, dir.path() / "root/x.json");
  auto root = open_directory(dir.path() / "root");
  ASSERT_TRUE(root.has_value());
  auto text = read_file_in(*root, "x.json", 1024);
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code, codes::k_io_unsafe_path);
  auto missing = read_file_in(*root, "y.json", 1024);
  ASSERT_TRUE(missing.has_value());
  EXPECT_FALSE(missing->has_value());
}

} // namespace
} // namespace fib
