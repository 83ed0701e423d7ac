// `fib report merge`: copies, de-duplication, conflicts, JSON Lines merging and link safety.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/report/merge.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace fib {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;
using testing::tree;

const MergeEntry* find_entry(const MergeResult& result, std::string_view path) {
  for (const MergeEntry& entry : result.entries) {
    if (entry.path.generic_string() == path) {
      return &entry;
    }
  }
  return nullptr;
}

MergeResult merge(const fs::path& output, std::vector<fs::path> inputs, DiagnosticList& sink) {
  MergeOptions options;
  options.output = output;
  options.inputs = std::move(inputs);
  return merge_datasets(options, sink);
}

TEST(Merge, CopiesDeduplicatesAndMergesLines) {
  TempDir dir;
  dir.write("a/definitions/op/d1.json", R"({"name": "d1"})");
  dir.write("a/traces/op/d1.jsonl", "{\"l\": 1}\n{\"l\": 2}\n");
  dir.write("a/blob/workloads/x.safetensors", std::string("bin\0ary", 7));
  dir.write("a/README.md", "not a dataset tree");
  dir.write("b/definitions/op/d1.json", R"({"name": "d1"})");
  dir.write("b/traces/op/d1.jsonl", "{\"l\": 2}\r\n\n{\"l\": 3}\n{\"l\": 3}");
  dir.write("b/solutions/alice/s.json", R"({"name": "s"})");
  dir.write("b/workloads/op/d1.jsonl", "{\"w\": 1}\n");
  DiagnosticList sink;
  const fs::path out = dir.path() / "out" / "nested";
  const MergeResult result = merge(out, {dir.path() / "a", dir.path() / "b"}, sink);
  EXPECT_TRUE(sink.items().empty()) << testing::describe(sink);

  EXPECT_EQ(tree(out),
            (std::vector<std::string>{"blob", "blob/workloads", "blob/workloads/x.safetensors",
                                      "definitions", "definitions/op", "definitions/op/d1.json",
                                      "solutions", "solutions/alice", "solutions/alice/s.json",
                                      "traces", "traces/op", "traces/op/d1.jsonl", "workloads",
                                      "workloads/op", "workloads/op/d1.jsonl"}));
  EXPECT_EQ(read_file(out / "definitions/op/d1.json"), R"({"name": "d1"})");
  EXPECT_EQ(read_file(out / "blob/workloads/x.safetensors"), std::string("bin\0ary", 7));
  EXPECT_EQ(read_file(out / "traces/op/d1.jsonl"), "{\"l\": 1}\n{\"l\": 2}\n{\"l\": 3}\n");

  ASSERT_EQ(result.entries.size(), 5u);
  const MergeEntry* definition = find_entry(result, "definitions/op/d1.json");
  ASSERT_NE(definition, nullptr);
  EXPECT_EQ(definition->action, MergeAction::added);
  EXPECT_EQ(definition->sources.size(), 2u);
  const MergeEntry* traces = find_entry(result, "traces/op/d1.jsonl");
  ASSERT_NE(traces, nullptr);
  EXPECT_EQ(traces->action, MergeAction::merged);
  EXPECT_EQ(traces->lines_added, 3u);
  EXPECT_EQ(traces->duplicate_lines, 2u);
  EXPECT_EQ(find_entry(result, "workloads/op/d1.jsonl")->action, MergeAction::added);
  EXPECT_EQ(result.summary.added, 4u);
  EXPECT_EQ(result.summary.merged, 1u);
  EXPECT_EQ(result.summary.identical_copies, 1u);
  EXPECT_EQ(result.summary.duplicate_lines, 2u);
  EXPECT_EQ(result.summary.conflicts, 0u);
}

TEST(Merge, ADifferingDefinitionIsAConflictAndTheFirstWins) {
  TempDir dir;
  dir.write("a/definitions/op/d1.json", R"({"name": "d1", "description": "first"})");
  dir.write("b/definitions/op/d1.json", R"({"name": "d1", "description": "second"})");
  dir.write("b/definitions/op/d2.json", R"({"name": "d2"})");
  DiagnosticList sink;
  const fs::path out = dir.path() / "out";
  const MergeResult result = merge(out, {dir.path() / "a", dir.path() / "b"}, sink);
  ASSERT_EQ(testing::error_codes(sink), std::vector<std::string>{"merge.conflict"});
  const Diagnostic& d = sink.items()[0];
  EXPECT_EQ(d.file, dir.path() / "b" / "definitions/op/d1.json");
  EXPECT_EQ(d.hint, "differs at /description");
  EXPECT_EQ(read_file(out / "definitions/op/d1.json"), R"({"name": "d1", "description": "first"})");
  EXPECT_EQ(read_file(out / "definitions/op/d2.json"), R"({"name": "d2"})");
  EXPECT_EQ(find_entry(result, "definitions/op/d1.json")->action, MergeAction::conflict);
  EXPECT_TRUE(find_entry(result, "definitions/op/d1.json")->written);
  EXPECT_EQ(result.summary.conflicts, 1u);
  EXPECT_EQ(result.summary.added, 1u);
}

TEST(Merge, FormattingOnlyDifferencesAreStillConflicts) {
  TempDir dir;
  dir.write("a/solutions/s.json", R"({"name": "s"})");
  dir.write("b/solutions/s.json", "{\n  \"name\": \"s\"\n}\n");
  DiagnosticList sink;
  merge(dir.path() / "out", {dir.path() / "a", dir.path() / "b"}, sink);
  ASSERT_EQ(testing::error_codes(sink), std::vector<std::string>{"merge.conflict"});
  EXPECT_EQ(sink.items()[0].hint, "same JSON content, different formatting");
}

TEST(Merge, TheExistingOutputComesFirstAndAMergeIsIdempotent) {
  TempDir dir;
  dir.write("a/traces/t.jsonl", "{\"l\": 1}\n");
  dir.write("a/definitions/d.json", "{}");
  dir.write("out/traces/t.jsonl", "{\"l\": 0}\n");
  dir.write("out/definitions/d.json", "{\"kept\": true}");
  DiagnosticList sink;
  const fs::path out = dir.path() / "out";
  const MergeResult first = merge(out, {dir.path() / "a"}, sink);
  EXPECT_EQ(testing::error_codes(sink), std::vector<std::string>{"merge.conflict"});
  EXPECT_EQ(read_file(out / "traces/t.jsonl"), "{\"l\": 0}\n{\"l\": 1}\n");
  EXPECT_EQ(read_file(out / "definitions/d.json"), "{\"kept\": true}");
  EXPECT_EQ(find_entry(first, "traces/t.jsonl")->action, MergeAction::merged);
  EXPECT_FALSE(find_entry(first, "definitions/d.json")->written);

  dir.write("a/definitions/d.json", "{\"kept\": true}");
  DiagnosticList again_sink;
  const MergeResult again = merge(out, {dir.path() / "a"}, again_sink);
  EXPECT_TRUE(again_sink.items().empty()) << testing::describe(again_sink);
  EXPECT_EQ(again.summary.unchanged, 2u);
  for (const MergeEntry& entry : again.entries) {
    EXPECT_FALSE(entry.written) << entry.path;
  }
}

TEST(Merge, LinksInsideInputsAreNotFollowed) {
  TempDir dir;
  dir.write("secret/definitions/leak.json", "secret");
  dir.write("secret.jsonl", "secret\n");
  dir.write("a/definitions/op/d1.json", "{}");
  fs::create_symlink(dir.path() / "secret/definitions", dir.path() / "a/definitions/linked");
  fs::create_directories(dir.path() / "a/traces");
  fs::create_symlink(dir.path() / "secret.jsonl", dir.path() / "a/traces/t.jsonl");
  dir.write("b/placeholder", "");
  fs::create_symlink(dir.path() / "secret", dir.path() / "b/solutions");
  DiagnosticList sink;
  const fs::path out = dir.path() / "out";
  const MergeResult result = merge(out, {dir.path() / "a", dir.path() / "b"}, sink);
  EXPECT_EQ(testing::error_codes(sink), std::vector<std::string>{});
  EXPECT_EQ(sink.count(Severity::warning), 3u) << testing::describe(sink);
  EXPECT_TRUE(sink.contains(codes::k_merge_not_copied));
  EXPECT_EQ(result.summary.not_copied, 3u);
  EXPECT_EQ(tree(out),
            (std::vector<std::string>{"definitions", "definitions/op", "definitions/op/d1.json"}));
}

TEST(Merge, ALinkInsideTheOutputIsNotWrittenThrough) {
  TempDir dir;
  dir.write("a/definitions/op/d1.json", "{}");
  dir.write("a/traces/t.jsonl", "{}\n");
  fs::create_directories(dir.path() / "outside");
  fs::create_directories(dir.path() / "out");
  fs::create_symlink(dir.path() / "outside", dir.path() / "out/definitions");
  DiagnosticList sink;
  const MergeResult result = merge(dir.path() / "out", {dir.path() / "a"}, sink);
  EXPECT_EQ(testing::error_codes(sink), std::vector<std::string>{"io.unsafe-path"});
  EXPECT_TRUE(fs::is_empty(dir.path() / "outside"));
  EXPECT_EQ(find_entry(result, "definitions/op/d1.json")->action, MergeAction::failed);
  EXPECT_EQ(read_file(dir.path() / "out/traces/t.jsonl"), "{}\n");
  EXPECT_EQ(result.summary.failed, 1u);
  EXPECT_EQ(result.summary.added, 1u);
}

TEST(Merge, TheOutputMayNotOverlapAnInput) {
  TempDir dir;
  dir.write("a/definitions/d.json", "{}");
  dir.write("b/definitions/d.json", "{}");
  const std::vector<std::string> one{"merge.output-is-input"};
  const std::vector<std::string> both{"merge.output-is-input", "merge.output-is-input"};
  const std::vector<std::pair<fs::path, std::vector<std::string>>> cases{
      {dir.path() / "a", one},
      {dir.path() / "a" / "merged", one},
      {dir.path() / "b" / ".." / "a", one},
      {dir.path(), both}, // contains both inputs
  };
  for (const auto& [out, expected] : cases) {
    DiagnosticList sink;
    const MergeResult result = merge(out, {dir.path() / "b", dir.path() / "a"}, sink);
    EXPECT_EQ(testing::error_codes(sink), expected) << out;
    EXPECT_TRUE(result.entries.empty());
  }
  EXPECT_FALSE(fs::exists(dir.path() / "a" / "merged"));
  EXPECT_EQ(find_code(codes::k_merge_output_is_input)->exit_class, ExitClass::usage);
}

TEST(Merge, AMissingInputStopsBeforeAnythingIsWritten) {
  TempDir dir;
  dir.write("a/definitions/d.json", "{}");
  DiagnosticList sink;
  const MergeResult result =
      merge(dir.path() / "out", {dir.path() / "a", dir.path() / "missing"}, sink);
  EXPECT_EQ(testing::error_codes(sink), std::vector<std::string>{"io.not-found"});
  EXPECT_TRUE(result.entries.empty());
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

TEST(MergeNames, ActionSpellings) {
  const std::vector<std::pair<MergeAction, std::string_view>> actions = {
      {MergeAction::added, "added"},
      {MergeAction::merged, "merged"},
      {MergeAction::unchanged, "unchanged"},
      {MergeAction::conflict, "conflict"},
      {MergeAction::failed, "failed"}};
  for (const auto& [action, name] : actions) {
    EXPECT_EQ(to_string(action), name);
    EXPECT_EQ(parse_enum<MergeAction>(name), action);
  }
  EXPECT_EQ(parse_enum<MergeAction>("copied"), std::nullopt);
}

} // namespace
} // namespace fib

namespace fib {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;
using testing::temporaries_below;
using testing::tree;

// A stray temporary of a killed atomic write in an input is no file of the dataset: not copied,
// not reported.
TEST(Merge, AtomicWriteTemporariesAreNotCopied) {
  TempDir dir;
  dir.write("a/definitions/op/d1.json", R"({"name": "d1"})");
  dir.write("a/definitions/op/.fib-abc123", R"({"name": "half"})");
  dir.write("a/traces/op/.fib-Zz9876", "{\"l\": 1}\n");
  DiagnosticList sink;
  const fs::path out = dir.path() / "out";
  const MergeResult result = merge(out, {dir.path() / "a"}, sink);
  EXPECT_TRUE(sink.items().empty()) << testing::describe(sink);
  EXPECT_EQ(tree(out),
            (std::vector<std::string>{"definitions", "definitions/op", "definitions/op/d1.json"}));
  EXPECT_EQ(result.entries.size(), 1u);
}

// Killed between writing a temporary and renaming it, a merge leaves the temporary in the output;
// the rerun removes it, writes the complete output, and never reads or copies the temporary.
TEST(Merge, ARerunAfterAKillLeavesNoTemporary) {
  TempDir dir;
  dir.write("a/definitions/op/d1.json", R"({"name": "d1"})");
  dir.write("a/traces/op/d1.jsonl", "{\"l\": 1}\n");
  dir.write("b/traces/op/d1.jsonl", "{\"l\": 2}\n");
  const fs::path out = dir.path() / "out";
  const std::vector<fs::path> inputs{dir.path() / "a", dir.path() / "b"};
  ASSERT_TRUE(testing::dies_in_an_atomic_write([&] {
    DiagnosticList ignored;
    (void)merge(out, inputs, ignored);
  }));
  ASSERT_EQ(temporaries_below(out).size(), 1u);
  DiagnosticList sink;
  const MergeResult result = merge(out, inputs, sink);
  EXPECT_TRUE(sink.items().empty()) << testing::describe(sink);
  EXPECT_TRUE(temporaries_below(out).empty()) << tree(out).size();
  EXPECT_EQ(tree(out),
            (std::vector<std::string>{"definitions", "definitions/op", "definitions/op/d1.json",
                                      "traces", "traces/op", "traces/op/d1.jsonl"}));
  EXPECT_EQ(read_file(out / "definitions/op/d1.json"), R"({"name": "d1"})");
  EXPECT_EQ(read_file(out / "traces/op/d1.jsonl"), "{\"l\": 1}\n{\"l\": 2}\n");
  EXPECT_EQ(result.entries.size(), 2u);
  // Merging the output into a fresh one copies no temporary either (the output is clean anyway).
  DiagnosticList again;
  (void)merge(dir.path() / "copy", {out}, again);
  EXPECT_TRUE(temporaries_below(dir.path() / "copy").empty());
}

} // namespace
} // namespace fib
