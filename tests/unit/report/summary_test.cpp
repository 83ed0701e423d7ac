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
  traces: 7 total, 6 passed, 1 failed (1 RUNTIME_ERROR)
  by author:
    author    solutions  traces  PASSED  failed
    alice     1          2       2
    baseline  1          2       2
    bob       1          2       2
    carol     1          1       0       1 RUNTIME_ERROR
  by solution:
    solution  author    definition  traces  PASSED  failed
    fast      alice     d1          2       2
    base      baseline  d1          2       2
    mixed     bob       d1          2       2
    broken    carol     d1          1       0       1 RUNTIME_ERROR
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
  EXPECT_EQ(keys,
            (std::vector<std::string>{"dataset", "error", "total", "passed", "failed", "statuses",
                                      "authors", "solutions", "against", "rankings",
                                      "definitions_without_baseline", "ranking_error"}));
  EXPECT_EQ(entry["statuses"], Json::parse(R"({"PASSED": 6, "RUNTIME_ERROR": 1})"));
  EXPECT_EQ(entry["authors"][3], Json::parse(R"({"author": "carol", "solutions": 1, "traces": 1,
                            "statuses": {"RUNTIME_ERROR": 1}})"));
  EXPECT_EQ(entry["solutions"][0]["definition"], "d1");
  EXPECT_EQ(entry["against"], "baseline_author");
  EXPECT_EQ(entry["definitions_without_baseline"], Json::array());
}

// Without any solution by the baseline author, the automatic basis ranks against the reference:
// the speedups the traces record (reference 2.0 ms: alice 2 and 2, bob 0.5 and 2.5, carol failed).
TEST(ReportSummary, WithoutABaselineAuthorRanksAgainstTheReference) {
  TempDir dir;
  write_fixture(dir, /*with_baseline=*/false);
  DiagnosticList sink;
  const SummaryReport report = summarize_datasets({{dir.path()}, "baseline"}, sink);
  EXPECT_FALSE(sink.has_errors()) << testing::describe(sink);
  const DatasetSummary& d = report.datasets[0];
  EXPECT_EQ(d.basis, SpeedupBasis::reference);
  EXPECT_FALSE(d.ranking_error);
  ASSERT_EQ(d.summary.rankings.size(), 3u);
  EXPECT_EQ(d.summary.rankings[0].author, "alice");
  EXPECT_DOUBLE_EQ(d.summary.rankings[0].metrics.avg_speedup, 2.0);
  EXPECT_EQ(d.summary.rankings[1].author, "bob");
  EXPECT_DOUBLE_EQ(d.summary.rankings[1].metrics.avg_speedup, 1.5);
  EXPECT_DOUBLE_EQ(d.summary.rankings[1].metrics.win_rate, 0.5);
  EXPECT_EQ(d.summary.rankings[2].author, "carol");
  EXPECT_DOUBLE_EQ(d.summary.rankings[2].metrics.success_rate, 0.0);
  EXPECT_EQ(d.summary.rankings[2].metrics.workloads, 1u);
  const std::string text = render_summary_text(report);
  EXPECT_NE(text.find("  rankings against the reference (the speedups the traces record; no "
                      "solution by baseline author \"baseline\"):\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(summary_to_json(report)["datasets"][0]["against"], "reference");

  // Asked for explicitly, the label does not give a reason; the numbers are the same even with a
  // baseline author present.
  TempDir with_baseline;
  write_fixture(with_baseline);
  SummaryReportOptions options{{with_baseline.path()}, "baseline", SummaryBasis::reference};
  const SummaryReport explicit_report = summarize_datasets(options, sink);
  EXPECT_NE(render_summary_text(explicit_report)
                .find("  rankings against the reference (the speedups the traces record):\n"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(explicit_report.datasets[0].summary.rankings[0].metrics.avg_speedup, 2.0);
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

// Asked to rank against the baseline author, a dataset where definitions lack its solution gets
// the old tool's error, with every such definition named (the old tool stops at the first).
TEST(ReportSummary, MissingBaselineKeepsTheCountsAndReportsTheCode) {
  TempDir dir;
  write_fixture(dir, /*with_baseline=*/false);
  dir.write("solutions/alice/fast2.json",
            fmt::format(R"({{"name": "fast2", "definition": "d2", "author": "alice",
 "spec": {{"language": "python", "target_hardware": ["cuda"], "entry_point": "main.py::run"}},
 "sources": [{{"path": "main.py", "content": "def run(A):\n    return A\n"}}]}})"));
  DiagnosticList sink;
  const SummaryReport report =
      summarize_datasets({{dir.path()}, "baseline", SummaryBasis::baseline_author}, sink);
  EXPECT_EQ(testing::error_codes(sink), std::vector<std::string>{"score.no-baseline"});
  const DatasetSummary& d = report.datasets[0];
  ASSERT_TRUE(d.ranking_error);
  EXPECT_EQ(d.ranking_error->code, codes::k_score_no_baseline);
  EXPECT_EQ(d.summary.total, 5u);
  EXPECT_EQ(d.summary.passed, 4u);
  EXPECT_EQ(d.summary.failed, 1u);
  EXPECT_TRUE(d.summary.rankings.empty());
  EXPECT_EQ(d.definitions_without_baseline, (std::vector<std::string>{"d1", "d2"}));
  EXPECT_NE(d.ranking_error->message.find("(2 definitions in all lack exactly one: d1, d2)"),
            std::string::npos)
      << d.ranking_error->message;
  const std::string text = render_summary_text(report);
  EXPECT_NE(text.find("\n  rankings: not available (score.no-baseline)\n  definitions without "
                      "exactly one solution by baseline author \"baseline\" (2):\n    d1\n    "
                      "d2\n"),
            std::string::npos)
      << text;
  const Json json = summary_to_json(report);
  EXPECT_EQ(json["datasets"][0]["definitions_without_baseline"], Json::parse(R"(["d1", "d2"])"));
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
  ASSERT_EQ(entries[0].outcome, BestOutcome::found);
  EXPECT_EQ(entries[0].solution, "mixed");
  EXPECT_EQ(entries[0].author, "bob");
  EXPECT_EQ(entries[0].workload, "w2");
  EXPECT_DOUBLE_EQ(entries[0].speedup_factor, 2.5);
  EXPECT_DOUBLE_EQ(entries[0].latency_ms, 0.8);
  EXPECT_DOUBLE_EQ(entries[0].reference_latency_ms, 2.0);
  EXPECT_EQ(entries[1].definition, "d2");
  EXPECT_EQ(entries[1].outcome, BestOutcome::no_traces);
  EXPECT_EQ(entries[0].hardware, "cpu");
  EXPECT_EQ(entries[0].traces, 8u);
  EXPECT_EQ(render_best_text(report),
            fmt::format("dataset {} (atol 0.01, rtol 0.01)\n"
                        "  d1  mixed (bob)  speedup 2.50x  latency 0.800 ms  "
                        "reference 2.000 ms  errors 0 / 0  workload w2  on cpu\n"
                        "  d2  no traces\n",
                        dir.path().string()));
  const Json json = best_to_json(report);
  EXPECT_EQ(json["fib_report"], "best");
  EXPECT_DOUBLE_EQ(json["atol"].get<double>(), 0.01);
  EXPECT_EQ(json["datasets"][0]["definitions"][0]["solution"], "mixed");
  EXPECT_DOUBLE_EQ(json["datasets"][0]["definitions"][0]["latency_ms"].get<double>(), 0.8);
  EXPECT_TRUE(json["datasets"][0]["definitions"][1]["solution"].is_null());
  EXPECT_EQ(json["datasets"][0]["definitions"][1]["outcome"], "no_traces");
  EXPECT_EQ(json["datasets"][0]["definitions"][0]["outcome"], "found");

  // Looser bounds let the sloppy trace win.
  options.bounds = ErrorBounds{1.0, 1.0};
  const BestReport loose = best_traces(options, sink);
  EXPECT_EQ(loose.datasets[0].entries[0].workload, "w3");
  EXPECT_DOUBLE_EQ(loose.datasets[0].entries[0].speedup_factor, 20.0);
}

// --by-device: the same scoring on each device's traces apart. alice is 2x on the cpu traces and
// 0.5x on the gpu ones; bob only ran on the gpu.
TEST(ReportSummary, PerDeviceRankingsUseEachDevicesTracesOnly) {
  TempDir dir;
  dir.write("definitions/op/d1.json", definition_json("d1"));
  dir.write("solutions/alice/fast.json", solution_json("fast", "alice"));
  dir.write("solutions/bob/mixed.json", solution_json("mixed", "bob"));
  const auto on = [](std::string line, std::string_view hardware) {
    const std::string from = R"("hardware": "cpu")";
    line.replace(line.find(from), from.size(), fmt::format(R"("hardware": "{}")", hardware));
    return line;
  };
  dir.write("traces/t.jsonl", trace_line("fast", "w1", 1.0) +
                                  on(trace_line("fast", "w1", 4.0), "gpu") +
                                  on(trace_line("mixed", "w1", 0.5), "gpu"));
  DiagnosticList sink;
  SummaryReportOptions options{
      {dir.path()}, "baseline", SummaryBasis::automatic, SummaryGrouping::per_device};
  const SummaryReport report = summarize_datasets(options, sink);
  EXPECT_FALSE(sink.has_errors()) << testing::describe(sink);
  const DatasetSummary& d = report.datasets.at(0);
  ASSERT_EQ(d.devices.size(), 2u);
  EXPECT_EQ(d.devices[0].hardware, "cpu");
  EXPECT_EQ(d.devices[0].traces, 1u);
  ASSERT_EQ(d.devices[0].rankings.size(), 1u);
  EXPECT_EQ(d.devices[0].rankings[0].author, "alice");
  EXPECT_DOUBLE_EQ(d.devices[0].rankings[0].metrics.avg_speedup, 2.0);
  EXPECT_EQ(d.devices[1].hardware, "gpu");
  ASSERT_EQ(d.devices[1].rankings.size(), 2u);
  EXPECT_EQ(d.devices[1].rankings[0].author, "bob");
  EXPECT_DOUBLE_EQ(d.devices[1].rankings[0].metrics.avg_speedup, 4.0);
  EXPECT_DOUBLE_EQ(d.devices[1].rankings[1].metrics.avg_speedup, 0.5);
  const std::string text = render_summary_text(report);
  EXPECT_NE(text.find("  on gpu (2 traces): rankings against the reference:\n    rank  author"),
            std::string::npos)
      << text;
  const Json json = summary_to_json(report);
  EXPECT_EQ(json["datasets"][0]["devices"][1]["hardware"], "gpu");
  EXPECT_EQ(json["datasets"][0]["devices"][1]["rankings"][0]["author"], "bob");
  // Without --by-device the key is not there.
  options.grouping = SummaryGrouping::overall;
  EXPECT_FALSE(
      summary_to_json(summarize_datasets(options, sink))["datasets"][0].contains("devices"));
}

// "No traces", "no PASSED trace" and "none within the bounds" are told apart; the best trace's
// errors are shown, and a timing its settings make meaningless is flagged.
TEST(ReportBest, SaysWhyThereIsNoBestAndFlagsMeaninglessTimings) {
  TempDir dir;
  dir.write("definitions/op/d1.json", definition_json("d1"));
  dir.write("solutions/alice/fast.json", solution_json("fast", "alice"));
  std::string settled = trace_line("fast", "w1", 1.0, 2.0, 0.004);
  const std::string settings_key = R"(, "performance")";
  settled.insert(settled.find(settings_key),
                 R"(, "settings": {"warmup": 0, "iterations": 1, "device": "cpu"})");
  dir.write("traces/t.jsonl", settled);
  DiagnosticList sink;
  BestReportOptions options;
  options.datasets = {dir.path()};
  BestReport report = best_traces(options, sink);
  const BestEntry& best = report.datasets[0].entries.at(0);
  ASSERT_EQ(best.outcome, BestOutcome::found);
  EXPECT_DOUBLE_EQ(best.max_absolute_error, 0.004);
  EXPECT_EQ(best.timing_warning, "--warmup 0, --iterations 1");
  EXPECT_NE(render_best_text(report).find(
                "errors 0.004 / 0  workload w1  on cpu  [timed with --warmup 0, --iterations 1: "
                "not a steady-state figure]"),
            std::string::npos)
      << render_best_text(report);
  EXPECT_EQ(best_to_json(report)["datasets"][0]["definitions"][0]["timing_warning"],
            "--warmup 0, --iterations 1");

  dir.write("traces/t.jsonl", trace_line("fast", "w1", -1.0) + trace_line("fast", "w2", -1.0));
  report = best_traces(options, sink);
  EXPECT_EQ(report.datasets[0].entries.at(0).outcome, BestOutcome::no_passed);
  EXPECT_NE(render_best_text(report).find("  d1  no PASSED trace (2 traces: 2 RUNTIME_ERROR)\n"),
            std::string::npos)
      << render_best_text(report);

  dir.write("traces/t.jsonl", trace_line("fast", "w1", 1.0, 2.0, 0.5));
  report = best_traces(options, sink);
  EXPECT_EQ(report.datasets[0].entries.at(0).outcome, BestOutcome::none_within_bounds);
  EXPECT_NE(render_best_text(report).find(
                "  d1  no PASSED trace within the bounds (1 PASSED of 1 trace)\n"),
            std::string::npos)
      << render_best_text(report);
  EXPECT_FALSE(sink.has_errors()) << testing::describe(sink);
}

// --by-device: one best trace per environment.hardware the definition's traces name.
TEST(ReportBest, PerDeviceEachHardwareHasItsOwnBest) {
  TempDir dir;
  dir.write("definitions/op/d1.json", definition_json("d1"));
  dir.write("solutions/alice/fast.json", solution_json("fast", "alice"));
  dir.write("solutions/bob/slow.json", solution_json("slow", "bob"));
  const auto on = [](std::string line, std::string_view hardware) {
    const std::string from = R"("hardware": "cpu")";
    line.replace(line.find(from), from.size(), fmt::format(R"("hardware": "{}")", hardware));
    return line;
  };
  dir.write("traces/t.jsonl", on(trace_line("fast", "w1", 1.0), "NVIDIA H200") +
                                  on(trace_line("slow", "w1", 0.5), "NVIDIA H200") +
                                  on(trace_line("fast", "w1", 4.0), "AMD EPYC") +
                                  on(trace_line("slow", "w1", -1.0), "AMD EPYC"));
  DiagnosticList sink;
  BestReportOptions options;
  options.datasets = {dir.path()};
  options.grouping = BestGrouping::per_device;
  const BestReport report = best_traces(options, sink);
  const auto& entries = report.datasets[0].entries;
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].hardware, "AMD EPYC");
  EXPECT_EQ(entries[0].solution, "fast");
  EXPECT_DOUBLE_EQ(entries[0].speedup_factor, 0.5);
  EXPECT_EQ(entries[0].traces, 2u);
  EXPECT_EQ(entries[1].hardware, "NVIDIA H200");
  EXPECT_EQ(entries[1].solution, "slow");
  EXPECT_DOUBLE_EQ(entries[1].speedup_factor, 4.0);
  EXPECT_NE(render_best_text(report).find("  d1  NVIDIA H200  slow (bob)    speedup 4.00x"),
            std::string::npos)
      << render_best_text(report);
  EXPECT_EQ(best_to_json(report)["grouping"], "device");
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
  // The corpus has solutions but no baseline author: ranked against the reference, every author
  // with traces gets a score.
  EXPECT_FALSE(d.ranking_error);
  EXPECT_TRUE(testing::error_codes(sink).empty()) << testing::describe(sink);
  EXPECT_EQ(d.basis, SpeedupBasis::reference);
  ASSERT_FALSE(d.summary.rankings.empty());
  std::size_t traced_authors = 0;
  for (const ResultBreakdown& author : d.authors) {
    traced_authors += author.traces > 0 ? 1 : 0;
  }
  EXPECT_EQ(d.summary.rankings.size(), traced_authors);
  std::size_t by_status = 0;
  for (const auto& [status, count] : d.statuses) {
    by_status += count;
  }
  EXPECT_EQ(by_status, 62u);
  EXPECT_EQ(d.statuses.at("PASSED"), 36u);
  // Against the baseline author, the old tool's error, naming every definition with solutions.
  DiagnosticList baseline_sink;
  const SummaryReport baseline_report = summarize_datasets(
      {{corpus / "dataset"}, "baseline", SummaryBasis::baseline_author}, baseline_sink);
  const DatasetSummary& b = baseline_report.datasets[0];
  ASSERT_TRUE(b.ranking_error);
  EXPECT_EQ(b.ranking_error->code, codes::k_score_no_baseline);
  std::size_t with_solutions = 0;
  for (const auto& [name, definition] : set->definitions) {
    with_solutions += set->solutions_of(name).empty() ? 0 : 1;
  }
  EXPECT_EQ(b.definitions_without_baseline.size(), with_solutions);
  EXPECT_EQ(testing::error_codes(baseline_sink), std::vector<std::string>{"score.no-baseline"});
}

} // namespace
} // namespace fib
