// list_files_below: sorted, by extension, links to directories not followed, report files left out.

#include "test_support.hpp"

#include "util/file_walk.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace fib {
namespace {

std::vector<std::string> relative(const std::vector<std::filesystem::path>& files,
                                  const std::filesystem::path& root) {
  std::vector<std::string> out;
  for (const auto& file : files) {
    out.push_back(file.lexically_relative(root).generic_string());
  }
  return out;
}

TEST(FileWalk, SortedFilesOfTheExtensionsAsked) {
  testing::TempDir dir;
  dir.write("b/z.json", "{}");
  dir.write("a.json", "{}");
  dir.write("b/y.jsonl", "");
  dir.write("b/notes.txt", "");
  dir.write("reports/report-20260101-000000.json", "{}");
  dir.write("reports/kept.json", "{}");
  const auto listed = detail::list_files_below(dir.path(), {".json", ".jsonl"});
  ASSERT_FALSE(listed.error.has_value());
  EXPECT_EQ(relative(listed.files, dir.path()),
            (std::vector<std::string>{"a.json", "b/y.jsonl", "b/z.json", "reports/kept.json"}));
}

TEST(FileWalk, LinksToDirectoriesAreNotFollowed) {
  testing::TempDir dir;
  testing::TempDir outside;
  outside.write("secret.json", "{}");
  dir.write("in.json", "{}");
  std::filesystem::create_directory_symlink(outside.path(), dir.path() / "link");
  const auto listed = detail::list_files_below(dir.path(), {".json"});
  EXPECT_EQ(relative(listed.files, dir.path()), (std::vector<std::string>{"in.json"}));
}

TEST(FileWalk, AMissingDirectoryIsAnIoError) {
  testing::TempDir dir;
  const auto listed = detail::list_files_below(dir.path() / "absent", {".json"});
  ASSERT_TRUE(listed.error.has_value());
  EXPECT_EQ(listed.error->code, "io.read");
  EXPECT_TRUE(listed.files.empty());
}

} // namespace
} // namespace fib
