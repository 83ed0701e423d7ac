// The runnable verdict: four outcomes from what blocks a definition and its smoke run's
// diagnostics, their words, and their counts. No worker.

#include <fib/base/codes.hpp>
#include <fib/exec/runnable.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

Diagnostic diagnostic(std::string_view code, std::string message) {
  return make_diagnostic(code, std::move(message));
}

const Diagnostic k_build_ok = diagnostic(codes::k_reference_ok, "reference build: ok");

TEST(RunnableVerdict, ASmokeRunThatPassedIsRunnable) {
  const auto verdict = classify_runnable(
      {}, {k_build_ok, diagnostic(codes::k_reference_ok, "smoke run: ok (1 output as declared)")});
  EXPECT_EQ(verdict.runnability, Runnability::runnable);
  EXPECT_EQ(verdict.code, codes::k_reference_ok);
  EXPECT_EQ(render_verdict(verdict), "runnable");
}

TEST(RunnableVerdict, ABuildAloneIsNotASmokeRun) {
  const auto verdict = classify_runnable({}, {k_build_ok});
  EXPECT_EQ(verdict.runnability, Runnability::not_runnable_here);
  EXPECT_EQ(verdict.reason, "the smoke run did not run");
}

TEST(RunnableVerdict, ASkipIsNotRunnableHereWithItsReason) {
  const auto verdict = classify_runnable(
      {}, {k_build_ok,
           diagnostic(codes::k_smoke_skipped,
                      "smoke run skipped: the reference uses torch.float8_e4m3fn, which torch "
                      "1.13.0 lacks (float8 needs torch 2.1 or later)")});
  EXPECT_EQ(verdict.runnability, Runnability::not_runnable_here);
  EXPECT_EQ(verdict.code, codes::k_smoke_skipped);
  EXPECT_EQ(render_verdict(verdict),
            "not runnable here: the reference uses torch.float8_e4m3fn, which torch 1.13.0 lacks "
            "(float8 needs torch 2.1 or later)");
}

TEST(RunnableVerdict, AWorkerThatCannotBeUsedIsNotRunnableHere) {
  const auto verdict = classify_runnable(
      {}, {diagnostic(codes::k_worker_unavailable, "the reference worker is not available")});
  EXPECT_EQ(verdict.runnability, Runnability::not_runnable_here);
  EXPECT_EQ(verdict.code, codes::k_worker_unavailable);
}

TEST(RunnableVerdict, AnyOtherErrorFailsWhenRunWithItsFirstLine) {
  for (const auto code :
       {codes::k_smoke_exception, codes::k_smoke_missing_helper, codes::k_smoke_output_dtype,
        codes::k_smoke_timeout, codes::k_worker_crashed, codes::k_reference_build_failed}) {
    const auto verdict = classify_runnable(
        {}, {k_build_ok, diagnostic(code, "smoke run: the reference raised X\n  traceback")});
    EXPECT_EQ(verdict.runnability, Runnability::fails_when_run) << code;
    EXPECT_EQ(verdict.code, code);
    EXPECT_EQ(verdict.reason, "the reference raised X") << code;
  }
  // An error wins over a skip that came with it.
  const auto both = classify_runnable(
      {}, {diagnostic(codes::k_smoke_skipped, "smoke run skipped: x"),
           diagnostic(codes::k_smoke_output_shape, "smoke run: output 'y' has shape [3]")});
  EXPECT_EQ(both.runnability, Runnability::fails_when_run);
  EXPECT_EQ(render_verdict(both), "fails when run: smoke.output-shape: output 'y' has shape [3]");
}

TEST(RunnableVerdict, WhatBlocksADefinitionNeedsADecisionWhateverTheSmokeSays) {
  const auto question = diagnostic(codes::k_normalize_n7, "decision needed: input 'a' dtype");
  const auto verdict = classify_runnable(
      {question}, {diagnostic(codes::k_reference_ok, "smoke run: ok (1 output as declared)")});
  EXPECT_EQ(verdict.runnability, Runnability::needs_decision);
  EXPECT_EQ(verdict.code, codes::k_normalize_n7);
  EXPECT_EQ(render_verdict(verdict),
            "needs a decision: normalize.n7: decision needed: input 'a' dtype");
}

TEST(RunnableCounts, CountEachOutcomeSeparately) {
  RunnableCounts counts;
  for (const auto r :
       {Runnability::runnable, Runnability::runnable, Runnability::not_runnable_here,
        Runnability::fails_when_run, Runnability::needs_decision, Runnability::needs_decision}) {
    counts.add(r);
  }
  EXPECT_EQ(counts.total(), 6u);
  EXPECT_EQ(render_counts(counts),
            "2 runnable, 1 not runnable here, 1 fails when run, 2 need a decision");
  EXPECT_EQ(to_json(counts), Json::parse(R"({"runnable": 2, "not_runnable_here": 1,
                                             "fails_when_run": 1, "needs_decision": 2})"));
  EXPECT_EQ(render_counts(RunnableCounts{}),
            "0 runnable, 0 not runnable here, 0 fail when run, 0 need a decision");
}

} // namespace
} // namespace fib
