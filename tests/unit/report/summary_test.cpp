// `fib report summary` and `fib report best` on a small dataset written by the test, with
// latencies chosen so that every speedup is a checkable number.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/report/summary.hpp>

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

std::string solution_json(std::string_view name, std::string_view author) {
  return fmt::format(
      R"({{"name": "{}", "definition": "d1", "author": "{}",
 "spec": {{"language": "python", "target_hardware": ["cuda"], "entry_point": "main.py::run"}},
 "sources": [{{"path": "main.py", "content": "def run(A):\n    return A\n"}}]}})",
      name, author);
}

// A d1 trace of `solution` on workload `uuid`: PASSED with these numbers, or RUNTIME_ERROR when
// `latency_ms` is negative.
std::string trace_line(std::string_view solution, std::string_view uuid, double latency_ms,
                       double reference_ms = 2.0, double abs_error = 0.0) {
  const std::string workload = fmt::format(
      R"({{"axes": {{"M": 2}}, "inputs": {{"A": {{"type": "random"}}}}, "uuid": "{}"}})", uuid);
  std::string evaluation;
  if (latency_ms < 0) {
    evaluation =
        R"({"status": "RUNTIME_ERROR", "environment": {"hardware": "cpu"}, "timestamp": "t", "log": "boom"})";
  } else {
    evaluation = fmt::format(
        R"({{"status": "PASSED", "environment": {{"hardware": "cpu"}}, "timestamp": "t", "correctness": {{"max_relative_error": 0.0, "max_absolute_error": {}}}, "performance": {{"latency_ms": {}, "reference_latency_ms": {}, "speedup_factor": {}}}}})",
        abs_error, latency_ms, reference_ms, reference_ms / latency_ms);
  }
  return fmt::format(
             R"({{"definition": "d1", "workload": {}, "solution": "{}", "evaluation": {}}})",
             workload, solution, evaluation) +
         "\n";
}

// d1: baseline 2.0 ms on w1 and w2; alice 1.0/1.0 (speedups 2, 2); bob 4.0/0.8 (0.5, 2.5);
// carol fails on w1. d2 has nothing.
void write_fixture(const TempDir& dir, bool with_baseline = true) {
  dir.write("definitions/op/d1.json", definition_json("d1"));
  dir.write("definitions/op/d2.json", definition_json("d2"));
  if (with_baseline) {
    dir.write("solutions/baseline/base.json", solution_json("base", "baseline"));
    dir.write("traces/baseline.jsonl",
              trace_line("base", "w1", 2.0) + trace_line("base", "w2", 2.0));
  }
  dir.write("solutions/alice/fast.json", solution_json("fast", "alice"));
  dir.write("solutions/bob/mixed.json", solution_json("mixed", "bob"));
  dir.write("solutions/carol/broken.json", solution_json("broken", "carol"));
  dir.write("traces/others.jsonl", trace_line("fast", "w1", 1.0) + trace_line("fast", "w2", 1.0) +
                                       trace_line("mixed", "w1", 4.0) +
                                       trace_line("mixed", "w2", 0.8) +
                                       trace_line("broken", "w1", -1.0));
}

TEST(ReportSummary, RanksAuthorsAgainstTheBaseline) {
  TempDir dir;
  write_fixture(dir);
  DiagnosticList sink;
  const SummaryReport report = summarize_datasets({{dir.path()}, "baseline"}, sink);
  EXPECT_FALSE(sink.has_errors()) << testing::describe(sink);
  ASSERT_EQ(report.datasets.size(), 1u);
  const DatasetSummary& d = report.datasets[0];
  EXPECT_FALSE(d.load_error);
  EXPECT_FALSE(d.ranking_error);
  EXPECT_EQ(d.summary.total, 7u);
  EXPECT_EQ(d.summary.passed, 6u);
  EXPECT_EQ(d.summary.failed, 1u);
  ASSERT_EQ(d.summary.rankings.size(), 3u);
  EXPECT_EQ(d.summary.rankings[0].author, "alice");
  EXPECT_DOUBLE_EQ(d.summary.rankings[0].metrics.avg_speedup, 2.0);
  EXPECT_DOUBLE_EQ(d.summary.rankings[0].metrics.win_rate, 1.0);
  EXPECT_EQ(d.summary.rankings[1].author, "bob");
  EXPECT_DOUBLE_EQ(d.summary.rankings[1].metrics.avg_speedup, 1.5);
  EXPECT_DOUBLE_EQ(d.summary.rankings[1].metrics.win_rate, 0.5);
  EXPECT_EQ(d.summary.rankings[2].author, "carol");
  EXPECT_DOUBLE_EQ(d.summary.rankings[2].metrics.success_rate, 0.0);

  const std::string expected = fmt::format(
      R"(dataset {}
  traces: 7 total, 6 passed, 1 failed
  rankings against baseline author "baseline":
    rank  author  avg_speedup  win_rate  success_rate  definitions  workloads
    1     alice   2.00x        100.0%    100.0%        1            2
    2     bob     1.50x        50.0%     100.0%        1            2
    3     carol   0.00x        0.0%      0.0%          1            1
)",
      dir.path().string());
  EXPECT_EQ(render_summary_text(report), expected);

  const Json json = summary_to_json(report);
  EXPECT_EQ(json["fib_report"], "summary");
  EXPECT_EQ(json["baseline_author"], "baseline");
  const Json& entry = json["datasets"][0];
  EXPECT_TRUE(entry["error"].is_null());
  EXPECT_EQ(entry["total"], 7);
  EXPECT_EQ(entry["passed"], 6);
  EXPECT_EQ(entry["failed"], 1);
  EXPECT_TRUE(entry["ranking_error"].is_null());
  EXPECT_EQ(entry["rankings"][1]["rank"], 2);
  EXPECT_EQ(entry["rankings"][1]["author"], "bob");
  EXPECT_DOUBLE_EQ(entry["rankings"][1]["avg_speedup"].get<double>(), 1.5);
  EXPECT_EQ(entry["rankings"][1]["best_solutions"], Json::parse(R"({"d1": "mixed"})"));
  // Key order is part of the format.
  std::vector<std::string> keys;
  for (const auto& item : entry.items()) {
    keys.push_back(item.key());
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"dataset", "error", "total", "passed", "failed",
                                            "rankings", "ranking_error"}));
}

TEST(ReportSummary, AnotherBaselineAuthor) {
  TempDir dir;
  write_fixture(dir);
  DiagnosticList sink;
  // Against alice (1.0 ms): bob 0.25 and 1.25 → 0.75; base 0.5 and 0.5.
  const SummaryReport report = summarize_datasets({{dir.path()}, "alice"}, sink);
  ASSERT_FALSE(sink.has_errors()) << testing::describe(sink);
  const auto& rankings = report.datasets[0].summary.rankings;
  ASSERT_EQ(rankings.size(), 3u);
  EXPECT_EQ(rankings[0].author, "bob");
  EXPECT_DOUBLE_EQ(rankings[0].metrics.avg_speedup, 0.75);
  EXPECT_EQ(rankings[1].author, "baseline");
  EXPECT_DOUBLE_EQ(rankings[1].metrics.avg_speedup, 0.5);
}

TEST(ReportSummary, MissingBaselineKeepsTheCountsAndReportsTheCode) {
  TempDir dir;
  write_fixture(dir, /*with_baseline=*/false);
  DiagnosticList sink;
  const SummaryReport report = summarize_datasets({{dir.path()}, "baseline"}, sink);
  EXPECT_EQ(testing::error_codes(sink), std::vector<std::string>{"score.no-baseline"});
  const DatasetSummary& d = report.datasets[0];
  ASSERT_TRUE(d.ranking_error);
  EXPECT_EQ(d.ranking_error->code, codes::k_score_no_baseline);
  EXPECT_EQ(d.summary.total, 5u);
  EXPECT_EQ(d.summary.passed, 4u);
  EXPECT_EQ(d.summary.failed, 1u);
  EXPECT_TRUE(d.summary.rankings.empty());
  EXPECT_EQ(render_summary_text(report),
            fmt::format("dataset {}\n  traces: 5 total, 4 passed, 1 failed\n  rankings: not "
                        "available (score.no-baseline)\n",
                        dir.path().string()));
  const Json json = summary_to_json(report);
  EXPECT_TRUE(json["datasets"][0]["rankings"].is_null());
  EXPECT_EQ(json["datasets"][0]["ranking_error"]["code"], "score.no-baseline");
  EXPECT_EQ(json["datasets"][0]["total"], 5);
}

TEST(ReportSummary, EachDatasetHasItsSectionAndAMissingOneIsAnError) {
  TempDir dir;
  write_fixture(dir);
  dir.write("empty/definitions/op/d1.json", definition_json("d1"));
  DiagnosticList sink;
  const SummaryReport report = summarize_datasets(
      {{dir.path(), dir.path() / "empty", dir.path() / "missing"}, "baseline"}, sink);
  EXPECT_EQ(testing::error_codes(sink), std::vector<std::string>{"io.not-found"});
  ASSERT_EQ(report.datasets.size(), 3u);
  EXPECT_EQ(report.datasets[1].summary.total, 0u);
  ASSERT_TRUE(report.datasets[2].load_error);
  const std::string text = render_summary_text(report);
  EXPECT_NE(text.find("  traces: 0 total, 0 passed, 0 failed\n  rankings: none (no traces)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  not loaded: io.not-found\n"), std::string::npos) << text;
  const Json json = summary_to_json(report);
  EXPECT_EQ(json["datasets"][2]["error"]["code"], "io.not-found");
  EXPECT_TRUE(json["datasets"][2]["total"].is_null());
}

TEST(ReportBest, PicksTheHighestRecordedSpeedupWithinTheBounds) {
  TempDir dir;
  write_fixture(dir);
  // An even faster trace, but outside the default error bounds.
  dir.write("traces/sloppy.jsonl", trace_line("fast", "w3", 0.1, 2.0, 0.5));
  DiagnosticList sink;
  BestReportOptions options;
  options.datasets = {dir.path()};
  const BestReport report = best_traces(options, sink);
  EXPECT_FALSE(sink.has_errors()) << testing::describe(sink);
  ASSERT_EQ(report.datasets.size(), 1u);
  const auto& entries = report.datasets[0].entries;
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].definition, "d1");
  ASSERT_TRUE(entries[0].found);
  EXPECT_EQ(entries[0].solution, "mixed");
  EXPECT_EQ(entries[0].author, "bob");
  EXPECT_EQ(entries[0].workload, "w2");
  EXPECT_DOUBLE_EQ(entries[0].speedup_factor, 2.5);
  EXPECT_DOUBLE_EQ(entries[0].latency_ms, 0.8);
  EXPECT_DOUBLE_EQ(entries[0].reference_latency_ms, 2.0);
  EXPECT_EQ(entries[1].definition, "d2");
  EXPECT_FALSE(entries[1].found);
  EXPECT_EQ(render_best_text(report),
            fmt::format("dataset {} (atol 0.01, rtol 0.01)\n"
                        "  d1  mixed (bob)  speedup 2.50x  latency 0.800 ms  "
                        "reference 2.000 ms  workload w2\n"
                        "  d2  no PASSED trace within the bounds\n",
                        dir.path().string()));
  const Json json = best_to_json(report);
  EXPECT_EQ(json["fib_report"], "best");
  EXPECT_DOUBLE_EQ(json["atol"].get<double>(), 0.01);
  EXPECT_EQ(json["datasets"][0]["definitions"][0]["solution"], "mixed");
  EXPECT_DOUBLE_EQ(json["datasets"][0]["definitions"][0]["latency_ms"].get<double>(), 0.8);
  EXPECT_TRUE(json["datasets"][0]["definitions"][1]["solution"].is_null());

  // Looser bounds let the sloppy trace win.
  options.bounds = ErrorBounds{1.0, 1.0};
  const BestReport loose = best_traces(options, sink);
  EXPECT_EQ(loose.datasets[0].entries[0].workload, "w3");
  EXPECT_DOUBLE_EQ(loose.datasets[0].entries[0].speedup_factor, 20.0);
}

TEST(ReportBest, SelectedDefinitionsAndUnknownNames) {
  TempDir dir;
  write_fixture(dir);
  DiagnosticList sink;
  BestReportOptions options;
  options.datasets = {dir.path()};
  options.definitions = {"d2", "nope"};
  const BestReport report = best_traces(options, sink);
  EXPECT_EQ(testing::error_codes(sink), std::vector<std::string>{"score.unknown-definition"});
  ASSERT_EQ(report.datasets[0].entries.size(), 1u);
  EXPECT_EQ(report.datasets[0].entries[0].definition, "d2");
}

TEST(ReportCorpus, SummaryOfTheCorpusDataset) {
  const auto corpus = testing::corpus_dir();
  if (corpus.empty()) {
    GTEST_SKIP() << "../shared/corpus is absent";
  }
  DiagnosticList load_sink;
  auto set = load_trace_set(corpus / "dataset", load_sink);
  ASSERT_TRUE(set.has_value()) << testing::describe(load_sink);
  EXPECT_GE(set->definitions.size(), 19u);
  EXPECT_GE(set->solutions.size(), 4u);

  DiagnosticList sink;
  const SummaryReport report = summarize_datasets({{corpus / "dataset"}, "baseline"}, sink);
  ASSERT_EQ(report.datasets.size(), 1u);
  const DatasetSummary& d = report.datasets[0];
  EXPECT_FALSE(d.load_error);
  // The three real trace files: 62 lines, PASSED and failed runs (INCORRECT_NUMERICAL,
  // RUNTIME_ERROR) mixed.
  EXPECT_EQ(d.summary.total, 62u);
  EXPECT_EQ(d.summary.passed, 36u);
  EXPECT_EQ(d.summary.failed, 26u);
  // The corpus has solutions but no baseline author: the ranking fails with that code.
  ASSERT_TRUE(d.ranking_error);
  EXPECT_EQ(d.ranking_error->code, codes::k_score_no_baseline);
  EXPECT_EQ(testing::error_codes(sink), std::vector<std::string>{"score.no-baseline"});
  EXPECT_EQ(render_summary_text(report),
            fmt::format("dataset {}\n  traces: 62 total, 36 passed, 26 failed\n  rankings: not "
                        "available (score.no-baseline)\n",
                        (corpus / "dataset").string()));
}

} // namespace
} // namespace fib
