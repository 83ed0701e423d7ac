// The runnable verdicts of a staging run and of a normalized file: which entries run, which need
// a decision (and why), which get none. The worker given does not exist, so an entry that does
// run is "not runnable here: worker.unavailable", which shows that it was sent.

#include <fib/base/codes.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/normalize/runnable.hpp>
#include <fib/stage/runnable.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

ReferenceRunnerOptions missing_worker() {
  ReferenceRunnerOptions options;
  options.worker = "/nonexistent/fib-worker";
  return options;
}

constexpr const char* k_valid = R"JSON({
  "name": "t", "op_type": "test",
  "axes": {"n": {"type": "var"}},
  "inputs": {"x": {"shape": ["n"], "dtype": "float32"}},
  "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
  "reference": "def run(x):\n    return x\n"
})JSON";

StageEntry entry(StageAction action, std::vector<Diagnostic> diagnostics = {},
                 std::string text = k_valid) {
  StageEntry e;
  e.action = action;
  e.target = "definitions/test/t.json";
  e.diagnostics = std::move(diagnostics);
  e.incoming_text = std::move(text);
  return e;
}

TEST(StagedRunnable, EachActionGetsItsVerdict) {
  StageResult result;
  const auto question = make_diagnostic(codes::k_normalize_n3, "decision needed: helpers");
  const auto conflict = make_diagnostic(codes::k_stage_conflict, "differs from the staged copy");
  const auto tag_warning = make_diagnostic(codes::k_tag_clash, "two model tags");
  result.entries = {
      entry(StageAction::added, {tag_warning}),              // runs: a warning blocks nothing
      entry(StageAction::added, {question}),                 // open question
      entry(StageAction::skipped, {conflict}),               // conflict left alone
      entry(StageAction::duplicate),                         // stands for another input
      entry(StageAction::unchanged, {}, R"({"name": "t"})"), // fails the model's checks
  };
  ReferenceRunner runner(missing_worker());
  const auto staged = check_staged_runnable(result, "/ds", runner);
  ASSERT_EQ(staged.checks.size(), 5u);
  ASSERT_TRUE(staged.checks[0]);
  EXPECT_EQ(staged.checks[0]->verdict.runnability, Runnability::not_runnable_here);
  EXPECT_EQ(staged.checks[0]->verdict.code, codes::k_worker_unavailable);
  ASSERT_FALSE(staged.checks[0]->diagnostics.empty());
  EXPECT_EQ(staged.checks[0]->diagnostics[0].file, "/ds/definitions/test/t.json");
  ASSERT_TRUE(staged.checks[1]);
  EXPECT_EQ(staged.checks[1]->verdict.runnability, Runnability::needs_decision);
  EXPECT_EQ(staged.checks[1]->verdict.code, codes::k_normalize_n3);
  EXPECT_TRUE(staged.checks[1]->diagnostics.empty()) << "nothing runs";
  ASSERT_TRUE(staged.checks[2]);
  EXPECT_EQ(staged.checks[2]->verdict.runnability, Runnability::needs_decision);
  EXPECT_EQ(staged.checks[2]->verdict.code, codes::k_stage_conflict);
  EXPECT_FALSE(staged.checks[3]);
  ASSERT_TRUE(staged.checks[4]);
  EXPECT_EQ(staged.checks[4]->verdict.runnability, Runnability::needs_decision);
  EXPECT_EQ(staged.checks[4]->verdict.code, codes::k_schema_required);
  EXPECT_EQ(staged.counts.not_runnable_here, 1u);
  EXPECT_EQ(staged.counts.needs_decision, 3u);
  EXPECT_EQ(staged.counts.total(), 4u);
}

TEST(NormalizedRunnable, TheQuestionComesBeforeTheErrorItCauses) {
  NormalizedFile file;
  file.verdict = NormalizeVerdict::invalid;
  file.findings.push_back(
      {make_diagnostic(codes::k_normalize_n1, "applied something"), FindingKind::applied});
  file.findings.push_back({make_diagnostic(codes::k_normalize_n7, "decision needed: dtype of 'a'"),
                           FindingKind::question});
  Diagnostic invalid = make_diagnostic(codes::k_dtype_invalid, "got 'unknown'");
  invalid.pointer = "/inputs/a/dtype";
  file.validation.push_back(invalid);
  const auto blocking = blocking_diagnostics(file);
  ASSERT_EQ(blocking.size(), 2u);
  EXPECT_EQ(blocking[0].code, codes::k_normalize_n7);
  EXPECT_EQ(blocking[1].code, codes::k_dtype_invalid);
  EXPECT_EQ(blocking[1].pointer, "/inputs/a/dtype");
  ReferenceRunner runner(missing_worker());
  const auto check = check_runnable(file, runner);
  EXPECT_EQ(render_verdict(check.verdict),
            "needs a decision: normalize.n7: decision needed: dtype of 'a'");
  EXPECT_TRUE(check.diagnostics.empty());
}

TEST(NormalizedRunnable, AValidFileWithoutQuestionsRuns) {
  NormalizedFile file;
  file.verdict = NormalizeVerdict::valid;
  file.input = "dumps/t.json";
  file.written = "out/t.json";
  file.normalized_text = k_valid;
  EXPECT_TRUE(blocking_diagnostics(file).empty());
  ReferenceRunner runner(missing_worker());
  const auto check = check_runnable(file, runner);
  EXPECT_EQ(check.verdict.runnability, Runnability::not_runnable_here);
  EXPECT_EQ(check.verdict.code, codes::k_worker_unavailable);
  ASSERT_FALSE(check.diagnostics.empty());
  EXPECT_EQ(check.diagnostics[0].file, "out/t.json");
}

} // namespace
} // namespace fib
