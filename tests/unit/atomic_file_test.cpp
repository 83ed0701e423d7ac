#include "test_support.hpp"

#include <fib/atomic_file.hpp>
#include <fib/codes.hpp>

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
