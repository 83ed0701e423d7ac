// `fib report fastp` on a small dataset written by the test: every share is a checkable fraction.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/report/fastp.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fib {
namespace {

using testing::TempDir;

std::string definition_json(std::string_view name) {
  return fmt::format(
      R"({{"name": "{}", "op_type": "op", "axes": {{"M": {{"type": "var"}}}},
 "inputs": {{"A": {{"shape": ["M"], "dtype": "float32"}}}},
 "outputs": {{"B": {{"shape": ["M"], "dtype": "float32"}}}},
 "reference": "def run(A):\n    return A\n"}})",
      name);
}

std::string solution_json(std::string_view name, std::string_view definition,
                          std::string_view author) {
  return fmt::format(
      R"({{"name": "{}", "definition": "{}", "author": "{}",
 "spec": {{"language": "python", "target_hardware": ["cuda"], "entry_point": "main.py::run"}},
 "sources": [{{"path": "main.py", "content": "def run(A):\n    return A\n"}}]}})",
      name, definition, author);
}

std::string workload_line(std::string_view definition, std::string_view uuid) {
  return fmt::format(
             R"({{"definition": "{}", "workload": {{"axes": {{"M": 2}}, "inputs": {{"A": {{"type": "random"}}}}, "uuid": "{}"}}, "solution": null, "evaluation": null}})",
             definition, uuid) +
         "\n";
}

// A PASSED trace with this speedup and absolute error, or RUNTIME_ERROR when speedup < 0.
std::string trace_line(std::string_view definition, std::string_view solution,
                       std::string_view uuid, double speedup, double abs_error = 0.0) {
  const std::string evaluation =
      speedup < 0
          ? std::string(
                R"({"status": "RUNTIME_ERROR", "environment": {"hardware": "cpu"}, "timestamp": "t"})")
          : fmt::format(
                R"({{"status": "PASSED", "environment": {{"hardware": "cpu"}}, "timestamp": "t", "correctness": {{"max_relative_error": 0.0, "max_absolute_error": {}}}, "performance": {{"latency_ms": 1.0, "reference_latency_ms": {}, "speedup_factor": {}}}}})",
                abs_error, speedup, speedup);
  return fmt::format(
             R"({{"definition": "{}", "workload": {{"axes": {{"M": 2}}, "inputs": {{"A": {{"type": "random"}}}}, "uuid": "{}"}}, "solution": "{}", "evaluation": {}}})",
             definition, uuid, solution, evaluation) +
         "\n";
}

// d1 has workloads w1 and w2, d2 has w3 (nobody tried it): three tasks. alice: 2.0x on w1, fails
// on w2. bob: 0.5x and then 3.0x on w1 (his best counts), 1.5x on w2 but outside the error bounds.
// carol has a solution and no trace.
void write_fixture(const TempDir& dir) {
  dir.write("definitions/op/d1.json", definition_json("d1"));
  dir.write("definitions/op/d2.json", definition_json("d2"));
  dir.write("workloads/op/d1.jsonl", workload_line("d1", "w1") + workload_line("d1", "w2"));
  dir.write("workloads/op/d2.jsonl", workload_line("d2", "w3"));
  dir.write("solutions/alice/a.json", solution_json("a", "d1", "alice"));
  dir.write("solutions/bob/b.json", solution_json("b", "d1", "bob"));
  dir.write("solutions/carol/c.json", solution_json("c", "d2", "carol"));
  dir.write("traces/t.jsonl", trace_line("d1", "a", "w1", 2.0) + trace_line("d1", "a", "w2", -1) +
                                  trace_line("d1", "b", "w1", 0.5) +
                                  trace_line("d1", "b", "w1", 3.0) +
                                  trace_line("d1", "b", "w2", 1.5, 0.5));
}

std::vector<double> shares(const FastpCurve& curve) {
  std::vector<double> out;
  for (const FastpPoint& point : curve.points) {
    out.push_back(point.fast_p);
  }
  return out;
}

TEST(ReportFastp, SharesOfAllTasksPerAuthorAndForTheBestOfAll) {
  TempDir dir;
  write_fixture(dir);
  DiagnosticList sink;
  FastpOptions options;
  options.datasets = {dir.path()};
  options.thresholds = {0.0, 1.0, 2.0, 3.0};
  const FastpReport report = fastp_curves(options, sink);
  EXPECT_FALSE(sink.has_errors()) << testing::describe(sink);
  const DatasetFastp& d = report.datasets.at(0);
  EXPECT_EQ(d.tasks, 3u);
  ASSERT_EQ(d.curves.size(), 4u);
  EXPECT_EQ(d.curves[0].author, "alice");
  EXPECT_EQ(d.curves[0].attempted, 2u);
  EXPECT_EQ(d.curves[0].correct, 1u);
  EXPECT_EQ(shares(d.curves[0]), (std::vector<double>{1.0 / 3, 1.0 / 3, 0.0, 0.0}));
  EXPECT_EQ(d.curves[1].author, "bob");
  EXPECT_EQ(d.curves[1].correct, 1u); // w2 is outside the bounds
  EXPECT_EQ(shares(d.curves[1]), (std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3, 0.0}));
  EXPECT_EQ(d.curves[2].author, "carol");
  EXPECT_EQ(d.curves[2].attempted, 0u);
  EXPECT_EQ(shares(d.curves[2]), (std::vector<double>{0.0, 0.0, 0.0, 0.0}));
  EXPECT_EQ(d.curves[3].author, "");
  EXPECT_EQ(d.curves[3].attempted, 2u);
  EXPECT_EQ(shares(d.curves[3]), (std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3, 0.0}));

  // Looser bounds admit bob's 1.5x on w2.
  options.bounds = ErrorBounds{1.0, 1.0};
  const FastpReport loose = fastp_curves(options, sink);
  EXPECT_EQ(shares(loose.datasets[0].curves[1]),
            (std::vector<double>{2.0 / 3, 2.0 / 3, 1.0 / 3, 0.0}));

  EXPECT_EQ(render_fastp_csv(report).substr(0, 90),
            fmt::format("dataset,author,p,fast,tasks,fast_p\n{},alice,0,1,3,0.333333\n",
                        dir.path().string())
                .substr(0, 90));
  const Json json = fastp_to_json(report);
  EXPECT_EQ(json["fib_report"], "fastp");
  EXPECT_EQ(json["datasets"][0]["tasks"], 3);
  EXPECT_TRUE(json["datasets"][0]["curves"][3]["author"].is_null());
  EXPECT_EQ(json["datasets"][0]["curves"][1]["points"][2]["fast"], 1);
  const std::string text = render_fastp_text(report);
  EXPECT_NE(text.find("  author         fast_0  fast_1  fast_2  fast_3  attempted  correct\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  bob            33.3%   33.3%   33.3%   0.0%    2          1\n"),
            std::string::npos)
      << text;
}

TEST(ReportFastp, UnknownDefinitionsAndThresholdText) {
  TempDir dir;
  write_fixture(dir);
  DiagnosticList sink;
  FastpOptions options;
  options.datasets = {dir.path()};
  options.definitions = {"d2", "nope"};
  const FastpReport report = fastp_curves(options, sink);
  EXPECT_EQ(testing::error_codes(sink), std::vector<std::string>{"score.unknown-definition"});
  EXPECT_EQ(report.datasets[0].tasks, 1u);

  const auto parsed = parse_fastp_thresholds("0,0.5,1,10");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, (std::vector<double>{0.0, 0.5, 1.0, 10.0}));
  for (const std::string bad : {"", "1,", "a", "-1", "1,1", "2,1", "nan", "inf", "1 ,2"}) {
    const auto refused = parse_fastp_thresholds(bad);
    ASSERT_FALSE(refused.has_value()) << bad;
    EXPECT_EQ(refused.error().code, codes::k_usage) << bad;
  }
}

TEST(ReportFastp, CsvQuotesWhatNeedsQuoting) {
  TempDir dir;
  write_fixture(dir);
  dir.write("solutions/x/d.json", solution_json("d", "d1", "eve, \\\"the\\\" author"));
  DiagnosticList sink;
  FastpOptions options;
  options.datasets = {dir.path()};
  options.thresholds = {1.0};
  const std::string csv = render_fastp_csv(fastp_curves(options, sink));
  EXPECT_NE(csv.find(",\"eve, \"\"the\"\" author\",1,0,3,0\n"), std::string::npos) << csv;
}

} // namespace
} // namespace fib
