// DirectoryListings: each directory is listed once per memo, whoever asks first, and every caller
// (on any thread) gets that one listing; listings are sorted by name; a failure is kept with the
// listing. And two walks of one tree through one memo find what each finds alone.

#include "test_support.hpp"

#include "util/file_walk.hpp"

#include <fib/model/dataset_layout.hpp>
#include <fib/util/directory_listings.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <latch>
#include <string>
#include <thread>
#include <vector>

namespace fib {
namespace {

std::vector<std::string> names_of(const DirectoryListing& listing) {
  std::vector<std::string> names;
  for (const auto& entry : listing.entries) {
    names.push_back(entry.name);
  }
  return names;
}

TEST(DirectoryListings, SortedByNameAndTypedFromTheListing) {
  testing::TempDir dir;
  dir.write("b.json", "{}");
  dir.write("B.json", "{}");
  dir.write("a/x.json", "{}");
  const DirectoryListing listing = list_directory_sorted(dir.path());
  EXPECT_FALSE(listing.error);
  EXPECT_EQ(names_of(listing), (std::vector<std::string>{"B.json", "a", "b.json"}));
  EXPECT_EQ(listing.entries[1].type, std::filesystem::file_type::directory);
  EXPECT_EQ(listing.entries[2].type, std::filesystem::file_type::regular);
}

TEST(DirectoryListings, ADirectoryIsListedOnceAndTheMemoKeepsThatListing) {
  testing::TempDir dir;
  dir.write("one.json", "{}");
  DirectoryListings listings;
  const auto first = listings.of(dir.path());
  dir.write("two.json", "{}");
  const auto again = listings.of(dir.path());
  EXPECT_EQ(again.get(), first.get()); // the same listing, not a second one
  EXPECT_EQ(names_of(*again), (std::vector<std::string>{"one.json"}));
  // A new memo (a new run) sees the change; so does a listing without a memo.
  DirectoryListings next_run;
  EXPECT_EQ(names_of(*next_run.of(dir.path())), (std::vector<std::string>{"one.json", "two.json"}));
  EXPECT_EQ(names_of(*listing_of(dir.path(), nullptr)),
            (std::vector<std::string>{"one.json", "two.json"}));
}

TEST(DirectoryListings, CallersOnManyThreadsShareOneListing) {
  testing::TempDir dir;
  for (int i = 0; i < 200; ++i) {
    dir.write(fmt::format("f{}.json", i), "{}");
  }
  DirectoryListings listings;
  std::vector<const DirectoryListing*> seen(8, nullptr);
  std::vector<std::shared_ptr<const DirectoryListing>> kept(8);
  {
    // All ask at once (the latch), so that some wait for the listing another is making.
    std::latch start(static_cast<std::ptrdiff_t>(seen.size()));
    std::vector<std::jthread> threads;
    for (std::size_t t = 0; t < seen.size(); ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        kept[t] = listings.of(dir.path());
        seen[t] = kept[t].get();
      });
    }
  }
  for (std::size_t t = 0; t < seen.size(); ++t) {
    EXPECT_EQ(seen[t], seen[0]) << "thread " << t;
  }
  EXPECT_EQ(seen[0]->entries.size(), 200u);
}

TEST(DirectoryListings, AFailureIsKeptWithTheListing) {
  testing::TempDir dir;
  DirectoryListings listings;
  const auto missing = listings.of(dir.path() / "absent");
  EXPECT_EQ(missing->error, std::errc::no_such_file_or_directory);
  EXPECT_TRUE(missing->entries.empty());
  dir.write("file.json", "{}");
  const auto not_a_directory = listings.of(dir.path() / "file.json");
  EXPECT_EQ(not_a_directory->error, std::errc::not_a_directory);
}

// The dataset scan and the look at every file below the root walk one tree at the same time
// through one memo (as `fib validate --dataset` does): each finds exactly what it finds alone.
TEST(DirectoryListings, TwoWalksThroughOneMemoFindWhatEachFindsAlone) {
  testing::TempDir dir;
  for (int i = 0; i < 30; ++i) {
    dir.write(fmt::format("definitions/op{}/d{}.json", i % 4, i), "{}");
    dir.write(fmt::format("solutions/author/op{}/d{}/s.json", i % 4, i), "{}");
    dir.write(fmt::format("workloads/op{}/d{}.jsonl", i % 4, i), "");
  }
  dir.write("definitions/op0/deeper/wrong_depth.json", "{}");
  dir.write("notes/x.json", "{}");
  const TreeScan definitions_alone =
      scan_tree(dir.path(), DatasetTree::definitions, ScanMode::validator);
  const TreeScan solutions_alone =
      scan_tree(dir.path(), DatasetTree::solutions, ScanMode::validator);
  const detail::FilesBelow files_alone = detail::list_files_below(dir.path(), {".json", ".jsonl"});

  DirectoryListings listings;
  TreeScan definitions;
  TreeScan solutions;
  detail::FilesBelow files;
  {
    std::jthread scan([&] {
      definitions = scan_tree(dir.path(), DatasetTree::definitions, ScanMode::validator, &listings);
      solutions = scan_tree(dir.path(), DatasetTree::solutions, ScanMode::validator, &listings);
    });
    files = detail::list_files_below(dir.path(), {".json", ".jsonl"}, &listings);
  }
  const auto paths = [](const TreeScan& scan) {
    std::vector<std::filesystem::path> out;
    for (const auto& entry : scan.entries) {
      out.push_back(entry.path);
    }
    for (const auto& skipped : scan.skipped) {
      out.push_back(skipped.path);
    }
    return out;
  };
  EXPECT_EQ(paths(definitions), paths(definitions_alone));
  EXPECT_EQ(paths(solutions), paths(solutions_alone));
  EXPECT_EQ(files.files, files_alone.files);
  EXPECT_EQ(files.files.size(), 30u * 3 + 2);
  EXPECT_EQ(definitions.entries.size(), 30u);
  EXPECT_FALSE(definitions.skipped.empty()); // the file at the wrong depth
}

} // namespace
} // namespace fib
