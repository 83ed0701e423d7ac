// fib dump --stage --normalize on the real dumps of the corpus (replayed by a harness) into a copy
// of the corpus dataset that already holds another definition of one of their names: every file is
// accounted for and the pair blocks nothing. Skipped when the corpus is absent.

#include "test_support.hpp"

#include <fib/dump/dump.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

using testing::read_file;
using testing::TempDir;

TEST(DumpCorpus, StagingRealDumpsIntoACopyOfTheDatasetIsNotBlockedByOnePair) {
  const auto corpus = testing::corpus_dir();
  if (corpus.empty() || !std::filesystem::is_directory(corpus / "dumps") ||
      !std::filesystem::is_directory(corpus / "dataset")) {
    GTEST_SKIP() << "no shared corpus";
  }
  const TempDir dir;
  const auto dataset = dir.path() / "dataset";
  std::filesystem::copy(corpus / "dataset", dataset, std::filesystem::copy_options::recursive);
  // An earlier run staged the CUDA-graph twin under the same name.
  const std::string name = "gqa_paged_decode_h32_kv8_d128_ps16";
  Json twin = Json::parse(read_file(corpus / "dumps" / (name + ".json")));
  twin["description"] = twin.value("description", std::string()) + " (CUDA graph capture)";
  dir.write("dataset/definitions/gqa_paged/" + name + ".json", canonical_json_text(twin));

  DumpOptions options;
  options.out = dir.path() / "dumps";
  options.command = {
      "/usr/bin/python3",
      (std::filesystem::path(FIB_SOURCE_DIR) / "tests/dump/harnesses/replay.py").string(),
      (corpus / "dumps").string()};
  options.dataset = dataset;
  options.normalize = StageNormalize::yes;
  options.on_conflict = OnConflict::skip;
  // This run's copy gets a name of its own: a decisions entry for its file.
  NormalizeDecisions decisions;
  auto& entry = decisions.files[resolved_source_path(options.out / (name + ".json"))];
  entry.name = name + "_eager";
  entry.pointer = "/files/dump";
  options.normalize_options.decisions = &decisions;
  const DumpResult result = run_trace_dump(options, testing::python(), [](std::string_view) {});
  ASSERT_TRUE(result.staged.has_value());
  const StageResult& staged = *result.staged;
  EXPECT_GE(result.files.size(), 20u);
  EXPECT_EQ(staged.entries.size(), result.files.size()); // every file is accounted for
  EXPECT_FALSE(staged.summary.blocked_by_conflicts);
  EXPECT_EQ(staged.summary.conflicts, 0u);
  EXPECT_EQ(staged.summary.rejected, 0u);
  EXPECT_TRUE(staged.diagnostics.empty()); // the decisions entry was used
  std::size_t in_dataset = 0;
  for (const StageEntry& e : staged.entries) {
    const std::string_view label = stage_line_label(e, staged.summary);
    EXPECT_TRUE(label == "added" || label == "unchanged" || label == "skipped") << e.source;
    in_dataset += label == "skipped" ? 0 : 1;
  }
  EXPECT_TRUE(std::filesystem::exists(dataset / "definitions/gqa_paged" / (name + "_eager.json")));
  ASSERT_TRUE(result.validation.has_value());
  EXPECT_EQ(result.validation->definitions.size(), in_dataset);
}

} // namespace
} // namespace fib
