#include "test_support.hpp"

#include <fib/model/dataset_layout.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace fib {
namespace {

using testing::TempDir;
using Paths = std::vector<std::string>;

// Relative paths (generic form) of the entries of a scan.
Paths entries_of(const TreeScan& scan) {
  Paths out;
  for (const LayoutEntry& entry : scan.entries) {
    out.push_back(entry.relative.generic_string());
  }
  return out;
}

// (path relative to `root`, reason) of the skipped entries of a scan.
std::vector<std::pair<std::string, SkipReason>> skipped_of(const TreeScan& scan,
                                                           const std::filesystem::path& root) {
  std::vector<std::pair<std::string, SkipReason>> out;
  for (const SkippedEntry& entry : scan.skipped) {
    out.emplace_back(entry.path.lexically_relative(root).generic_string(), entry.reason);
  }
  return out;
}

// A definitions/ tree with one of each case the modes disagree on.
struct Definitions {
  TempDir dir;
  TempDir outside;

  Definitions() {
    for (const char* file :
         {"definitions/gemm/b.json", "definitions/gemm/a.json", "definitions/rms/a.json",
          "definitions/gemm/.json", "definitions/gemm/notes.txt", "definitions/gemm/deep/c.json",
          "definitions/gemm/dir.json/x.txt", "definitions/top.json"}) {
      dir.write(file, "{}");
    }
    outside.write("op/z.json", "{}");
    const auto target = outside.write("target.json", "{}");
    std::filesystem::create_directory_symlink(outside.path() / "op",
                                              dir.path() / "definitions/linked");
    std::filesystem::create_symlink(target, dir.path() / "definitions/gemm/link.json");
    std::filesystem::create_symlink(outside.path() / "nowhere.json",
                                    dir.path() / "definitions/gemm/dangling.json");
  }

  TreeScan scan(ScanMode mode) const {
    return scan_tree(dir.path(), DatasetTree::definitions, mode);
  }
};

TEST(DatasetLayout, TreesAndPatterns) {
  EXPECT_EQ(layout_of(DatasetTree::definitions).directory, "definitions");
  EXPECT_EQ(layout_of(DatasetTree::definitions).extension, ".json");
  EXPECT_EQ(layout_of(DatasetTree::definitions).depth, 2u);
  EXPECT_EQ(layout_of(DatasetTree::workloads).extension, ".jsonl");
  EXPECT_EQ(layout_of(DatasetTree::workloads).depth, 2u);
  EXPECT_EQ(layout_of(DatasetTree::solutions).depth, 4u);
  EXPECT_EQ(layout_of(DatasetTree::traces).extension, ".jsonl");
  EXPECT_EQ(layout_of(DatasetTree::traces).depth, 3u);
  EXPECT_EQ(layout_of(DatasetTree::blob).directory, "blob");
  for (const auto& entry : EnumNames<DatasetTree>::k_table) {
    EXPECT_EQ(layout_of(entry.value).tree, entry.value);
    EXPECT_EQ(layout_of(entry.value).directory, entry.name);
  }
  EXPECT_EQ(definition_path("gemm", "gemm_n4096").generic_string(),
            "definitions/gemm/gemm_n4096.json");
}

TEST(DatasetLayout, KeysFromThePlaceOfAFile) {
  const LayoutKeys definition = layout_keys(DatasetTree::definitions, {"gemm", "g.v2.json"});
  EXPECT_EQ(definition.op_type, "gemm");
  EXPECT_EQ(definition.name, "g.v2");
  EXPECT_EQ(definition.author, "");
  const LayoutKeys solution =
      layout_keys(DatasetTree::solutions, {"alice", "gemm", "gemm_n", "fast.json"});
  EXPECT_EQ(solution.author, "alice");
  EXPECT_EQ(solution.op_type, "gemm");
  EXPECT_EQ(solution.definition, "gemm_n");
  EXPECT_EQ(solution.name, "fast");
  const LayoutKeys trace = layout_keys(DatasetTree::traces, {"bob", "rms", "r.jsonl"});
  EXPECT_EQ(trace.author, "bob");
  EXPECT_EQ(trace.op_type, "rms");
  EXPECT_EQ(trace.name, "r");
  EXPECT_EQ(trace.definition, "");
  // Not the tree's depth: no keys.
  EXPECT_EQ(layout_keys(DatasetTree::workloads, {"w.jsonl"}).name, "");
}

// The name key is std::filesystem::path's stem of the file name, for the awkward names too.
TEST(DatasetLayout, TheNameKeyIsThePathStem) {
  for (const std::string name : {"a.json", ".json", "..json", "a..json", "a.b.c.json", "noext", ".",
                                 "..", "...", "a.", ".a.json"}) {
    EXPECT_EQ(layout_keys(DatasetTree::definitions, {"op", name}).name,
              std::filesystem::path(name).stem().string())
        << name;
  }
}

TEST(DatasetLayout, ValidatorModeTakesTheExactDepthAndRecordsTheRest) {
  const Definitions d;
  const TreeScan scan = d.scan(ScanMode::validator);
  // A bare `.json`, a directory named like a file and a dangling link all match, as with rglob;
  // the linked directory is not entered. Duplicate stems are both listed.
  EXPECT_EQ(entries_of(scan),
            (Paths{"definitions/gemm/.json", "definitions/gemm/a.json", "definitions/gemm/b.json",
                   "definitions/gemm/dangling.json", "definitions/gemm/dir.json",
                   "definitions/gemm/link.json", "definitions/rms/a.json"}));
  const auto root = d.dir.path();
  EXPECT_EQ(skipped_of(scan, root),
            (std::vector<std::pair<std::string, SkipReason>>{
                {"definitions/gemm/deep/c.json", SkipReason::wrong_depth},
                {"definitions/gemm/dir.json/x.txt", SkipReason::wrong_extension},
                {"definitions/gemm/notes.txt", SkipReason::wrong_extension},
                {"definitions/top.json", SkipReason::wrong_depth}}));
  EXPECT_TRUE(scan.failures.empty());
  ASSERT_FALSE(scan.entries.empty());
  EXPECT_EQ(scan.entries[1].path, root / "definitions/gemm/a.json");
  EXPECT_EQ(scan.entries[1].components, (Paths{"gemm", "a.json"}));
}

TEST(DatasetLayout, TraceSetModeTakesAnyDepth) {
  const Definitions d;
  const TreeScan scan = d.scan(ScanMode::trace_set);
  EXPECT_EQ(entries_of(scan),
            (Paths{"definitions/gemm/.json", "definitions/gemm/a.json", "definitions/gemm/b.json",
                   "definitions/gemm/dangling.json", "definitions/gemm/deep/c.json",
                   "definitions/gemm/dir.json", "definitions/gemm/link.json",
                   "definitions/rms/a.json", "definitions/top.json"}));
  EXPECT_TRUE(scan.skipped.empty());
}

TEST(DatasetLayout, StrictModeTakesRegularFilesOfTheLayoutOnly) {
  const Definitions d;
  const TreeScan scan = d.scan(ScanMode::strict);
  // A link to a regular file counts; a dangling link, a directory and a bare `.json` do not.
  EXPECT_EQ(entries_of(scan), (Paths{"definitions/gemm/a.json", "definitions/gemm/b.json",
                                     "definitions/gemm/link.json", "definitions/rms/a.json"}));
  EXPECT_TRUE(scan.skipped.empty());
  EXPECT_TRUE(scan.failures.empty());
}

TEST(DatasetLayout, OccupancyModeCountsEveryEntryThatTakesAName) {
  const Definitions d;
  const TreeScan scan = d.scan(ScanMode::occupancy);
  EXPECT_EQ(entries_of(scan), (Paths{"definitions/gemm/a.json", "definitions/gemm/b.json",
                                     "definitions/gemm/dangling.json", "definitions/gemm/dir.json",
                                     "definitions/gemm/link.json", "definitions/rms/a.json"}));
  EXPECT_TRUE(scan.skipped.empty());
}

TEST(DatasetLayout, CopyModeTakesRegularFilesAndSkipsLinks) {
  const Definitions d;
  const TreeScan scan = d.scan(ScanMode::copy);
  EXPECT_EQ(
      entries_of(scan),
      (Paths{"definitions/gemm/.json", "definitions/gemm/a.json", "definitions/gemm/b.json",
             "definitions/gemm/deep/c.json", "definitions/gemm/dir.json/x.txt",
             "definitions/gemm/notes.txt", "definitions/rms/a.json", "definitions/top.json"}));
  EXPECT_EQ(skipped_of(scan, d.dir.path()),
            (std::vector<std::pair<std::string, SkipReason>>{
                {"definitions/gemm/dangling.json", SkipReason::symbolic_link},
                {"definitions/gemm/link.json", SkipReason::symbolic_link},
                {"definitions/linked", SkipReason::symbolic_link}}));
}

TEST(DatasetLayout, ALinkedTreeDirectoryIsFollowedExceptByCopy) {
  const TempDir dir;
  const TempDir outside;
  outside.write("gemm/a.json", "{}");
  std::filesystem::create_directory_symlink(outside.path(), dir.path() / "definitions");
  for (const ScanMode mode :
       {ScanMode::validator, ScanMode::trace_set, ScanMode::strict, ScanMode::occupancy}) {
    const TreeScan scan = scan_tree(dir.path(), DatasetTree::definitions, mode);
    EXPECT_EQ(entries_of(scan), (Paths{"definitions/gemm/a.json"}));
    ASSERT_EQ(scan.entries.size(), 1u);
    EXPECT_EQ(scan.entries[0].path, dir.path() / "definitions/gemm/a.json");
  }
  const TreeScan copy = scan_tree(dir.path(), DatasetTree::definitions, ScanMode::copy);
  EXPECT_TRUE(copy.entries.empty());
  EXPECT_EQ(skipped_of(copy, dir.path()), (std::vector<std::pair<std::string, SkipReason>>{
                                              {"definitions", SkipReason::symbolic_link}}));
}

TEST(DatasetLayout, AMissingTreeIsEmpty) {
  const TempDir dir;
  dir.write("definitions/gemm/a.json", "{}");
  for (const ScanMode mode : {ScanMode::validator, ScanMode::trace_set, ScanMode::strict,
                              ScanMode::occupancy, ScanMode::copy}) {
    const TreeScan scan = scan_tree(dir.path(), DatasetTree::traces, mode);
    EXPECT_TRUE(scan.entries.empty());
    EXPECT_TRUE(scan.skipped.empty());
    EXPECT_TRUE(scan.failures.empty());
  }
}

TEST(DatasetLayout, SortingIsComponentWiseByByte) {
  const TempDir dir;
  for (const char* file :
       {"traces/a.jsonl", "traces/a-b.jsonl", "traces/a/x.jsonl", "traces/B.jsonl"}) {
    dir.write(file, "");
  }
  // A plain string sort would put "a/x.jsonl" last ('/' sorts after '-' and '.').
  EXPECT_EQ(entries_of(scan_tree(dir.path(), DatasetTree::traces, ScanMode::trace_set)),
            (Paths{"traces/B.jsonl", "traces/a/x.jsonl", "traces/a-b.jsonl", "traces/a.jsonl"}));
}

TEST(DatasetLayout, WrongExtensionOfAnotherTree) {
  const TempDir dir;
  dir.write("workloads/gemm/w.json", "");
  dir.write("workloads/gemm/w.jsonl", "");
  const TreeScan scan = scan_tree(dir.path(), DatasetTree::workloads, ScanMode::validator);
  EXPECT_EQ(entries_of(scan), (Paths{"workloads/gemm/w.jsonl"}));
  EXPECT_EQ(skipped_of(scan, dir.path()),
            (std::vector<std::pair<std::string, SkipReason>>{
                {"workloads/gemm/w.json", SkipReason::wrong_extension}}));
}

TEST(DatasetLayout, SolutionsAreFourLevelsDown) {
  const TempDir dir;
  dir.write("solutions/alice/gemm/gemm_n/fast.json", "{}");
  dir.write("solutions/alice/gemm/fast.json", "{}");
  dir.write("solutions/bob/gemm/gemm_n/fast.json", "{}"); // the same stem, another author
  const TreeScan scan = scan_tree(dir.path(), DatasetTree::solutions, ScanMode::validator);
  EXPECT_EQ(entries_of(scan), (Paths{"solutions/alice/gemm/gemm_n/fast.json",
                                     "solutions/bob/gemm/gemm_n/fast.json"}));
  EXPECT_EQ(skipped_of(scan, dir.path()),
            (std::vector<std::pair<std::string, SkipReason>>{
                {"solutions/alice/gemm/fast.json", SkipReason::wrong_depth}}));
  ASSERT_EQ(scan.entries.size(), 2u);
  EXPECT_EQ(layout_keys(DatasetTree::solutions, scan.entries[1].components).author, "bob");
}

// No mode skips a directory it cannot list: each reports that directory (not its tree), and
// every mode but `copy` goes on with the others.
TEST(DatasetLayout, AnUnlistableDirectoryIsAFailureOfItselfInEveryMode) {
  for (const ScanMode mode : {ScanMode::validator, ScanMode::trace_set, ScanMode::strict,
                              ScanMode::occupancy, ScanMode::copy}) {
    TempDir dir;
    dir.write("definitions/a/x.json", "{}");
    dir.write("definitions/b/hidden.json", "{}");
    dir.write("definitions/c/y.json", "{}");
    const testing::RestrictedDirectory unlistable(dir.path() / "definitions/b",
                                                  testing::Restriction::unlistable);
    if (!unlistable.works()) {
      GTEST_SKIP() << "this process lists a mode-000 directory anyway";
    }
    const TreeScan scan = scan_tree(dir.path(), DatasetTree::definitions, mode);
    ASSERT_EQ(scan.failures.size(), 1u) << static_cast<int>(mode);
    EXPECT_EQ(scan.failures[0].directory, dir.path() / "definitions/b");
    EXPECT_EQ(scan.failures[0].error, std::errc::permission_denied);
    const Paths expected = mode == ScanMode::copy
                               ? Paths{"definitions/a/x.json"}
                               : Paths{"definitions/a/x.json", "definitions/c/y.json"};
    EXPECT_EQ(entries_of(scan), expected) << static_cast<int>(mode);
  }
}

// A root that cannot be searched is no empty tree.
TEST(DatasetLayout, ARootThatCannotBeSearchedIsAFailureOfTheTreeDirectory) {
  for (const ScanMode mode : {ScanMode::validator, ScanMode::copy}) {
    TempDir dir;
    dir.write("ds/definitions/a/x.json", "{}");
    const testing::RestrictedDirectory unlistable(dir.path() / "ds",
                                                  testing::Restriction::unlistable);
    if (!unlistable.works()) {
      GTEST_SKIP() << "this process lists a mode-000 directory anyway";
    }
    const TreeScan scan = scan_tree(dir.path() / "ds", DatasetTree::definitions, mode);
    ASSERT_EQ(scan.failures.size(), 1u);
    EXPECT_EQ(scan.failures[0].directory, dir.path() / "ds/definitions");
    EXPECT_TRUE(scan.entries.empty());
  }
}

} // namespace
} // namespace fib

namespace fib {
namespace {

// A stray temporary of an atomic write (`.fib-XXXXXX`, a regular file) is invisible to every mode:
// not an entry, not skipped, so never reported, parsed or copied. An entry of another type with
// such a name is no temporary of fib's and is treated as any other.
TEST(DatasetLayout, AtomicWriteTemporariesAreInvisibleToEveryMode) {
  const TempDir dir;
  dir.write("definitions/gemm/a.json", "{}");
  dir.write("definitions/gemm/.fib-abc123", "{}");
  dir.write("definitions/.fib-XYZ789", "{}");
  dir.write("definitions/gemm/.fib-dir123/x.json", "{}");
  for (const ScanMode mode : {ScanMode::validator, ScanMode::trace_set, ScanMode::strict,
                              ScanMode::occupancy, ScanMode::copy}) {
    const TreeScan scan = scan_tree(dir.path(), DatasetTree::definitions, mode);
    for (const LayoutEntry& entry : scan.entries) {
      EXPECT_EQ(entry.path.filename().string().find(".fib-"), std::string::npos)
          << entry.path << " in mode " << static_cast<int>(mode);
    }
    for (const SkippedEntry& entry : scan.skipped) {
      EXPECT_EQ(entry.path.filename().string().find(".fib-"), std::string::npos)
          << entry.path << " in mode " << static_cast<int>(mode);
    }
  }
  EXPECT_EQ(entries_of(scan_tree(dir.path(), DatasetTree::definitions, ScanMode::copy)),
            (Paths{"definitions/gemm/.fib-dir123/x.json", "definitions/gemm/a.json"}));
  EXPECT_EQ(
      skipped_of(scan_tree(dir.path(), DatasetTree::definitions, ScanMode::validator), dir.path()),
      (std::vector<std::pair<std::string, SkipReason>>{
          {"definitions/gemm/.fib-dir123/x.json", SkipReason::wrong_depth}}));
}

} // namespace
} // namespace fib
