// list_files_below: sorted, by extension, links to directories not followed, report files left out;
// the same in either walk order, also when two walks share their listings.

#include "test_support.hpp"

#include "util/file_walk.hpp"

#include <fib/base/codes.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>
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
  EXPECT_TRUE(listed.errors.empty());
  EXPECT_EQ(relative(listed.files, dir.path()),
            (std::vector<std::string>{"a.json", "b/y.jsonl", "b/z.json", "reports/kept.json"}));
}

// The extension is std::filesystem::path's: a bare ".json" has none, "..json" has ".json"; and a
// report is skipped only in a directory named "reports", also when the directory is given with a
// trailing slash.
TEST(FileWalk, ExtensionsAsThePathHasThemAndReportsOnlyInReports) {
  testing::TempDir dir;
  dir.write("reports/.json", "{}");
  dir.write("reports/..json", "{}");
  dir.write("reports/report-1.json", "{}");
  dir.write("other/report-1.json", "{}");
  const auto listed = detail::list_files_below(dir.path() / "reports/", {".json"});
  EXPECT_EQ(relative(listed.files, dir.path()), (std::vector<std::string>{"reports/..json"}));
  const auto other = detail::list_files_below(dir.path() / "other", {".json"});
  EXPECT_EQ(relative(other.files, dir.path()), (std::vector<std::string>{"other/report-1.json"}));
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
  ASSERT_EQ(listed.errors.size(), 1u);
  EXPECT_EQ(listed.errors[0].code, "io.read");
  EXPECT_EQ(listed.errors[0].file, dir.path() / "absent");
  EXPECT_TRUE(listed.files.empty());
}

TEST(FileWalk, AnUnlistableSubdirectoryIsAnErrorOfItsOwnAndTheWalkGoesOn) {
  testing::TempDir dir;
  dir.write("a/x.json", "{}");
  dir.write("b/hidden.json", "{}");
  dir.write("c/y.json", "{}");
  const testing::RestrictedDirectory unlistable(dir.path() / "b", testing::Restriction::unlistable);
  if (!unlistable.works()) {
    GTEST_SKIP() << "this process lists a mode-000 directory anyway";
  }
  const auto listed = detail::list_files_below(dir.path(), {".json"});
  EXPECT_EQ(relative(listed.files, dir.path()), (std::vector<std::string>{"a/x.json", "c/y.json"}));
  ASSERT_EQ(listed.errors.size(), 1u);
  EXPECT_EQ(listed.errors[0].code, "io.read");
  EXPECT_EQ(listed.errors[0].file, dir.path() / "b");
  EXPECT_EQ(exit_class_of(listed.errors[0]), ExitClass::environment);
  EXPECT_NE(listed.errors[0].message.find("Permission denied"), std::string::npos)
      << listed.errors[0].message;
  const auto descending =
      detail::list_files_below(dir.path(), {".json"}, nullptr, detail::WalkOrder::names_descending);
  EXPECT_EQ(descending.files, listed.files);
  ASSERT_EQ(descending.errors.size(), 1u);
  EXPECT_EQ(descending.errors[0].file, dir.path() / "b");
}

// Descending name order finds what ascending order finds, in the same (sorted) order, on a tree
// whose directories hold files and subdirectories side by side; two walks in opposite orders that
// share one DirectoryListings, on two threads at once, each find it too.
TEST(FileWalk, EitherOrderFindsTheSameFilesInTheSameOrder) {
  testing::TempDir dir;
  for (const char* file : {"a.json", "b/c/d.json", "b/c.json", "b/c/e/f.jsonl", "b/z.json",
                           "b0.json", "c/a.json", "c/b/a.json", "c/b/b.txt", "d.jsonl"}) {
    dir.write(file, "{}");
  }
  // Component by component, in byte order: the directory "c" comes before the file "c.json".
  const std::vector<std::string> expected = {"a.json",   "b/c/d.json", "b/c/e/f.jsonl",
                                             "b/c.json", "b/z.json",   "b0.json",
                                             "c/a.json", "c/b/a.json", "d.jsonl"};
  const auto ascending = detail::list_files_below(dir.path(), {".json", ".jsonl"});
  EXPECT_EQ(relative(ascending.files, dir.path()), expected);
  const auto descending = detail::list_files_below(dir.path(), {".json", ".jsonl"}, nullptr,
                                                   detail::WalkOrder::names_descending);
  EXPECT_EQ(relative(descending.files, dir.path()), expected);
  EXPECT_TRUE(descending.errors.empty());

  DirectoryListings listings;
  detail::FilesBelow up;
  detail::FilesBelow down;
  std::thread first([&] {
    up = detail::list_files_below(dir.path(), {".json", ".jsonl"}, &listings,
                                  detail::WalkOrder::names_ascending);
  });
  std::thread second([&] {
    down = detail::list_files_below(dir.path(), {".json", ".jsonl"}, &listings,
                                    detail::WalkOrder::names_descending);
  });
  first.join();
  second.join();
  EXPECT_EQ(relative(up.files, dir.path()), expected);
  EXPECT_EQ(relative(down.files, dir.path()), expected);
}

} // namespace
} // namespace fib
