// fib dump: the dump directory (--clean, --keep, collection), the model slug and the SGLang
// harness. (The child process runner is tested in tests/unit/util/subprocess_test.cpp.)

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/dump/dump.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::tree;

TEST(DumpDirectory, IsCreatedWhenMissing) {
  const TempDir dir;
  const auto out = dir.path() / "a" / "b";
  auto snapshot = prepare_dump_directory(out, ExistingDumps::keep);
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_TRUE(snapshot->empty());
  EXPECT_TRUE(std::filesystem::is_directory(out));
}

TEST(DumpDirectory, CleanRemovesOnlyAPureDumpDirectory) {
  const TempDir dir;
  dir.write("d/a.json", "{}");
  dir.write("d/b.json", "{}");
  ASSERT_TRUE(prepare_dump_directory(dir.path() / "d", ExistingDumps::clean).has_value());
  EXPECT_EQ(tree(dir.path()), std::vector<std::string>{"d"});

  dir.write("e/a.json", "{}");
  dir.write("e/notes.txt", "mine");
  std::filesystem::create_directories(dir.path() / "e/sub");
  auto refused = prepare_dump_directory(dir.path() / "e", ExistingDumps::clean);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, codes::k_dump_not_clean);
  EXPECT_NE(refused.error().message.find("notes.txt, sub/"), std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "e/a.json"));
}

TEST(DumpDirectory, CleanRefusesALinkedJsonFile) {
  const TempDir dir;
  const auto outside = dir.write("outside.json", "{}");
  std::filesystem::create_directories(dir.path() / "d");
  std::filesystem::create_symlink(outside, dir.path() / "d/x.json");
  auto refused = prepare_dump_directory(dir.path() / "d", ExistingDumps::clean);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, codes::k_dump_not_clean);
  EXPECT_TRUE(std::filesystem::exists(outside));
}

TEST(DumpDirectory, ARegularFileIsNotADumpDirectory) {
  const TempDir dir;
  const auto file = dir.write("f", "x");
  auto result = prepare_dump_directory(file, ExistingDumps::keep);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, codes::k_io_write);
}

TEST(DumpCollection, TellsNewRewrittenKeptAndBrokenFilesApart) {
  const TempDir dir;
  const auto d = dir.path() / "d";
  dir.write("d/kept_h1.json", R"({"name": "kept_h1", "op_type": "rmsnorm"})");
  dir.write("d/again_h1.json", R"({"name": "again_h1", "op_type": "rmsnorm"})");
  auto before = prepare_dump_directory(d, ExistingDumps::keep);
  ASSERT_TRUE(before.has_value());
  ASSERT_EQ(before->size(), 2u);
  // The run: one file rewritten (later mtime), one new, one truncated, one not a definition.
  std::filesystem::last_write_time(d / "again_h1.json",
                                   std::filesystem::last_write_time(d / "again_h1.json") +
                                       std::chrono::seconds(5));
  dir.write("d/new_h2.json", R"({"name": "new_h2", "op_type": "gemm"})");
  dir.write("d/broken_h3.json", R"({"name": "broken_h3", "op_ty)");
  dir.write("d/list.json", "[]");
  dir.write("d/notes.txt", "ignored");
  const auto files = collect_dump(d, *before);
  ASSERT_EQ(files.size(), 5u);
  std::map<std::string, const DumpedFile*> by_name;
  for (const auto& file : files) {
    by_name[file.file.filename().string()] = &file;
  }
  EXPECT_EQ(by_name["kept_h1.json"]->state, DumpFileState::kept);
  EXPECT_EQ(by_name["again_h1.json"]->state, DumpFileState::rewritten);
  EXPECT_EQ(by_name["new_h2.json"]->state, DumpFileState::created);
  EXPECT_EQ(by_name["new_h2.json"]->op_type, "gemm");
  ASSERT_TRUE(by_name["broken_h3.json"]->problem.has_value());
  EXPECT_EQ(by_name["broken_h3.json"]->problem->code, codes::k_json_parse);
  ASSERT_TRUE(by_name["list.json"]->problem.has_value());
  EXPECT_EQ(by_name["list.json"]->problem->code, codes::k_stage_not_definition);
}

TEST(DumpNames, ModelSlugFromAModelId) {
  EXPECT_EQ(model_slug("meta-llama/Llama-3.2-3B-Instruct"), "llama-3.2-3b-instruct");
  EXPECT_EQ(model_slug("deepseek-ai/DeepSeek-V3/"), "deepseek-v3");
  EXPECT_EQ(model_slug("/models/Qwen3 Next (80B)"), "qwen3-next-80b");
  EXPECT_EQ(model_slug("__x__"), "x");
  EXPECT_EQ(model_slug("///"), "");
}

TEST(DumpHarness, ValuesAreWrittenAsPythonLiterals) {
  SglangHarness harness;
  harness.model = "org/it's \"odd\"\nmodel\\é😀";
  harness.prompt = "x\"); import os; os.system(\"boom";
  harness.tp = 4;
  harness.ep = 2;
  harness.page_size = 16;
  harness.mem_fraction = 0.25;
  harness.dump_directory = "/tmp/d\"x";
  const std::string text = render_sglang_harness(harness);
  EXPECT_NE(text.find(R"(model_path="org/it's \"odd\"\nmodel\\\u00e9\U0001f600",)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(["x\"); import os; os.system(\"boom"],)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(os.environ["FLASHINFER_TRACE_DUMP_DIR"] = "/tmp/d\"x")"),
            std::string::npos);
  EXPECT_NE(text.find("tp_size=4,"), std::string::npos);
  EXPECT_NE(text.find("ep_size=2,"), std::string::npos);
  EXPECT_NE(text.find("page_size=16,"), std::string::npos);
  EXPECT_NE(text.find("mem_fraction_static=0.25,"), std::string::npos);
  EXPECT_NE(text.find("disable_cuda_graph=True"), std::string::npos);
  // The variables are set before the first import of sglang.
  EXPECT_LT(text.find("FLASHINFER_TRACE_DUMP_DIR"), text.find("from sglang"));
  // Pure ASCII: no source-encoding surprises.
  EXPECT_TRUE(std::all_of(text.begin(), text.end(),
                          [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
}

TEST(DumpHarness, OptionalEngineArgumentsAreLeftOut) {
  SglangHarness harness;
  harness.model = "m";
  const std::string text = render_sglang_harness(harness);
  EXPECT_EQ(text.find("ep_size"), std::string::npos);
  EXPECT_EQ(text.find("page_size"), std::string::npos);
  EXPECT_NE(text.find("tp_size=1,"), std::string::npos);
}

TEST(DumpHarness, EachPassHasItsEngineSettings) {
  SglangHarness harness;
  harness.model = "m";
  harness.workloads = true;
  const std::string serve = render_sglang_harness(harness);
  EXPECT_NE(serve.find("disable_radix_cache=True,"), std::string::npos) << serve;
  EXPECT_NE(serve.find("disable_piecewise_cuda_graph=True,"), std::string::npos);
  EXPECT_EQ(serve.find("enable_deterministic_inference"), std::string::npos)
      << "the ragged path must stay reachable";
  EXPECT_NE(serve.find("\"top_k\": -1, \"top_p\": 0.9"), std::string::npos) << "top-p alone";
  EXPECT_NE(serve.find("sampling_backend=\"flashinfer\""), std::string::npos);
  EXPECT_NE(serve.find("print(\"fib harness: pass serve, default page size\""), std::string::npos);

  harness.pass = HarnessPass::paged_prefill;
  harness.page_size = 16;
  const std::string paged = render_sglang_harness(harness);
  EXPECT_NE(paged.find("disable_radix_cache=False,"), std::string::npos) << paged;
  EXPECT_NE(paged.find("enable_deterministic_inference=True,"), std::string::npos);
  EXPECT_EQ(paged.find("disable_piecewise_cuda_graph"), std::string::npos);
  EXPECT_NE(paged.find("page_size=16,"), std::string::npos);
  EXPECT_NE(paged.find("SGLANG_FLASHINFER_USE_PAGED"), std::string::npos);
  EXPECT_NE(paged.find("for repeats in (32, 128):"), std::string::npos)
      << "two pages of prompt repeats at least, and a prefix 4 times as long";
  EXPECT_NE(paged.find("\"max_new_tokens\": 1"), std::string::npos);
  EXPECT_NE(paged.find("print(\"fib harness: pass paged-prefill, page size 16\""),
            std::string::npos);
  // Both keep the version-check switches a user may override, before any import.
  for (const std::string* text : {&serve, &paged}) {
    EXPECT_LT(text->find("os.environ.setdefault(\"FLASHINFER_DISABLE_VERSION_CHECK\", \"1\")"),
              text->find("from sglang"));
    EXPECT_NE(text->find("dataclasses.fields(ServerArgs)"), std::string::npos);
  }
}

TEST(DumpHarness, RunsCrossPageSizesWithPasses) {
  using enum HarnessPass;
  const std::vector<SglangRun> runs = plan_sglang_runs({serve, paged_prefill}, {1, 16, 1});
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0], (SglangRun{serve, 1}));
  EXPECT_EQ(runs[1], (SglangRun{paged_prefill, 1}));
  EXPECT_EQ(runs[2], (SglangRun{serve, 16}));
  EXPECT_EQ(runs[3], (SglangRun{paged_prefill, 16}));
  EXPECT_EQ(describe_run(runs[3]), "paged-prefill, page size 16");
  const std::vector<SglangRun> plain = plan_sglang_runs({serve}, {});
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_FALSE(plain[0].page_size);
  EXPECT_EQ(describe_run(plain[0]), "serve, default page size");
}

// What fib dump's exit status is made of: the run's own diagnostics, and only the environment
// errors of staging and tagging (their findings are outcomes).
TEST(DumpVerdict, CountsTheRunAndTheEnvironmentErrorsOfItsSteps) {
  DumpResult result;
  result.diagnostics.push_back(make_diagnostic(codes::k_dump_left_processes, "left"));
  EXPECT_EQ(count_dump_diagnostics(result).warnings, 1u);
  EXPECT_EQ(count_dump_diagnostics(result).errors, 0u);
  EXPECT_FALSE(dump_found_problems(result));

  result.staged = StageResult{};
  StageEntry conflict;
  conflict.action = StageAction::conflict;
  conflict.diagnostics.push_back(make_diagnostic(codes::k_stage_conflict, "differs"));
  result.staged->entries.push_back(conflict);
  // A conflict's error is not counted: the conflict itself is the finding.
  EXPECT_EQ(count_dump_diagnostics(result).errors, 0u);
  EXPECT_FALSE(dump_found_problems(result));
  result.staged->summary.conflicts = 1;
  EXPECT_TRUE(dump_found_problems(result));

  StageEntry unwritten;
  unwritten.action = StageAction::added;
  unwritten.diagnostics.push_back(make_diagnostic(codes::k_io_write, "cannot write"));
  result.staged->entries.push_back(unwritten);
  const auto counts = count_dump_diagnostics(result);
  EXPECT_EQ(counts.environment_errors, 1u);
  EXPECT_EQ(counts.errors, 1u);

  TaggedFile tagged;
  tagged.diagnostics.push_back(make_diagnostic(codes::k_io_unsafe_path, "a link"));
  result.tagged_files.push_back(tagged);
  result.validation_environment.push_back(make_diagnostic(codes::k_python_unavailable, "none"));
  EXPECT_EQ(count_dump_diagnostics(result).environment_errors, 3u);
}

TEST(DumpVerdict, AnInvalidDumpOrASkippedTagEditIsAProblem) {
  DumpResult result;
  result.files.push_back(DumpedFile{});
  EXPECT_FALSE(dump_found_problems(result));
  result.files.back().problem = make_diagnostic(codes::k_stage_not_definition, "not one");
  EXPECT_TRUE(dump_found_problems(result));
  result.files.clear();
  result.tagged = TagSummary{};
  EXPECT_FALSE(dump_found_problems(result));
  result.tagged->skipped = 1;
  EXPECT_TRUE(dump_found_problems(result));
}

TEST(DumpDirectory, FileStatesHaveTheirListingNames) {
  EXPECT_EQ(to_string(DumpFileState::created), "new");
  EXPECT_EQ(to_string(DumpFileState::rewritten), "rewritten");
  EXPECT_EQ(to_string(DumpFileState::kept), "kept");
  EXPECT_EQ(parse_enum<DumpFileState>("new"), DumpFileState::created);
}

} // namespace
} // namespace fib
