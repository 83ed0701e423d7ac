// fib dump: the child process runner (exit codes, signals, timeout, environment, launch errors),
// the dump directory (--clean, --keep, collection), the model slug and the SGLang harness.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/dump/dump.hpp>
#include <fib/util/child_process.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

namespace fib {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::tree;

ChildOutcome shell(const std::string& script,
                   std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                   std::vector<std::pair<std::string, std::string>> environment = {}) {
  ChildOptions options;
  options.argv = {"/bin/sh", "-c", script};
  options.timeout = timeout;
  options.grace = std::chrono::milliseconds(500);
  options.environment = std::move(environment);
  return run_child_process(options);
}

TEST(ChildProcess, ReportsTheExitStatus) {
  const auto outcome = shell("exit 3");
  ASSERT_TRUE(outcome.started);
  ASSERT_TRUE(outcome.exit_code.has_value());
  EXPECT_EQ(*outcome.exit_code, 3);
  EXPECT_FALSE(outcome.signal.has_value());
  EXPECT_EQ(describe_outcome(outcome), "exit status 3");
}

TEST(ChildProcess, ReportsTheSignal) {
  const auto outcome = shell("kill -ABRT $$");
  ASSERT_TRUE(outcome.signal.has_value());
  EXPECT_EQ(*outcome.signal, SIGABRT);
  EXPECT_EQ(describe_outcome(outcome), "signal 6 (SIGABRT)");
}

TEST(ChildProcess, PassesTheEnvironmentAndReplacesExistingValues) {
  ::setenv("FIB_TEST_REPLACED", "old", 1);
  const TempDir dir;
  const auto out = dir.path() / "env.txt";
  const auto outcome =
      shell("printf '%s %s' \"$FIB_TEST_NEW\" \"$FIB_TEST_REPLACED\" > '" + out.string() + "'",
            std::nullopt, {{"FIB_TEST_NEW", "a b"}, {"FIB_TEST_REPLACED", "new"}});
  ::unsetenv("FIB_TEST_REPLACED");
  ASSERT_EQ(outcome.exit_code.value_or(-1), 0);
  EXPECT_EQ(read_file(out), "a b new");
}

TEST(ChildProcess, KillsTheWholeGroupAtTheTimeout) {
  const TempDir dir;
  const auto marker = dir.path() / "grandchild-survived";
  // The grandchild would write the marker after 2 s unless the group is killed at the timeout.
  const auto outcome = shell("(sleep 2; touch '" + marker.string() + "') & sleep 30",
                             std::chrono::milliseconds(300));
  EXPECT_TRUE(outcome.timed_out);
  EXPECT_EQ(describe_outcome(outcome), "killed at the 0.3 s timeout");
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(ChildProcess, AProgramThatDoesNotExistIsALaunchError) {
  ChildOptions options;
  options.argv = {"fib-no-such-program-anywhere"};
  const auto outcome = run_child_process(options);
  EXPECT_FALSE(outcome.started);
  ASSERT_TRUE(outcome.launch_error.has_value());
  EXPECT_EQ(outcome.launch_error->code, codes::k_child_launch_failed);
  EXPECT_NE(outcome.launch_error->message.find("No such file"), std::string::npos);
}

TEST(ChildProcess, StandardInputIsTheNullDevice) {
  const auto outcome = shell("read line; exit $?");
  EXPECT_EQ(outcome.exit_code.value_or(-1), 1); // EOF at once, no hang, no SIGTTIN
}

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

} // namespace
} // namespace fib
