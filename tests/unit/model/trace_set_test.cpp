#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/trace_set.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace fib {
namespace {

using testing::TempDir;

// --- Small documents -----------------------------------------------------------------------------

std::string definition_json(std::string_view name, std::string_view op_type = "op") {
  return fmt::format(
      R"({{"name": "{}", "op_type": "{}", "axes": {{"M": {{"type": "var"}}}},
 "inputs": {{"A": {{"shape": ["M"], "dtype": "float32"}}}},
 "outputs": {{"B": {{"shape": ["M"], "dtype": "float32"}}}},
 "reference": "def run(A):\n    return A\n"}})",
      name, op_type);
}

std::string solution_json(std::string_view name, std::string_view definition,
                          std::string_view author) {
  return fmt::format(
      R"({{"name": "{}", "definition": "{}", "author": "{}",
 "spec": {{"language": "python", "target_hardware": ["cuda"], "entry_point": "main.py::run"}},
 "sources": [{{"path": "main.py", "content": "def run(A):\n    return A\n"}}]}})",
      name, definition, author);
}

std::string workload_object(std::string_view uuid, std::int64_t m) {
  return fmt::format(
      R"({{"axes": {{"M": {}}}, "inputs": {{"A": {{"type": "random"}}}}, "uuid": "{}"}})", m, uuid);
}

// A workloads/ line with explicit nulls, as a hand-written file would have them.
std::string workload_line(std::string_view definition, std::string_view uuid, std::int64_t m = 2) {
  return fmt::format(
      R"({{"definition": "{}", "workload": {}, "solution": null, "evaluation": null}})", definition,
      workload_object(uuid, m));
}

std::string passed_evaluation(double latency_ms, double speedup = 1.0, double abs_error = 0.0,
                              double rel_error = 0.0) {
  return fmt::format(
      R"({{"status": "PASSED", "environment": {{"hardware": "cpu"}}, "timestamp": "2026-01-01T00:00:00Z", "correctness": {{"max_relative_error": {}, "max_absolute_error": {}}}, "performance": {{"latency_ms": {}, "reference_latency_ms": 1.0, "speedup_factor": {}}}}})",
      rel_error, abs_error, latency_ms, speedup);
}

std::string failed_evaluation(std::string_view status = "RUNTIME_ERROR") {
  return fmt::format(
      R"({{"status": "{}", "environment": {{"hardware": "cpu"}}, "timestamp": "2026-01-01T00:00:00Z", "log": "boom"}})",
      status);
}

std::string trace_line(std::string_view definition, std::string_view uuid,
                       std::string_view solution, const std::string& evaluation,
                       std::int64_t m = 2) {
  return fmt::format(
      R"({{"definition": "{}", "workload": {}, "solution": "{}", "evaluation": {}}})", definition,
      workload_object(uuid, m), solution, evaluation);
}

std::string lines(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    out += item + "\n";
  }
  return out;
}

// --- A scored dataset ----------------------------------------------------------------------------

// One evaluated run of a solution: PASSED with this latency, or a failure when it is nullopt.
struct Run {
  std::string uuid;
  std::optional<double> latency_ms;
};

struct SolutionRuns {
  std::string name;
  std::string author;
  std::vector<Run> runs;
  std::string definition = "d1";
};

// Writes definitions (name → op_type), each solution in the canonical layout and its runs to
// traces/<author>/<op_type>/<definition>.jsonl.
void write_scored(const TempDir& dir, const std::map<std::string, std::string>& definitions,
                  const std::vector<SolutionRuns>& solutions) {
  for (const auto& [name, op_type] : definitions) {
    dir.write(fmt::format("definitions/{}/{}.json", op_type, name), definition_json(name, op_type));
  }
  std::map<std::string, std::string> trace_files;
  for (const SolutionRuns& s : solutions) {
    const std::string& op_type = definitions.at(s.definition);
    dir.write(fmt::format("solutions/{}/{}/{}/{}.json", s.author, op_type, s.definition, s.name),
              solution_json(s.name, s.definition, s.author));
    std::string& file =
        trace_files[fmt::format("traces/{}/{}/{}.jsonl", s.author, op_type, s.definition)];
    for (const Run& run : s.runs) {
      const std::string evaluation =
          run.latency_ms ? passed_evaluation(*run.latency_ms) : failed_evaluation();
      file += trace_line(s.definition, run.uuid, s.name, evaluation) + "\n";
    }
  }
  for (const auto& [path, text] : trace_files) {
    dir.write(path, text);
  }
}

TraceSet load_or_die(const TempDir& dir) {
  DiagnosticList sink;
  auto set = load_trace_set(dir.path(), sink);
  EXPECT_TRUE(set.has_value()) << (set ? "" : set.error().code + ": " + set.error().message);
  EXPECT_EQ(sink.count(Severity::error), 0u);
  if (!set) {
    return TraceSet{};
  }
  return std::move(*set);
}

const std::map<std::string, std::string> k_one_definition = {{"d1", "attn"}};

// The baseline of items 73-76: w1 = 10 ms, w2 = 8 ms.
SolutionRuns baseline_runs() {
  return {"base", "baseline", {{"w1", 10.0}, {"w2", 8.0}}};
}

// --- Loading (items 67-70) -----------------------------------------------------------------------

// Item 67.
TEST(TraceSet, ExplicitNullsLoadAsWorkloadTraceAndEvaluatedLineAsTrace) {
  TempDir dir;
  dir.write("definitions/op/d1.json", definition_json("d1"));
  dir.write("solutions/a/op/d1/s1.json", solution_json("s1", "d1", "a"));
  dir.write("workloads/op/d1.jsonl", lines({workload_line("d1", "w1")}));
  dir.write("traces/a/op/d1.jsonl", lines({trace_line("d1", "w1", "s1", passed_evaluation(1.0))}));
  const TraceSet set = load_or_die(dir);

  ASSERT_EQ(set.workloads.count("d1"), 1u);
  ASSERT_EQ(set.workloads.at("d1").size(), 1u);
  EXPECT_TRUE(set.workloads.at("d1")[0].is_workload_trace());
  EXPECT_FALSE(set.workloads.at("d1")[0].solution.has_value());
  EXPECT_FALSE(set.workloads.at("d1")[0].evaluation.has_value());

  ASSERT_EQ(set.traces.at("d1").size(), 1u);
  const Trace& trace = set.traces.at("d1")[0];
  EXPECT_FALSE(trace.is_workload_trace());
  EXPECT_TRUE(trace.is_successful());
  EXPECT_EQ(trace.solution, "s1");
}

// Item 68: load → save → load keeps names, counts and workload-ness.
TEST(TraceSet, RoundTripThroughToJsonKeepsNamesCountsAndWorkloadness) {
  TempDir first;
  first.write("definitions/op/d1.json", definition_json("d1"));
  first.write("solutions/a/op/d1/s1.json", solution_json("s1", "d1", "a"));
  first.write("workloads/op/d1.jsonl",
              lines({workload_line("d1", "w1"), workload_line("d1", "w2")}));
  first.write("traces/a/op/d1.jsonl", lines({trace_line("d1", "w1", "s1", passed_evaluation(1.0)),
                                             trace_line("d1", "w2", "s1", failed_evaluation())}));
  const TraceSet loaded = load_or_die(first);

  TempDir second;
  for (const auto& [name, definition] : loaded.definitions) {
    second.write(fmt::format("definitions/{}.json", name), to_json(definition).dump(2));
  }
  for (const Solution& solution : loaded.solutions) {
    second.write(fmt::format("solutions/{}.json", solution.name), to_json(solution).dump(2));
  }
  for (const auto& [name, traces] : loaded.workloads) {
    std::string text;
    for (const Trace& trace : traces) {
      text += to_json(trace).dump() + "\n";
    }
    second.write(fmt::format("workloads/{}.jsonl", name), text);
  }
  for (const auto& [name, traces] : loaded.traces) {
    std::string text;
    for (const Trace& trace : traces) {
      text += to_json(trace).dump() + "\n";
    }
    second.write(fmt::format("traces/{}.jsonl", name), text);
  }
  const TraceSet reloaded = load_or_die(second);

  ASSERT_EQ(reloaded.definitions.size(), 1u);
  EXPECT_EQ(reloaded.definitions.begin()->first, "d1");
  ASSERT_EQ(reloaded.solutions.size(), 1u);
  EXPECT_EQ(reloaded.solutions[0].name, "s1");
  ASSERT_EQ(reloaded.workloads.at("d1").size(), 2u);
  for (const Trace& trace : reloaded.workloads.at("d1")) {
    EXPECT_TRUE(trace.is_workload_trace());
  }
  ASSERT_EQ(reloaded.traces.at("d1").size(), 2u);
  EXPECT_TRUE(reloaded.traces.at("d1")[0].is_successful());
  EXPECT_FALSE(reloaded.traces.at("d1")[1].is_workload_trace());
  EXPECT_FALSE(reloaded.traces.at("d1")[1].is_successful());
}

// Item 69: a flat layout (which `validate` ignores) loads.
TEST(TraceSet, FlatLayoutLoads) {
  TempDir dir;
  dir.write("definitions/x.json", definition_json("x"));
  dir.write("solutions/y.json", solution_json("y", "x", "someone"));
  dir.write("workloads/x.jsonl", lines({workload_line("x", "w1")}));
  dir.write("traces/x.jsonl", lines({trace_line("x", "w1", "y", passed_evaluation(1.0))}));
  const TraceSet set = load_or_die(dir);

  EXPECT_EQ(set.definitions.size(), 1u);
  ASSERT_NE(set.find_definition("x"), nullptr);
  EXPECT_EQ(set.solutions.size(), 1u);
  const Solution* y = set.find_solution("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->definition, "x");
  EXPECT_EQ(y->author, "someone");
  EXPECT_EQ(set.traces.at("x").size(), 1u);
  EXPECT_EQ(set.workloads.at("x").size(), 1u);
}

// The nested layout of items 70-72: s1 (author a) passes on w1, s2 (author b) fails on w1.
void write_nested(const TempDir& dir) {
  dir.write("definitions/op/d1.json", definition_json("d1"));
  dir.write("solutions/a/op/d1/s1.json", solution_json("s1", "d1", "a"));
  dir.write("solutions/b/op/d1/s2.json", solution_json("s2", "d1", "b"));
  dir.write("workloads/op/d1.jsonl", lines({workload_line("d1", "w1", 2)}));
  dir.write("traces/a/op/d1.jsonl",
            lines({trace_line("d1", "w1", "s1", passed_evaluation(1.0, 1.5), 2)}));
  dir.write("traces/b/op/d1.jsonl",
            lines({trace_line("d1", "w1", "s2", failed_evaluation("INCORRECT_SHAPE"), 2)}));
}

// Item 70.
TEST(TraceSet, NestedLayoutLoadsAndGroupsByJsonDefinition) {
  TempDir dir;
  write_nested(dir);
  const TraceSet set = load_or_die(dir);

  EXPECT_EQ(set.root, dir.path());
  ASSERT_NE(set.find_definition("d1"), nullptr);
  EXPECT_EQ(set.find_definition("d1")->op_type, "op");
  const Solution* s1 = set.find_solution("s1");
  ASSERT_NE(s1, nullptr);
  EXPECT_EQ(s1->author, "a");
  EXPECT_EQ(set.find_solution("nope"), nullptr);
  ASSERT_EQ(set.solutions.size(), 2u);
  EXPECT_EQ(set.solutions[0].name, "s1"); // load order = sorted paths (a/ before b/)
  EXPECT_EQ(set.solutions[1].name, "s2");
  ASSERT_EQ(set.solutions_of("d1").size(), 2u);
  EXPECT_EQ(set.workloads.at("d1").size(), 1u);
  ASSERT_EQ(set.traces.at("d1").size(), 2u);
  EXPECT_TRUE(set.traces.at("d1")[0].is_successful());
  EXPECT_EQ(set.traces.at("d1")[1].evaluation->status, EvaluationStatus::incorrect_shape);
}

TEST(TraceSet, FilesAtAnyDepthLoadAndOtherExtensionsAreIgnored) {
  TempDir dir;
  dir.write("definitions/a/b/c/deep.json", definition_json("deep"));
  dir.write("definitions/top.json", definition_json("top"));
  dir.write("definitions/notes.txt", "not json");
  dir.write("definitions/op/ignored.jsonl", "not json either");
  dir.write("solutions/x/y/z/w/v/s.json", solution_json("s", "deep", "me"));
  const TraceSet set = load_or_die(dir);
  EXPECT_EQ(set.definitions.size(), 2u);
  EXPECT_NE(set.find_definition("deep"), nullptr);
  EXPECT_NE(set.find_definition("top"), nullptr);
  ASSERT_NE(set.find_solution("s"), nullptr);
  EXPECT_EQ(set.solutions_of("deep").size(), 1u);
  EXPECT_TRUE(set.traces.empty());
  EXPECT_TRUE(set.workloads.empty());
}

TEST(TraceSet, LoadsTheExampleDataset) {
  DiagnosticList sink;
  auto set = load_trace_set(std::filesystem::path(FIB_SOURCE_DIR) / "examples" / "dataset", sink);
  ASSERT_TRUE(set.has_value()) << set.error().message;
  EXPECT_FALSE(sink.has_errors());
  EXPECT_NE(set->find_definition("rmsnorm_h64"), nullptr);
  EXPECT_NE(set->find_solution("torch_rmsnorm_h64"), nullptr);
  EXPECT_FALSE(set->traces.at("rmsnorm_h64").empty());
}

// --- Load errors ---------------------------------------------------------------------------------

TEST(TraceSet, DuplicateDefinitionNameIsReportedOnTheLaterFile) {
  TempDir dir;
  dir.write("definitions/a/x.json", definition_json("x", "a"));
  const auto later = dir.write("definitions/b/x.json", definition_json("x", "b"));
  DiagnosticList sink;
  auto set = load_trace_set(dir.path(), sink);
  ASSERT_FALSE(set.has_value());
  EXPECT_EQ(set.error().code, codes::k_trace_set_duplicate_definition);
  EXPECT_EQ(set.error().message, "Duplicate definition name: x");
  EXPECT_EQ(set.error().file, later);
  EXPECT_EQ(set.error().pointer, "/name");
  EXPECT_EQ(set.error().line, 1);
  EXPECT_EQ(testing::error_codes(sink),
            std::vector<std::string>{std::string(codes::k_trace_set_duplicate_definition)});
}

TEST(TraceSet, DuplicateSolutionNameIsReported) {
  TempDir dir;
  dir.write("definitions/op/d1.json", definition_json("d1"));
  dir.write("solutions/a/op/d1/s.json", solution_json("same", "d1", "a"));
  const auto later = dir.write("solutions/b/op/d1/s.json", solution_json("same", "d1", "b"));
  DiagnosticList sink;
  auto set = load_trace_set(dir.path(), sink);
  ASSERT_FALSE(set.has_value());
  EXPECT_EQ(set.error().code, codes::k_trace_set_duplicate_solution);
  EXPECT_EQ(set.error().message, "Duplicate solution name: same");
  EXPECT_EQ(set.error().file, later);
  EXPECT_TRUE(testing::has(sink, codes::k_trace_set_duplicate_solution, "/name"));
  EXPECT_EQ(sink.count(Severity::error), 1u);
}

TEST(TraceSet, WorkloadLineWithSolutionOrEvaluationIsMisplaced) {
  TempDir dir;
  dir.write("definitions/op/d1.json", definition_json("d1"));
  const auto file = dir.write(
      "workloads/op/d1.jsonl",
      lines({workload_line("d1", "w1"), trace_line("d1", "w2", "s1", passed_evaluation(1.0)),
             fmt::format(R"({{"definition": "d1", "workload": {}, "evaluation": {}}})",
                         workload_object("w3", 2), failed_evaluation())}));
  DiagnosticList sink;
  auto set = load_trace_set(dir.path(), sink);
  ASSERT_FALSE(set.has_value());
  EXPECT_EQ(set.error().code, codes::k_trace_set_misplaced_line);
  EXPECT_EQ(set.error().file, file);
  EXPECT_EQ(set.error().line, 2);
  EXPECT_EQ(testing::code_pointers(sink),
            (std::vector<std::pair<std::string, std::string>>{
                {std::string(codes::k_trace_set_misplaced_line), "/solution"},
                {std::string(codes::k_trace_set_misplaced_line), "/evaluation"}}));
  EXPECT_FALSE(sink.contains(codes::k_workload_not_workload_only));
  EXPECT_EQ(sink.items()[1].line, 3);
}

TEST(TraceSet, TraceLineWithNeitherSolutionNorEvaluationIsMisplaced) {
  TempDir dir;
  dir.write("definitions/op/d1.json", definition_json("d1"));
  dir.write("traces/a/op/d1.jsonl", lines({trace_line("d1", "w1", "s1", passed_evaluation(1.0)),
                                           workload_line("d1", "w2")}));
  DiagnosticList sink;
  auto set = load_trace_set(dir.path(), sink);
  ASSERT_FALSE(set.has_value());
  EXPECT_EQ(set.error().code, codes::k_trace_set_misplaced_line);
  EXPECT_EQ(set.error().line, 2);
  EXPECT_EQ(set.error().pointer, "");
  EXPECT_EQ(testing::error_codes(sink),
            std::vector<std::string>{std::string(codes::k_trace_set_misplaced_line)});
  EXPECT_FALSE(sink.contains(codes::k_trace_not_evaluated));
}

// from_path only asserts "not a workload trace": a solution without an evaluation loads.
TEST(TraceSet, TraceLineWithOnlyASolutionLoads) {
  TempDir dir;
  dir.write("definitions/op/d1.json", definition_json("d1"));
  dir.write("traces/a/op/d1.jsonl",
            fmt::format(R"({{"definition": "d1", "workload": {}, "solution": "s1"}})",
                        workload_object("w1", 2)) +
                "\n");
  DiagnosticList sink;
  auto set = load_trace_set(dir.path(), sink);
  ASSERT_TRUE(set.has_value()) << set.error().message;
  EXPECT_TRUE(sink.items().empty());
  ASSERT_EQ(set->traces.at("d1").size(), 1u);
  EXPECT_FALSE(set->traces.at("d1")[0].evaluation.has_value());
  EXPECT_EQ(set->summary().value().total, 1u);
  EXPECT_EQ(set->summary().value().failed, 1u);
}

TEST(TraceSet, ReportsEveryProblemAndReturnsTheFirst) {
  TempDir dir;
  const auto bad_definition = dir.write("definitions/op/a.json", R"({"op_type": "op"})");
  dir.write("definitions/op/b.json", definition_json("b"));
  dir.write("solutions/s.json", "{not json");
  dir.write("traces/b.jsonl", lines({trace_line("b", "w1", "s", passed_evaluation(-1.0))}));
  DiagnosticList sink;
  auto set = load_trace_set(dir.path(), sink);
  ASSERT_FALSE(set.has_value());
  EXPECT_EQ(set.error().code, codes::k_schema_required);
  EXPECT_EQ(set.error().file, bad_definition);
  const auto errors = testing::error_codes(sink);
  EXPECT_EQ(errors.front(), codes::k_schema_required);
  EXPECT_TRUE(sink.contains(codes::k_json_parse));
  EXPECT_TRUE(testing::has(sink, codes::k_schema_range, "/evaluation/performance/latency_ms"));
}

TEST(TraceSet, WarningsAloneDoNotFailTheLoad) {
  TempDir dir;
  dir.write("definitions/op/d1.json",
            R"({"name": "d1", "name": "d1", "op_type": "op", "axes": {}, "inputs": {},
 "outputs": {}, "reference": "def run():\n    pass\n"})");
  DiagnosticList sink;
  auto set = load_trace_set(dir.path(), sink);
  ASSERT_TRUE(set.has_value());
  EXPECT_TRUE(sink.contains(codes::k_json_duplicate_key));
  EXPECT_EQ(set->definitions.size(), 1u);
}

TEST(TraceSet, MissingRootIsNotFoundAndEmptyRootIsEmpty) {
  TempDir dir;
  DiagnosticList sink;
  auto missing = load_trace_set(dir.path() / "nope", sink);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, codes::k_io_not_found);
  EXPECT_EQ(sink.count(Severity::error), 1u);

  DiagnosticList empty_sink;
  auto empty = load_trace_set(dir.path(), empty_sink);
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->definitions.empty());
  EXPECT_TRUE(empty->solutions.empty());
  EXPECT_TRUE(empty_sink.items().empty());
  const auto summary = empty->summary();
  ASSERT_TRUE(summary.has_value());
  EXPECT_EQ(summary->total, 0u);
  EXPECT_TRUE(summary->rankings.empty());
}

// --- Trace selection (items 71-72) ---------------------------------------------------------------

// Item 71.
TEST(TraceSet, BestTraceForAxesIsThePassedTraceOfS1) {
  TempDir dir;
  write_nested(dir);
  const TraceSet set = load_or_die(dir);
  const Trace* best = set.get_best_trace("d1", AxisValues{{"M", 2}});
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->solution, "s1");
  EXPECT_EQ(best->evaluation->status, EvaluationStatus::passed);
  EXPECT_EQ(set.get_best_trace("d1", AxisValues{{"M", 3}}), nullptr);
  EXPECT_EQ(set.get_best_trace("d1", AxisValues{{"K", 2}}), nullptr);
  EXPECT_EQ(set.get_best_trace("unknown"), nullptr);
}

// Item 72.
TEST(TraceSet, SummaryCountsPassedAndFailedTraces) {
  TempDir dir;
  write_nested(dir);
  const TraceSet set = load_or_die(dir);
  const auto summary = set.summary("a");
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  EXPECT_EQ(summary->total, 2u);
  EXPECT_EQ(summary->passed, 1u);
  EXPECT_EQ(summary->failed, 1u);
  // b failed on the one workload it shares with the baseline a.
  ASSERT_EQ(summary->rankings.size(), 1u);
  EXPECT_EQ(summary->rankings[0].author, "b");
  EXPECT_EQ(summary->rankings[0].metrics.avg_speedup, 0.0);
  EXPECT_EQ(summary->rankings[0].metrics.workloads, 1u);
}

TEST(TraceSet, FilterTracesAppliesInclusiveErrorBounds) {
  TempDir dir;
  dir.write("definitions/op/d1.json", definition_json("d1"));
  dir.write("traces/a/op/d1.jsonl",
            lines({trace_line("d1", "w1", "s1", passed_evaluation(1.0, 1.0, 0.01, 0.0)),
                   trace_line("d1", "w2", "s1", passed_evaluation(1.0, 9.0, 0.02, 0.0)),
                   trace_line("d1", "w3", "s1", passed_evaluation(1.0, 2.0, 0.0, 0.01)),
                   trace_line("d1", "w4", "s1", passed_evaluation(1.0, 1.0, 0.0, 0.5)),
                   trace_line("d1", "w5", "s1", failed_evaluation())}));
  const TraceSet set = load_or_die(dir);

  const auto kept = set.filter_traces("d1");
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0]->workload.uuid, "w1");
  EXPECT_EQ(kept[1]->workload.uuid, "w3");
  EXPECT_EQ(set.filter_traces("d1", ErrorBounds{1.0, 1.0}).size(), 4u);
  EXPECT_TRUE(set.filter_traces("unknown").empty());

  // The highest speedup within bounds: w3 (2.0), not w2 (9.0, abs error too high).
  const Trace* best = set.get_best_trace("d1");
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->workload.uuid, "w3");
  const Trace* loose = set.get_best_trace("d1", {}, ErrorBounds{1.0, 1.0});
  ASSERT_NE(loose, nullptr);
  EXPECT_EQ(loose->workload.uuid, "w2");
}

// --- Scoring (items 73-79) -----------------------------------------------------------------------

// Item 73.
TEST(TraceSet, RankAuthorsAgainstBaselineLatencies) {
  TempDir dir;
  write_scored(dir, k_one_definition,
               {baseline_runs(),
                {"alice", "alice", {{"w1", 5.0}, {"w2", 8.0}}},
                {"bob", "bob", {{"w1", 20.0}, {"w2", 4.0}}}});
  const TraceSet set = load_or_die(dir);
  const auto ranking = set.rank_authors();
  ASSERT_TRUE(ranking.has_value()) << ranking.error().message;
  ASSERT_EQ(ranking->size(), 2u);
  const AuthorScore& alice = (*ranking)[0];
  const AuthorScore& bob = (*ranking)[1];
  EXPECT_EQ(alice.author, "alice");
  EXPECT_DOUBLE_EQ(alice.metrics.avg_speedup, 1.5);
  EXPECT_DOUBLE_EQ(alice.metrics.win_rate, 0.5);
  EXPECT_EQ(bob.author, "bob");
  EXPECT_DOUBLE_EQ(bob.metrics.avg_speedup, 1.25);
  EXPECT_DOUBLE_EQ(bob.metrics.win_rate, 0.5);
  for (const AuthorScore& row : *ranking) {
    EXPECT_EQ(row.metrics.definitions, 1u);
    EXPECT_DOUBLE_EQ(row.metrics.success_rate, 1.0);
    EXPECT_EQ(row.metrics.workloads, 2u);
  }
}

// Item 74.
TEST(TraceSet, AuthorAndSolutionScores) {
  TempDir dir;
  write_scored(dir, k_one_definition,
               {baseline_runs(),
                {"alice", "alice", {{"w1", 5.0}, {"w2", 8.0}}},
                {"bob", "bob", {{"w1", 20.0}, {"w2", 4.0}}}});
  const TraceSet set = load_or_die(dir);

  const auto alice = set.get_author_score("alice");
  ASSERT_TRUE(alice.has_value());
  ASSERT_TRUE(alice->has_value());
  EXPECT_DOUBLE_EQ((*alice)->avg_speedup, 1.5);
  EXPECT_DOUBLE_EQ((*alice)->win_rate, 0.5);
  EXPECT_EQ((*alice)->best_solutions, (std::map<std::string, std::string>{{"d1", "alice"}}));

  const auto bob = set.get_solution_score("bob");
  ASSERT_TRUE(bob.has_value());
  ASSERT_TRUE(bob->has_value());
  EXPECT_DOUBLE_EQ((*bob)->avg_speedup, 1.25);
  EXPECT_DOUBLE_EQ((*bob)->success_rate, 1.0);
  EXPECT_DOUBLE_EQ((*bob)->win_rate, 0.5);
  EXPECT_EQ((*bob)->definitions, 1u);
  EXPECT_EQ((*bob)->workloads, 2u);
  EXPECT_TRUE((*bob)->best_solutions.empty());

  // None for an unknown solution and for the baseline itself.
  const auto unknown = set.get_solution_score("nobody");
  ASSERT_TRUE(unknown.has_value());
  EXPECT_FALSE(unknown->has_value());
  const auto itself = set.get_solution_score("base");
  ASSERT_TRUE(itself.has_value());
  EXPECT_FALSE(itself->has_value());
  // The baseline author has no score of its own.
  const auto baseline_author = set.get_author_score("baseline");
  ASSERT_TRUE(baseline_author.has_value());
  EXPECT_FALSE(baseline_author->has_value());
}

// Item 75.
TEST(TraceSet, AnyFailedTraceZeroesTheScoreAndTiesGoByAuthorName) {
  TempDir dir;
  write_scored(dir, k_one_definition,
               {baseline_runs(),
                {"zed_sol", "zed", {{"w1", 5.0}, {"w2", std::nullopt}}},
                {"amy_sol", "amy", {{"w1", std::nullopt}, {"w2", 1.0}}}});
  const TraceSet set = load_or_die(dir);

  const auto zed = set.get_solution_score("zed_sol");
  ASSERT_TRUE(zed.has_value());
  ASSERT_TRUE(zed->has_value());
  EXPECT_EQ((*zed)->avg_speedup, 0.0);
  EXPECT_EQ((*zed)->success_rate, 0.0);
  EXPECT_EQ((*zed)->win_rate, 0.0);
  EXPECT_EQ((*zed)->workloads, 2u);
  EXPECT_EQ((*zed)->definitions, 1u);

  const auto ranking = set.rank_authors();
  ASSERT_TRUE(ranking.has_value());
  ASSERT_EQ(ranking->size(), 2u);
  EXPECT_EQ((*ranking)[0].author, "amy");
  EXPECT_EQ((*ranking)[1].author, "zed");
  EXPECT_EQ((*ranking)[0].metrics.avg_speedup, 0.0);
  EXPECT_EQ((*ranking)[0].metrics.workloads, 2u);
}

// Item 76.
TEST(TraceSet, BestSolutionPerDefinitionIsUsed) {
  TempDir dir;
  write_scored(dir, k_one_definition,
               {baseline_runs(),
                {"alice_bad", "alice", {{"w1", 1.0}, {"w2", std::nullopt}}},
                {"alice_good", "alice", {{"w1", 6.0}, {"w2", 4.0}}},
                {"bob", "bob", {{"w1", 20.0}, {"w2", 8.0}}}});
  const TraceSet set = load_or_die(dir);
  const auto ranking = set.rank_authors();
  ASSERT_TRUE(ranking.has_value()) << ranking.error().message;
  ASSERT_EQ(ranking->size(), 2u);
  EXPECT_EQ((*ranking)[0].author, "alice");
  EXPECT_DOUBLE_EQ((*ranking)[0].metrics.avg_speedup, (10.0 / 6.0 + 8.0 / 4.0) / 2.0);
  EXPECT_DOUBLE_EQ((*ranking)[0].metrics.win_rate, 1.0);
  EXPECT_EQ((*ranking)[0].metrics.best_solutions.at("d1"), "alice_good");
  EXPECT_EQ((*ranking)[1].author, "bob");
  EXPECT_DOUBLE_EQ((*ranking)[1].metrics.avg_speedup, (0.5 + 1.0) / 2.0);
  EXPECT_DOUBLE_EQ((*ranking)[1].metrics.win_rate, 0.0);
}

// Item 77.
TEST(TraceSet, MissingBaselineIsAnError) {
  TempDir dir;
  write_scored(dir, k_one_definition, {{"alice", "alice", {{"w1", 5.0}}}});
  const TraceSet set = load_or_die(dir);
  const std::regex expected("No baseline solution from author .* definition 'd1'");

  const auto ranking = set.rank_authors();
  ASSERT_FALSE(ranking.has_value());
  EXPECT_EQ(ranking.error().code, codes::k_score_no_baseline);
  EXPECT_TRUE(std::regex_search(ranking.error().message, expected)) << ranking.error().message;
  EXPECT_EQ(ranking.error().message,
            "No baseline solution from author 'baseline' for definition 'd1'");

  const auto solution = set.get_solution_score("alice");
  ASSERT_FALSE(solution.has_value());
  EXPECT_EQ(solution.error().code, codes::k_score_no_baseline);

  const auto summary = set.summary();
  ASSERT_FALSE(summary.has_value());
  EXPECT_EQ(summary.error().code, codes::k_score_no_baseline);

  // Another baseline author makes it work.
  const auto by_alice = set.summary("alice");
  ASSERT_TRUE(by_alice.has_value());
  EXPECT_TRUE(by_alice->rankings.empty());
}

// Item 78.
TEST(TraceSet, MultiDefinitionAuthorScoreAndScopes) {
  TempDir dir;
  write_scored(dir, {{"d1", "attn"}, {"d2", "gemm"}},
               {{"base1", "baseline", {{"w1", 10.0}}, "d1"},
                {"base2", "baseline", {{"w1", 8.0}}, "d2"},
                {"alice_d1_fast", "alice", {{"w1", 5.0}}, "d1"},
                {"alice_d1_slow", "alice", {{"w1", 10.0}}, "d1"},
                {"alice_d2", "alice", {{"w1", 4.0}}, "d2"}});
  const TraceSet set = load_or_die(dir);

  const auto overall = set.get_author_score("alice");
  ASSERT_TRUE(overall.has_value()) << overall.error().message;
  ASSERT_TRUE(overall->has_value());
  EXPECT_DOUBLE_EQ((*overall)->avg_speedup, 2.0);
  EXPECT_EQ((*overall)->definitions, 2u);
  EXPECT_EQ((*overall)->workloads, 2u);
  EXPECT_EQ((*overall)->best_solutions,
            (std::map<std::string, std::string>{{"d1", "alice_d1_fast"}, {"d2", "alice_d2"}}));

  const auto attn = set.get_author_score("alice", "baseline", ScoreScope{"attn", std::nullopt});
  ASSERT_TRUE(attn.has_value());
  ASSERT_TRUE(attn->has_value());
  EXPECT_EQ((*attn)->definitions, 1u);
  EXPECT_EQ((*attn)->best_solutions, (std::map<std::string, std::string>{{"d1", "alice_d1_fast"}}));

  const auto d2 = set.get_author_score("alice", "baseline", ScoreScope{std::nullopt, "d2"});
  ASSERT_TRUE(d2.has_value());
  ASSERT_TRUE(d2->has_value());
  EXPECT_EQ((*d2)->definitions, 1u);
  EXPECT_EQ((*d2)->best_solutions, (std::map<std::string, std::string>{{"d2", "alice_d2"}}));
  EXPECT_DOUBLE_EQ((*d2)->avg_speedup, 2.0);

  const auto ranking = set.rank_authors();
  ASSERT_TRUE(ranking.has_value());
  ASSERT_EQ(ranking->size(), 1u);
  EXPECT_EQ((*ranking)[0].author, "alice");
  EXPECT_EQ((*ranking)[0].metrics.definitions, 2u);

  const auto attn_ranking = set.rank_authors("baseline", ScoreScope{"attn", std::nullopt});
  ASSERT_TRUE(attn_ranking.has_value());
  ASSERT_EQ(attn_ranking->size(), 1u);
  EXPECT_EQ((*attn_ranking)[0].metrics.definitions, 1u);

  // An op_type with no definition gives no score.
  const auto none = set.get_author_score("alice", "baseline", ScoreScope{"norm", std::nullopt});
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
}

// Item 79.
TEST(TraceSet, SummaryOverAllPassedTraces) {
  TempDir dir;
  write_scored(dir, k_one_definition,
               {{"base", "baseline", {{"w1", 10.0}}}, {"alice", "alice", {{"w1", 5.0}}}});
  const TraceSet set = load_or_die(dir);
  const auto summary = set.summary();
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  EXPECT_EQ(summary->total, 2u);
  EXPECT_EQ(summary->passed, 2u);
  EXPECT_EQ(summary->failed, 0u);
  ASSERT_EQ(summary->rankings.size(), 1u);
  EXPECT_EQ(summary->rankings[0].author, "alice");
  EXPECT_DOUBLE_EQ(summary->rankings[0].metrics.avg_speedup, 2.0);
}

// --- Scoring errors and edge cases ---------------------------------------------------------------

TEST(TraceSet, ScopeConflictAndUnknownDefinition) {
  TempDir dir;
  write_scored(dir, k_one_definition, {baseline_runs(), {"alice", "alice", {{"w1", 5.0}}}});
  const TraceSet set = load_or_die(dir);

  const auto both = set.get_author_score("alice", "baseline", ScoreScope{"attn", "d1"});
  ASSERT_FALSE(both.has_value());
  EXPECT_EQ(both.error().code, codes::k_score_scope_conflict);
  EXPECT_EQ(both.error().message, "Only one of 'op_type' or 'definition_name' may be provided");
  const auto both_ranked = set.rank_authors("baseline", ScoreScope{"attn", "d1"});
  ASSERT_FALSE(both_ranked.has_value());
  EXPECT_EQ(both_ranked.error().code, codes::k_score_scope_conflict);

  const auto unknown = set.get_author_score("alice", "baseline", ScoreScope{std::nullopt, "dx"});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, codes::k_score_unknown_definition);
  const auto unknown_ranked = set.rank_authors("baseline", ScoreScope{std::nullopt, "dx"});
  ASSERT_FALSE(unknown_ranked.has_value());
  EXPECT_EQ(unknown_ranked.error().code, codes::k_score_unknown_definition);
}

TEST(TraceSet, MultipleBaselinesIsAnError) {
  TempDir dir;
  write_scored(dir, k_one_definition,
               {{"base_a", "baseline", {{"w1", 10.0}}},
                {"base_b", "baseline", {{"w1", 9.0}}},
                {"alice", "alice", {{"w1", 5.0}}}});
  const TraceSet set = load_or_die(dir);
  const auto score = set.get_solution_score("alice");
  ASSERT_FALSE(score.has_value());
  EXPECT_EQ(score.error().code, codes::k_score_multiple_baselines);
  EXPECT_EQ(score.error().message, "Multiple baseline solutions from author 'baseline' for "
                                   "definition 'd1': ['base_a', 'base_b']");
}

TEST(TraceSet, PassedTraceWithZeroLatencyIsInvalidPerformance) {
  TempDir dir;
  write_scored(dir, k_one_definition,
               {{"base", "baseline", {{"w1", 10.0}}}, {"alice", "alice", {{"w1", 0.0}}}});
  const TraceSet set = load_or_die(dir);
  const auto score = set.get_solution_score("alice");
  ASSERT_FALSE(score.has_value());
  EXPECT_EQ(score.error().code, codes::k_score_invalid_performance);
  EXPECT_EQ(score.error().message,
            "PASSED trace for solution 'alice' workload 'w1' has invalid performance data");
}

TEST(TraceSet, NoCommonWorkloadGivesNoScoreAndLowestLatencyCounts) {
  TempDir dir;
  write_scored(dir, k_one_definition,
               {{"base", "baseline", {{"w1", 10.0}, {"w2", std::nullopt}}},
                // Only w2 is evaluated, where the baseline failed: nothing in common.
                {"carol", "carol", {{"w2", 1.0}}},
                // Two PASSED runs on w1: the lowest latency (2 ms) counts.
                {"dave", "dave", {{"w1", 8.0}, {"w1", 2.0}}}});
  const TraceSet set = load_or_die(dir);

  const auto carol = set.get_solution_score("carol");
  ASSERT_TRUE(carol.has_value());
  EXPECT_FALSE(carol->has_value());

  const auto dave = set.get_solution_score("dave");
  ASSERT_TRUE(dave.has_value());
  ASSERT_TRUE(dave->has_value());
  EXPECT_DOUBLE_EQ((*dave)->avg_speedup, 5.0);
  EXPECT_EQ((*dave)->workloads, 1u);

  const auto ranking = set.rank_authors();
  ASSERT_TRUE(ranking.has_value());
  ASSERT_EQ(ranking->size(), 1u);
  EXPECT_EQ((*ranking)[0].author, "dave");
}

} // namespace
} // namespace fib
