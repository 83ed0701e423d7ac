// Select, ignore, per-path ignores and severity overrides of validate's findings.

#include <fib/base/codes.hpp>
#include <fib/validate/finding_policy.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

using codes::k_description_missing;
using codes::k_tag_format;

TEST(FindingPolicy, PatternsMatchWholeDotComponents) {
  EXPECT_TRUE(code_pattern_matches("definition", "definition.description.missing"));
  EXPECT_TRUE(code_pattern_matches("definition.description", "definition.description.missing"));
  EXPECT_TRUE(
      code_pattern_matches("definition.description.missing", "definition.description.missing"));
  EXPECT_FALSE(code_pattern_matches("definition.desc", "definition.description.missing"));
  EXPECT_FALSE(code_pattern_matches("definitio", "definition.description.missing"));
  EXPECT_FALSE(code_pattern_matches("", "definition.description.missing"));
  EXPECT_FALSE(code_pattern_matches("dataset", "definition.description.missing"));
}

TEST(FindingPolicy, PatternProblemsNameTheCloseCodeOrWhyItCannotApply) {
  EXPECT_FALSE(code_pattern_problem("definition"));
  EXPECT_FALSE(code_pattern_problem("dataset.workload.blob-shape"));
  const auto typo = code_pattern_problem("definition.description.mising");
  ASSERT_TRUE(typo);
  EXPECT_EQ(*typo, "'definition.description.mising' is not a finding code or code prefix; did "
                   "you mean 'definition.description.missing'?");
  const auto prefix_typo = code_pattern_problem("definitio");
  ASSERT_TRUE(prefix_typo);
  EXPECT_NE(prefix_typo->find("did you mean 'definition'?"), std::string::npos) << *prefix_typo;
  const auto environment = code_pattern_problem("io.read");
  ASSERT_TRUE(environment);
  EXPECT_EQ(*environment, "'io.read' names only codes that always show (environment or usage)");
  const auto far = code_pattern_problem("zzzzzz");
  ASSERT_TRUE(far);
  EXPECT_EQ(far->find("did you mean"), std::string::npos);
}

TEST(FindingPolicy, TheMostSpecificOfSelectAndIgnoreDecides) {
  FindingPolicy policy;
  policy.select = {"definition"};
  policy.ignore = {"definition.description"};
  EXPECT_FALSE(apply_policy(policy, k_description_missing, Severity::warning, {}));
  EXPECT_EQ(apply_policy(policy, k_tag_format, Severity::note, {}), Severity::note);
  EXPECT_FALSE(apply_policy(policy, codes::k_dataset_orphan, Severity::warning, {}))
      << "not selected";

  policy.select = {"definition.description.missing"};
  policy.ignore = {"definition"};
  EXPECT_EQ(apply_policy(policy, k_description_missing, Severity::warning, {}), Severity::warning)
      << "a longer select beats a shorter ignore";
  EXPECT_FALSE(apply_policy(policy, k_tag_format, Severity::note, {}));

  policy.select = {"definition"};
  policy.ignore = {"definition"};
  EXPECT_FALSE(apply_policy(policy, k_tag_format, Severity::note, {})) << "a tie ignores";
}

TEST(FindingPolicy, WhatStopsFibFromJudgingIsNeverDropped) {
  FindingPolicy policy;
  policy.select = {"definition"};
  policy.severities = {{"io", Severity::note}};
  EXPECT_EQ(apply_policy(policy, codes::k_io_read, Severity::error, {}), Severity::error);
  EXPECT_EQ(apply_policy(policy, codes::k_usage, Severity::error, {}), Severity::error);
  EXPECT_EQ(apply_policy(policy, "not.a.code", Severity::warning, {}), Severity::warning);
}

TEST(FindingPolicy, PerPathIgnoresMatchRelativePathsAndBareFileNames) {
  FindingPolicy policy;
  policy.base = "/repo";
  policy.per_path_ignores = {{"definitions/experimental/*", {"definition.description"}},
                             {"gemm_*.json", {"definition.tag"}}};
  EXPECT_FALSE(apply_policy(policy, k_description_missing, Severity::warning,
                            "/repo/definitions/experimental/deep/x.json"))
      << "* crosses '/'";
  EXPECT_EQ(apply_policy(policy, k_description_missing, Severity::warning,
                         "/repo/definitions/gemm/x.json"),
            Severity::warning);
  EXPECT_EQ(
      apply_policy(policy, k_tag_format, Severity::note, "/repo/definitions/experimental/x.json"),
      Severity::note)
      << "only the codes listed for the glob";
  EXPECT_FALSE(
      apply_policy(policy, k_tag_format, Severity::note, "/repo/definitions/gemm/gemm_n1.json"))
      << "a glob without '/' matches the file name anywhere";
  EXPECT_EQ(apply_policy(policy, k_description_missing, Severity::warning, {}), Severity::warning)
      << "a finding about no file";
}

TEST(FindingPolicy, ATrailingDotIsNoMoreSpecific) {
  FindingPolicy policy;
  policy.select = {"definition."};
  policy.ignore = {"definition"};
  EXPECT_FALSE(apply_policy(policy, k_tag_format, Severity::note, {})) << "a tie ignores";
}

TEST(FindingPolicy, TheBaselinesOwnNotesShowUnderASelectUnlessIgnored) {
  FindingPolicy policy;
  policy.select = {"definition"};
  EXPECT_EQ(apply_policy(policy, codes::k_baseline_fixed, Severity::note, {}), Severity::note);
  policy.ignore = {"baseline.fixed"};
  EXPECT_FALSE(apply_policy(policy, codes::k_baseline_fixed, Severity::note, {}));
  EXPECT_EQ(apply_policy(policy, codes::k_baseline_suppressed, Severity::note, {}), Severity::note);
}

TEST(FindingPolicy, TheMostSpecificSeverityOverrideWins) {
  FindingPolicy policy;
  policy.severities = {{"definition.description.missing", Severity::error},
                       {"definition", Severity::note}};
  EXPECT_EQ(apply_policy(policy, k_description_missing, Severity::warning, {}), Severity::error);
  EXPECT_EQ(apply_policy(policy, codes::k_axis_unused, Severity::warning, {}), Severity::note);
}

TEST(FindingPolicy, DatasetReportsAreFilteredAndTheirStatusesRecomputed) {
  DatasetReport report;
  DefinitionReport definition;
  CheckResult checked;
  checked.add(k_description_missing, "missing description");
  checked.add(CheckLevel::info, codes::k_dataset_workload_valid_count, "3 valid");
  definition[Category::definition] = checked;
  definition.update_status();
  report.definitions.emplace("gemm", definition);
  report.definition_files.emplace("gemm", "/repo/definitions/gemm/gemm.json");
  report.dataset.emplace();
  report.dataset->add(codes::k_dataset_orphan, "[fib] orphan");
  ASSERT_EQ(report.definitions["gemm"].status, CheckStatus::warning);

  FindingPolicy policy;
  policy.base = "/repo";
  policy.per_path_ignores = {{"definitions/gemm/*", {"definition.description.missing"}}};
  policy.severities = {{"dataset.orphan", Severity::error}};
  apply_policy(policy, report);
  const DefinitionReport& after = report.definitions["gemm"];
  EXPECT_EQ(after.status, CheckStatus::ok);
  ASSERT_EQ(after[Category::definition]->messages.size(), 1u);
  EXPECT_EQ(after[Category::definition]->messages[0].code, codes::k_dataset_workload_valid_count);
  EXPECT_EQ(report.dataset->status, CheckStatus::error);
  EXPECT_EQ(report.dataset->messages[0].level, CheckLevel::error);
}

TEST(FindingPolicy, PathsAreSpelledRelativeToTheBase) {
  EXPECT_EQ(path_relative_to("/repo/a/../b/c.json", "/repo"), "b/c.json");
  EXPECT_EQ(path_relative_to("/elsewhere/c.json", "/repo"), "../elsewhere/c.json")
      << "outside the base, still the same text from any working directory";
  EXPECT_EQ(path_relative_to("/repo", "/repo"), ".");
}

} // namespace
} // namespace fib
