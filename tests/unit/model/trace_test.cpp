// Trace and Evaluation (statuses and the fields each requires, non-finite errors, environment),
// and JSON Lines files of traces and workloads.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/trace.hpp>
#include <fib/model/workload.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace fib {
namespace {

using testing::describe;

using testing::has;

using Pairs = std::vector<std::pair<std::string, std::string>>;

struct ParsedTrace {
  Trace trace;
  DiagnosticList diagnostics;
};

ParsedTrace trace_of(std::string_view text) {
  ParsedTrace out;
  const JsonDocument document = testing::parse_or_die(text, "trace.jsonl");
  out.trace = parse_trace(document, out.diagnostics);
  return out;
}

// An evaluation object with status `status`, a valid environment and timestamp, and `fields`
// (", \"correctness\": {...}" and the like) appended.
std::string evaluation(std::string_view status, std::string_view fields = "") {
  return R"({"status": ")" + std::string(status) +
         R"(", "environment": {"hardware": "cuda:0", "libs": {"torch": "2.5.0"}},
             "timestamp": "2025-01-01T00:00:00Z", "log": "")" +
         std::string(fields) + "}";
}

// A trace line of solution "s1" on workload w1 with `evaluation_json` as its evaluation.
ParsedTrace trace_with(std::string_view evaluation_json) {
  return trace_of(R"({"definition": "d",
    "workload": {"axes": {"M": 4}, "inputs": {"A": {"type": "random"}}, "uuid": "w1"},
    "solution": "s1", "evaluation": )" +
                  std::string(evaluation_json) + "}");
}

constexpr std::string_view k_correctness = R"(, "correctness": {"max_relative_error": 0.001,
                                                               "max_absolute_error": 0.002})";
constexpr std::string_view k_performance = R"(, "performance": {"latency_ms": 1.5,
    "reference_latency_ms": 3.0, "speedup_factor": 2.0})";

constexpr std::array<std::string_view, 5> k_no_result_statuses = {
    "INCORRECT_SHAPE", "INCORRECT_DTYPE", "RUNTIME_ERROR", "COMPILE_ERROR", "TIMEOUT"};

TEST(Evaluation, Item37ZeroCorrectnessIsAccepted) {
  const ParsedTrace t = trace_with(
      evaluation("INCORRECT_NUMERICAL",
                 R"(, "correctness": {"max_relative_error": 0, "max_absolute_error": 0})"));
  EXPECT_TRUE(t.diagnostics.items().empty()) << describe(t.diagnostics);
  ASSERT_TRUE(t.trace.evaluation && t.trace.evaluation->correctness);
  EXPECT_EQ(t.trace.evaluation->correctness->max_relative_error, 0.0);
  EXPECT_EQ(t.trace.evaluation->correctness->max_absolute_error, 0.0);
}

TEST(Evaluation, Item38NegativeRelativeErrorIsRejected) {
  const ParsedTrace t = trace_with(
      evaluation("INCORRECT_NUMERICAL",
                 R"(, "correctness": {"max_relative_error": -1, "max_absolute_error": 0})"));
  EXPECT_EQ(testing::code_pointers(t.diagnostics),
            (Pairs{{"schema.range", "/evaluation/correctness/max_relative_error"}}))
      << describe(t.diagnostics);
}

TEST(Evaluation, Item39ZeroPerformanceIsAccepted) {
  const ParsedTrace t = trace_with(
      evaluation("PASSED", std::string(k_correctness) +
                               R"(, "performance": {"latency_ms": 0, "reference_latency_ms": 0,
                                         "speedup_factor": 0})"));
  EXPECT_TRUE(t.diagnostics.items().empty()) << describe(t.diagnostics);
  ASSERT_TRUE(t.trace.evaluation && t.trace.evaluation->performance);
  EXPECT_EQ(t.trace.evaluation->performance->latency_ms, 0.0);
  EXPECT_EQ(t.trace.evaluation->performance->reference_latency_ms, 0.0);
  EXPECT_EQ(t.trace.evaluation->performance->speedup_factor, 0.0);
}

TEST(Evaluation, Item40NegativeLatencyIsRejected) {
  const ParsedTrace t = trace_with(
      evaluation("PASSED", std::string(k_correctness) + R"(, "performance": {"latency_ms": -1})"));
  EXPECT_EQ(testing::code_pointers(t.diagnostics),
            (Pairs{{"schema.range", "/evaluation/performance/latency_ms"}}))
      << describe(t.diagnostics);
}

TEST(Evaluation, Item41EnvironmentHardwareIsRead) {
  const ParsedTrace t = trace_with(evaluation("COMPILE_ERROR"));
  EXPECT_TRUE(t.diagnostics.items().empty()) << describe(t.diagnostics);
  ASSERT_TRUE(t.trace.evaluation.has_value());
  EXPECT_EQ(t.trace.evaluation->environment.hardware, "cuda:0");
  ASSERT_EQ(t.trace.evaluation->environment.libs.size(), 1u);
  EXPECT_EQ(t.trace.evaluation->environment.libs[0],
            (std::pair<std::string, std::string>{"torch", "2.5.0"}));
}

TEST(Evaluation, Item42EmptyHardwareIsRejected) {
  const ParsedTrace t = trace_with(R"({"status": "RUNTIME_ERROR", "environment": {"hardware": ""},
                                       "timestamp": "t"})");
  EXPECT_EQ(testing::code_pointers(t.diagnostics),
            (Pairs{{"schema.empty", "/evaluation/environment/hardware"}}))
      << describe(t.diagnostics);
}

TEST(Evaluation, LibsMustMapStringsToStrings) {
  const ParsedTrace null_libs = trace_with(
      R"({"status": "RUNTIME_ERROR", "environment": {"hardware": "h", "libs": null}, "timestamp": "t"})");
  EXPECT_EQ(testing::code_pointers(null_libs.diagnostics),
            (Pairs{{"schema.type", "/evaluation/environment/libs"}}))
      << describe(null_libs.diagnostics);
  const ParsedTrace number = trace_with(
      R"({"status": "RUNTIME_ERROR", "environment": {"hardware": "h", "libs": {"torch": 2}},
          "timestamp": "t"})");
  EXPECT_EQ(testing::code_pointers(number.diagnostics),
            (Pairs{{"schema.type", "/evaluation/environment/libs/torch"}}))
      << describe(number.diagnostics);
}

TEST(Evaluation, Item43NonFiniteCorrectnessIsStoredAndDumpedAsStrings) {
  const ParsedTrace t = trace_with(evaluation(
      "INCORRECT_NUMERICAL",
      R"(, "correctness": {"max_relative_error": Infinity, "max_absolute_error": NaN})"));
  EXPECT_TRUE(t.diagnostics.items().empty()) << describe(t.diagnostics);
  ASSERT_TRUE(t.trace.evaluation && t.trace.evaluation->correctness);
  EXPECT_EQ(t.trace.evaluation->correctness->max_relative_error,
            std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(t.trace.evaluation->correctness->max_absolute_error));
  const Json dumped = to_json(*t.trace.evaluation);
  EXPECT_EQ(dumped["correctness"]["max_relative_error"], "Infinity");
  EXPECT_EQ(dumped["correctness"]["max_absolute_error"], "NaN");
}

TEST(Evaluation, Item44NonFiniteCorrectnessFromStrings) {
  const ParsedTrace t = trace_with(evaluation(
      "INCORRECT_NUMERICAL",
      R"(, "correctness": {"max_relative_error": "infinity", "max_absolute_error": "nan"})"));
  EXPECT_TRUE(t.diagnostics.items().empty()) << describe(t.diagnostics);
  ASSERT_TRUE(t.trace.evaluation && t.trace.evaluation->correctness);
  EXPECT_EQ(t.trace.evaluation->correctness->max_relative_error,
            std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(t.trace.evaluation->correctness->max_absolute_error));
}

TEST(Evaluation, CorrectnessSignRules) {
  const ParsedTrace ok = trace_with(
      evaluation("INCORRECT_NUMERICAL",
                 R"(, "correctness": {"max_relative_error": -0.0, "max_absolute_error": "1e-3"})"));
  EXPECT_EQ(testing::code_pointers(ok.diagnostics),
            (Pairs{{"schema.coerced", "/evaluation/correctness/max_absolute_error"}}))
      << describe(ok.diagnostics);
  EXPECT_DOUBLE_EQ(ok.trace.evaluation->correctness->max_absolute_error, 1e-3);
  const ParsedTrace bad = trace_with(
      evaluation("INCORRECT_NUMERICAL",
                 R"(, "correctness": {"max_relative_error": -Infinity, "max_absolute_error": 0})"));
  EXPECT_EQ(testing::code_pointers(bad.diagnostics),
            (Pairs{{"schema.range", "/evaluation/correctness/max_relative_error"}}))
      << describe(bad.diagnostics);
}

TEST(Evaluation, MalformedNumericStringsAreRejected) {
  const ParsedTrace t = trace_with(evaluation(
      "INCORRECT_NUMERICAL",
      R"(, "correctness": {"max_relative_error": "--1", "max_absolute_error": "1.5x"})"));
  EXPECT_EQ(testing::code_pointers(t.diagnostics),
            (Pairs{{"schema.type", "/evaluation/correctness/max_relative_error"},
                   {"schema.type", "/evaluation/correctness/max_absolute_error"}}))
      << describe(t.diagnostics);
}

TEST(Evaluation, PerformanceRejectsNanAndAcceptsInfinity) {
  const ParsedTrace t = trace_with(evaluation(
      "PASSED", std::string(k_correctness) +
                    R"(, "performance": {"latency_ms": NaN, "reference_latency_ms": Infinity,
                                         "speedup_factor": "nan"})"));
  EXPECT_EQ(testing::code_pointers(t.diagnostics),
            (Pairs{{"schema.range", "/evaluation/performance/latency_ms"},
                   {"schema.range", "/evaluation/performance/speedup_factor"}}))
      << describe(t.diagnostics);
  EXPECT_EQ(t.trace.evaluation->performance->reference_latency_ms,
            std::numeric_limits<double>::infinity());
}

TEST(Evaluation, EmptyCorrectnessAndPerformanceTakeDefaults) {
  const ParsedTrace t =
      trace_with(evaluation("PASSED", R"(, "correctness": {}, "performance": {})"));
  EXPECT_TRUE(t.diagnostics.items().empty()) << describe(t.diagnostics);
  ASSERT_TRUE(t.trace.evaluation->correctness && t.trace.evaluation->performance);
  EXPECT_EQ(t.trace.evaluation->correctness->max_relative_error, 0.0);
  EXPECT_FALSE(t.trace.evaluation->correctness->extra.has_value());
  EXPECT_EQ(t.trace.evaluation->performance->speedup_factor, 0.0);
}

TEST(Evaluation, StatusIsCaseSensitive) {
  const ParsedTrace t = trace_with(evaluation("passed"));
  EXPECT_EQ(testing::code_pointers(t.diagnostics), (Pairs{{"schema.choice", "/evaluation/status"}}))
      << describe(t.diagnostics);
}

TEST(Evaluation, NullLogIsRejectedAndMissingLogIsEmpty) {
  const ParsedTrace null_log = trace_with(
      R"({"status": "RUNTIME_ERROR", "environment": {"hardware": "h"}, "timestamp": "t", "log": null})");
  EXPECT_EQ(testing::code_pointers(null_log.diagnostics),
            (Pairs{{"schema.type", "/evaluation/log"}}))
      << describe(null_log.diagnostics);
  const ParsedTrace no_log = trace_with(
      R"({"status": "RUNTIME_ERROR", "environment": {"hardware": "h"}, "timestamp": "t"})");
  EXPECT_TRUE(no_log.diagnostics.items().empty()) << describe(no_log.diagnostics);
  EXPECT_EQ(no_log.trace.evaluation->log, "");
}

TEST(Evaluation, MissingRequiredFields) {
  const ParsedTrace t = trace_with("{}");
  EXPECT_EQ(testing::code_pointers(t.diagnostics),
            (Pairs{{"schema.required", "/evaluation/status"},
                   {"schema.required", "/evaluation/environment"},
                   {"schema.required", "/evaluation/timestamp"}}))
      << describe(t.diagnostics);
}

// fib run's settings record: an object is kept and dumped back last; anything else is ignored with
// a warning (the old tool ignores the key either way); null means none.
TEST(Evaluation, SettingsAreKeptWhenAnObjectAndDumpedLast) {
  const ParsedTrace kept =
      trace_with(evaluation("RUNTIME_ERROR", R"(, "settings": {"warmup": 3})"));
  EXPECT_TRUE(kept.diagnostics.items().empty()) << describe(kept.diagnostics);
  ASSERT_TRUE(kept.trace.evaluation->settings.has_value());
  EXPECT_EQ(kept.trace.evaluation->settings->dump(), R"({"warmup":3})");
  const Json dumped = to_json(*kept.trace.evaluation);
  EXPECT_EQ(std::prev(dumped.end()).key(), "settings");

  const ParsedTrace wrong = trace_with(evaluation("RUNTIME_ERROR", R"(, "settings": [1])"));
  EXPECT_EQ(testing::code_pointers(wrong.diagnostics),
            (Pairs{{"trace.settings-ignored", "/evaluation/settings"}}))
      << describe(wrong.diagnostics);
  EXPECT_EQ(wrong.diagnostics.items().front().severity, Severity::warning);
  EXPECT_FALSE(wrong.trace.evaluation->settings.has_value());

  const ParsedTrace none = trace_with(evaluation("RUNTIME_ERROR", R"(, "settings": null)"));
  EXPECT_TRUE(none.diagnostics.items().empty()) << describe(none.diagnostics);
  EXPECT_FALSE(to_json(*none.trace.evaluation).contains("settings"));
}

// --- status ↔ correctness/performance table ---

TEST(EvaluationStatusRules, Item45PassedNeedsCorrectnessAndPerformance) {
  const ParsedTrace t = trace_with(evaluation("PASSED"));
  EXPECT_EQ(testing::code_pointers(t.diagnostics),
            (Pairs{{"evaluation.correctness.missing", "/evaluation/correctness"},
                   {"evaluation.performance.missing", "/evaluation/performance"}}))
      << describe(t.diagnostics);
  ASSERT_EQ(t.diagnostics.items().size(), 2u);
  EXPECT_EQ(t.diagnostics.items()[0].message,
            "Evaluation must include correctness when status is EvaluationStatus.PASSED");
  EXPECT_EQ(t.diagnostics.items()[1].message,
            "Evaluation must include performance when status is EvaluationStatus.PASSED");
}

TEST(EvaluationStatusRules, PassedWithNullsIsTheSameAsAbsent) {
  const ParsedTrace t =
      trace_with(evaluation("PASSED", R"(, "correctness": null, "performance": null)"));
  EXPECT_EQ(testing::code_pointers(t.diagnostics),
            (Pairs{{"evaluation.correctness.missing", "/evaluation/correctness"},
                   {"evaluation.performance.missing", "/evaluation/performance"}}))
      << describe(t.diagnostics);
}

TEST(EvaluationStatusRules, PassedWithBothIsAccepted) {
  const ParsedTrace t =
      trace_with(evaluation("PASSED", std::string(k_correctness) + std::string(k_performance)));
  EXPECT_TRUE(t.diagnostics.items().empty()) << describe(t.diagnostics);
  EXPECT_EQ(t.trace.evaluation->status, EvaluationStatus::passed);
  EXPECT_DOUBLE_EQ(t.trace.evaluation->performance->speedup_factor, 2.0);
  EXPECT_DOUBLE_EQ(t.trace.evaluation->correctness->max_absolute_error, 0.002);
}

TEST(EvaluationStatusRules, Item46IncorrectNumericalWithCorrectnessOnly) {
  const ParsedTrace t = trace_with(evaluation("INCORRECT_NUMERICAL", k_correctness));
  EXPECT_TRUE(t.diagnostics.items().empty()) << describe(t.diagnostics);
  EXPECT_EQ(t.trace.evaluation->status, EvaluationStatus::incorrect_numerical);
  EXPECT_TRUE(t.trace.evaluation->correctness.has_value());
  EXPECT_FALSE(t.trace.evaluation->performance.has_value());
}

TEST(EvaluationStatusRules, Item47IncorrectNumericalWithPerformanceOnly) {
  const ParsedTrace t = trace_with(evaluation("INCORRECT_NUMERICAL", k_performance));
  EXPECT_EQ(testing::code_pointers(t.diagnostics),
            (Pairs{{"evaluation.correctness.missing", "/evaluation/correctness"},
                   {"evaluation.performance.unexpected", "/evaluation/performance"}}))
      << describe(t.diagnostics);
}

TEST(EvaluationStatusRules, Item48OtherStatusesWithNeitherAreAccepted) {
  for (const std::string_view status : k_no_result_statuses) {
    const ParsedTrace t = trace_with(evaluation(status));
    EXPECT_TRUE(t.diagnostics.items().empty()) << status << "\n" << describe(t.diagnostics);
    ASSERT_TRUE(t.trace.evaluation.has_value());
    EXPECT_EQ(to_string(t.trace.evaluation->status), status);
  }
}

TEST(EvaluationStatusRules, Item49OtherStatusesRejectCorrectness) {
  for (const std::string_view status : k_no_result_statuses) {
    const ParsedTrace t = trace_with(evaluation(status, k_correctness));
    EXPECT_EQ(testing::code_pointers(t.diagnostics),
              (Pairs{{"evaluation.correctness.unexpected", "/evaluation/correctness"}}))
        << status << "\n"
        << describe(t.diagnostics);
    ASSERT_EQ(t.diagnostics.items().size(), 1u);
    EXPECT_EQ(t.diagnostics.items()[0].message,
              "Evaluation must not include correctness when status is EvaluationStatus." +
                  std::string(status));
  }
}

TEST(EvaluationStatusRules, Item50OtherStatusesRejectPerformance) {
  for (const std::string_view status : k_no_result_statuses) {
    const ParsedTrace t = trace_with(evaluation(status, k_performance));
    EXPECT_EQ(testing::code_pointers(t.diagnostics),
              (Pairs{{"evaluation.performance.unexpected", "/evaluation/performance"}}))
        << status << "\n"
        << describe(t.diagnostics);
  }
}

// --- Trace ---

TEST(Trace, Item51WorkloadOnlyTrace) {
  const ParsedTrace t = trace_of(R"({"definition": "d",
    "workload": {"axes": {"M": 4}, "inputs": {"A": {"type": "random"}}, "uuid": "w1"}})");
  EXPECT_TRUE(t.diagnostics.items().empty()) << describe(t.diagnostics);
  EXPECT_TRUE(t.trace.is_workload_trace());
  EXPECT_FALSE(t.trace.is_successful());
  EXPECT_EQ(t.trace.definition, "d");
  EXPECT_EQ(t.trace.workload.uuid, "w1");
}

TEST(Trace, Item52EvaluatedPassedTrace) {
  const ParsedTrace t =
      trace_of(R"({"definition": "d",
    "workload": {"axes": {"M": 4},
                 "inputs": {"A": {"type": "random"},
                            "B": {"type": "safetensors", "path": "p", "tensor_key": "k"}},
                 "uuid": "w1"},
    "solution": "s1",
    "evaluation": )" +
               evaluation("PASSED", std::string(k_correctness) + std::string(k_performance)) + "}");
  EXPECT_TRUE(t.diagnostics.items().empty()) << describe(t.diagnostics);
  EXPECT_FALSE(t.trace.is_workload_trace());
  EXPECT_TRUE(t.trace.is_successful());
  EXPECT_EQ(t.trace.solution, std::optional<std::string>("s1"));
  ASSERT_EQ(t.trace.workload.inputs.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<RandomInput>(t.trace.workload.inputs[0].second));
  const auto* blob = std::get_if<SafetensorsInput>(&t.trace.workload.inputs[1].second);
  ASSERT_NE(blob, nullptr);
  EXPECT_EQ(blob->path, "p");
  EXPECT_EQ(blob->tensor_key, "k");
}

TEST(Trace, FailedEvaluationIsNotSuccessful) {
  const ParsedTrace t = trace_with(evaluation("RUNTIME_ERROR"));
  EXPECT_TRUE(t.diagnostics.items().empty()) << describe(t.diagnostics);
  EXPECT_FALSE(t.trace.is_workload_trace());
  EXPECT_FALSE(t.trace.is_successful());
}

TEST(Trace, EmptySolutionCountsAsPresent) {
  const ParsedTrace t = trace_of(R"({"definition": "d",
    "workload": {"axes": {}, "inputs": {}, "uuid": "w1"}, "solution": "", "evaluation": null})");
  EXPECT_TRUE(t.diagnostics.items().empty()) << describe(t.diagnostics);
  EXPECT_EQ(t.trace.solution, std::optional<std::string>(""));
  EXPECT_FALSE(t.trace.is_workload_trace());
}

TEST(Trace, WorkloadPointersAreNestedUnderWorkload) {
  const ParsedTrace t = trace_of(R"({"definition": "",
    "workload": {"axes": {"M": -2}, "inputs": {"A": {"type": "zeros"}}, "uuid": "w1"}})");
  EXPECT_EQ(testing::code_pointers(t.diagnostics),
            (Pairs{{"schema.empty", "/definition"},
                   {"schema.range", "/workload/axes/M"},
                   {"schema.choice", "/workload/inputs/A/type"}}))
      << describe(t.diagnostics);
}

TEST(Trace, MissingDefinitionAndWorkload) {
  const ParsedTrace t = trace_of(R"({"solution": "s"})");
  EXPECT_EQ(testing::code_pointers(t.diagnostics),
            (Pairs{{"schema.required", "/definition"}, {"schema.required", "/workload"}}))
      << describe(t.diagnostics);
}

TEST(Trace, StatusNamesRoundTrip) {
  for (const std::string_view name :
       {"PASSED", "INCORRECT_SHAPE", "INCORRECT_NUMERICAL", "INCORRECT_DTYPE", "RUNTIME_ERROR",
        "COMPILE_ERROR", "TIMEOUT"}) {
    const auto status = parse_evaluation_status(name);
    ASSERT_TRUE(status.has_value()) << name;
    EXPECT_EQ(to_string(*status), name);
  }
  EXPECT_FALSE(parse_evaluation_status("Passed").has_value());
}

// --- JSON Lines ---

TEST(TraceLines, WorkloadFileLinesMustBeWorkloadOnly) {
  const std::string text =
      R"({"definition": "d", "workload": {"axes": {"M": 1}, "inputs": {}, "uuid": "w1"}})"
      "\n\n"
      R"({"definition": "d", "workload": {"axes": {"M": 2}, "inputs": {}, "uuid": "w2"}, "solution": "s1"})"
      "\n";
  DiagnosticList sink;
  const auto lines = parse_trace_lines(text, "workloads/op/d.jsonl", TraceFileKind::workload, sink);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].line, 1);
  EXPECT_TRUE(lines[0].valid);
  EXPECT_EQ(lines[1].line, 3);
  EXPECT_FALSE(lines[1].valid);
  EXPECT_EQ(testing::code_pointers(sink), (Pairs{{"workload.not-workload-only", "/solution"}}))
      << describe(sink);
  ASSERT_EQ(sink.items().size(), 1u);
  EXPECT_EQ(sink.items()[0].line, 3);
  EXPECT_EQ(sink.items()[0].file, std::filesystem::path("workloads/op/d.jsonl"));
  EXPECT_EQ(sink.items()[0].message, "w2: workload entry should not have solution or evaluation");
}

TEST(TraceLines, TraceFileLinesNeedSolutionAndEvaluation) {
  const std::string text =
      R"({"definition": "d", "workload": {"axes": {}, "inputs": {}, "uuid": "w1"}, "solution": "s1"})"
      "\n"
      R"({"definition": "d", "workload": {"axes": {}, "inputs": {}, "uuid": "w2"}, "solution": "s1", "evaluation": )" +
      Json::parse(evaluation("TIMEOUT")).dump() + "}\n";
  DiagnosticList sink;
  const auto lines = parse_trace_lines(text, "t.jsonl", TraceFileKind::trace, sink);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_FALSE(lines[0].valid);
  EXPECT_TRUE(lines[1].valid);
  EXPECT_EQ(testing::code_pointers(sink), (Pairs{{"trace.not-evaluated", "/evaluation"}}))
      << describe(sink);
  EXPECT_EQ(sink.items()[0].line, 1);
}

TEST(TraceLines, AnEvaluationsLogIsKeptWhateverItsEscapes) {
  const std::string line_start =
      R"({"definition": "d", "workload": {"axes": {}, "inputs": {}, "uuid": "w1"}, "solution": "s1", "evaluation": {"status": "TIMEOUT", "environment": {"hardware": "cuda:0"}, "timestamp": "2025-01-01T00:00:00Z", "log": )";
  const std::string text = line_start + R"("[1/3] nvcc \"k.cu\"\nerror: \u00e9"}})" + "\n" +
                           line_start + R"(7}})" + "\n" + line_start + R"("", "log": "again"}})";
  DiagnosticList sink;
  const auto lines = parse_trace_lines(text, "t.jsonl", TraceFileKind::trace, sink);
  ASSERT_EQ(lines.size(), 3u);
  ASSERT_TRUE(lines[0].trace.evaluation.has_value());
  EXPECT_EQ(lines[0].trace.evaluation->log, "[1/3] nvcc \"k.cu\"\nerror: \xc3\xa9");
  EXPECT_TRUE(lines[0].valid);
  // A log that is no string is reported where it stands, as before.
  EXPECT_FALSE(lines[1].valid);
  ASSERT_TRUE(lines[1].trace.evaluation.has_value());
  EXPECT_EQ(lines[1].trace.evaluation->log, "");
  // Of a repeated key the last value is the log.
  ASSERT_TRUE(lines[2].trace.evaluation.has_value());
  EXPECT_EQ(lines[2].trace.evaluation->log, "again");
  const auto found = testing::code_pointers(sink);
  ASSERT_FALSE(found.empty()) << describe(sink);
  EXPECT_EQ(found[0], (std::pair<std::string, std::string>{"schema.type", "/evaluation/log"}))
      << describe(sink);
}

TEST(TraceLines, BadJsonLineIsReportedWithItsLineAndOthersStillParse) {
  const std::string text =
      "\n"
      R"({"definition": "d", "workload": {"axes": {}, "inputs": {}, "uuid": "w1"}})"
      "\n"
      R"({"definition": "d", "workload": {"axes": {}, "inputs": {}, "uuid": "w2"},})"
      "\n"
      R"({"definition": "d", "workload": {"axes": {}, "inputs": {}, "uuid": "w3"}})";
  DiagnosticList sink;
  const auto lines = parse_trace_lines(text, "w.jsonl", TraceFileKind::workload, sink);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].trace.workload.uuid, "w1");
  EXPECT_EQ(lines[0].line, 2);
  EXPECT_EQ(lines[1].trace.workload.uuid, "w3");
  EXPECT_EQ(lines[1].line, 4);
  ASSERT_EQ(sink.items().size(), 1u) << describe(sink);
  EXPECT_EQ(sink.items()[0].code, codes::k_json_parse);
  EXPECT_EQ(sink.items()[0].line, 3);
}

TEST(TraceLines, OneLineOnItsOwnGivesWhatTheFileParseGivesForIt) {
  const std::string good =
      R"({"definition": "d", "workload": {"axes": {"M": 2}, "inputs": {}, "uuid": "w2"}, "solution": "s1"})";
  DiagnosticList sink;
  const auto parsed =
      parse_trace_line(JsonlLine{7, good}, "w.jsonl", TraceFileKind::workload, sink);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->line, 7);
  EXPECT_FALSE(parsed->valid);
  EXPECT_EQ(parsed->trace.workload.uuid, "w2");
  EXPECT_EQ(testing::code_pointers(sink), (Pairs{{"workload.not-workload-only", "/solution"}}))
      << describe(sink);
  ASSERT_EQ(sink.items().size(), 1u);
  EXPECT_EQ(sink.items()[0].line, 7);
  // The same line inside a file, as its seventh line, gives the same trace and diagnostic.
  DiagnosticList file_sink;
  const auto lines =
      parse_trace_lines("\n\n\n\n\n\n" + good, "w.jsonl", TraceFileKind::workload, file_sink);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].line, 7);
  EXPECT_EQ(lines[0].trace.workload.uuid, parsed->trace.workload.uuid);
  EXPECT_EQ(describe(file_sink), describe(sink));

  // A line that is not JSON gives nothing, and its error counts positions from the line given.
  DiagnosticList bad_sink;
  EXPECT_FALSE(parse_trace_line(JsonlLine{3, R"({"definition": "d",})"}, "w.jsonl",
                                TraceFileKind::any, bad_sink)
                   .has_value());
  ASSERT_EQ(bad_sink.items().size(), 1u) << describe(bad_sink);
  EXPECT_EQ(bad_sink.items()[0].code, codes::k_json_parse);
  EXPECT_EQ(bad_sink.items()[0].line, 3);
  EXPECT_NE(bad_sink.items()[0].message.find("at line 3 column"), std::string::npos)
      << bad_sink.items()[0].message;
}

TEST(TraceLines, SchemaErrorsOnALineCarryThatLine) {
  const std::string text =
      R"({"definition": "d", "workload": {"axes": {}, "inputs": {}, "uuid": "w1"}})"
      "\r\n"
      R"({"definition": "d", "workload": {"axes": {"M": -1}, "inputs": {}, "uuid": "w2"}})";
  DiagnosticList sink;
  const auto lines = parse_trace_lines(text, "w.jsonl", TraceFileKind::workload, sink);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(lines[0].valid);
  EXPECT_FALSE(lines[1].valid);
  EXPECT_EQ(testing::code_pointers(sink), (Pairs{{"schema.range", "/workload/axes/M"}}))
      << describe(sink);
  EXPECT_EQ(sink.items()[0].line, 2);
}

} // namespace
} // namespace fib
