// check_dependents: the workload, solution and trace lines that name a definition, checked
// against a replacement with the workload category's own checks.

#include "dataset_fixture.hpp"

#include <fib/base/codes.hpp>
#include <fib/validate/dependents.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

using namespace dataset_testing;

Definition parsed(const std::string& json) {
  DiagnosticList sink;
  const JsonDocument document = testing::parse_or_die(json);
  return parse_definition(document, sink);
}

struct DependentsFixture {
  Dataset dataset;
  DependentsFixture() {
    dataset.definition(DefSpec{});
    dataset.workloads("d1", {wl("u1"), wl("u2", R"({"M": 3})")});
    dataset.solution("alice", "d1", "s1", solution_json("s1", "d1", "alice"));
    dataset.traces("alice", "d1", {tr("u1", "\"s1\""), tr("u2", "\"s1\"")});
  }
};

TEST(Dependents, AnUnchangedDefinitionBreaksNothingAndCountsWhatNamesIt) {
  DependentsFixture f;
  const Definition staged = parsed(definition_json(DefSpec{}));
  const DependentsCheck check = check_dependents(f.dataset.root(), staged, staged);
  EXPECT_EQ(check.total.workloads, 2u);
  EXPECT_EQ(check.total.solutions, 1u);
  EXPECT_EQ(check.total.traces, 2u);
  EXPECT_TRUE(check.breakages.empty());
}

TEST(Dependents, ARenamedInputBreaksEveryLineWithFileAndLine) {
  DependentsFixture f;
  DefSpec renamed;
  renamed.inputs =
      R"({"X": {"shape": ["M", "N"], "dtype": "float32"}, "s": {"shape": null, "dtype": "float32"}})";
  const DependentsCheck check = check_dependents(
      f.dataset.root(), parsed(definition_json(DefSpec{})), parsed(definition_json(renamed)));
  EXPECT_EQ(check.broken.workloads, 2u);
  EXPECT_EQ(check.broken.solutions, 1u);
  EXPECT_EQ(check.broken.traces, 2u);
  ASSERT_EQ(check.breakages.size(), 5u);
  const Diagnostic& first = check.breakages.front();
  EXPECT_EQ(first.code, codes::k_dataset_workload_missing_inputs);
  EXPECT_EQ(first.file.filename(), "d1.jsonl");
  EXPECT_NE(first.file.string().find("workloads"), std::string::npos);
  EXPECT_EQ(first.line, 1);
  EXPECT_EQ(check.breakages[1].line, 2);
  EXPECT_EQ(check.breakages[2].code, codes::k_stage_overwrite_breaks); // the solution
  EXPECT_EQ(check.breakages[2].file.filename(), "s1.json");
  EXPECT_NE(check.breakages[3].file.string().find("traces"), std::string::npos);
}

TEST(Dependents, ANewVarAxisBreaksTheWorkloadsButNotTheSolutions) {
  DependentsFixture f;
  DefSpec more_axes;
  more_axes.axes = R"({"M": {"type": "var"}, "N": {"type": "var"}})";
  const DependentsCheck check = check_dependents(
      f.dataset.root(), parsed(definition_json(DefSpec{})), parsed(definition_json(more_axes)));
  EXPECT_EQ(check.broken.workloads, 2u);
  EXPECT_EQ(check.broken.solutions, 0u);
  ASSERT_FALSE(check.breakages.empty());
  EXPECT_EQ(check.breakages.front().code, codes::k_dataset_workload_missing_axes);
}

TEST(Dependents, ALineAlreadyBrokenIsNotBlamedOnTheReplacement) {
  Dataset dataset;
  dataset.definition(DefSpec{});
  dataset.workloads("d1", {wl("u1", R"({"M": 2, "Z": 1})")}); // an extra axis already
  DefSpec renamed;
  renamed.inputs =
      R"({"X": {"shape": ["M", "N"], "dtype": "float32"}, "s": {"shape": null, "dtype": "float32"}})";
  const DependentsCheck check = check_dependents(dataset.root(), parsed(definition_json(DefSpec{})),
                                                 parsed(definition_json(renamed)));
  EXPECT_EQ(check.total.workloads, 1u);
  EXPECT_EQ(check.broken.workloads, 0u);
}

} // namespace
} // namespace fib
