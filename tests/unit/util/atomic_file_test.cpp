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
