// to_json of every model and load → dump → load round trips (the old tool's serialization tests
// 27-32).

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>
#include <fib/model/solution.hpp>
#include <fib/model/trace.hpp>
#include <fib/model/workload.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace fib {
namespace {

using testing::describe;

using testing::TempDir;

std::vector<std::string> keys_of(const Json& object) {
  std::vector<std::string> out;
  for (const auto& [key, value] : object.items()) {
    out.push_back(key);
  }
  return out;
}

constexpr std::string_view k_definition = R"({
  "name": "rmsnorm_h128",
  "op_type": "rmsnorm",
  "description": "root mean square norm",
  "tags": ["status:verified", "fused"],
  "axes": {
    "batch": {"type": "var", "description": "tokens"},
    "hidden": {"type": "const", "value": 128}
  },
  "constraints": ["batch > 0"],
  "inputs": {
    "x": {"shape": ["batch", "hidden"], "dtype": "bfloat16", "description": "activations"},
    "weight": {"shape": ["hidden"], "dtype": "bfloat16"},
    "eps": {"shape": null, "dtype": "float32"},
    "flag": {"shape": [], "dtype": "bool"}
  },
  "outputs": {"y": {"shape": ["batch", "hidden"], "dtype": "bfloat16"}},
  "reference": "def run(x, weight, eps, flag):\n    return x\n"
})";

constexpr std::string_view k_solution = R"({
  "name": "rmsnorm_triton_v1",
  "definition": "rmsnorm_h128",
  "author": "alice",
  "description": "fast",
  "spec": {"language": "triton", "target_hardware": ["cuda"], "entry_point": "main.py::run",
           "dependencies": ["triton"], "destination_passing_style": false, "binding": "torch"},
  "sources": [{"path": "main.py", "content": "def run(x):\n    return x\n"},
              {"path": "util/helpers.py", "content": "X = 1\n"}]
})";

constexpr std::string_view k_trace = R"({
  "definition": "rmsnorm_h128",
  "workload": {"axes": {"batch": 8},
               "inputs": {"x": {"type": "random"},
                          "weight": {"type": "safetensors", "path": "blob/w.safetensors",
                                     "tensor_key": "weight"},
                          "eps": {"type": "scalar", "value": 1e-6},
                          "flag": {"type": "random"}},
               "uuid": "w1"},
  "solution": "rmsnorm_triton_v1",
  "evaluation": {"status": "PASSED",
                 "environment": {"hardware": "NVIDIA H100", "libs": {"torch": "2.5.0"}},
                 "timestamp": "2025-01-01T00:00:00Z", "log": "ok",
                 "correctness": {"max_relative_error": 0.001, "max_absolute_error": 0.0,
                                 "extra": {"matched_ratio": 1.0}},
                 "performance": {"latency_ms": 0.5, "reference_latency_ms": 2.0,
                                 "speedup_factor": 4.0}}
})";

Definition definition_of(std::string_view text, DiagnosticList& sink) {
  const JsonDocument document = testing::parse_or_die(text, "def.json");
  return parse_definition(document, sink);
}

Solution solution_of(std::string_view text, DiagnosticList& sink) {
  const JsonDocument document = testing::parse_or_die(text, "solution.json");
  return parse_solution(document, sink);
}

Trace trace_of(std::string_view text, DiagnosticList& sink) {
  const JsonDocument document = testing::parse_or_die(text, "trace.jsonl");
  return parse_trace(document, sink);
}

TEST(Serialization, Item27DefinitionRoundTrip) {
  DiagnosticList first_sink;
  const Definition first = definition_of(k_definition, first_sink);
  ASSERT_TRUE(first_sink.items().empty()) << describe(first_sink);
  const Json dumped = to_json(first);
  DiagnosticList second_sink;
  const Definition second = definition_of(dumped.dump(2), second_sink);
  EXPECT_TRUE(second_sink.items().empty()) << describe(second_sink);
  EXPECT_EQ(second.name, "rmsnorm_h128");
  EXPECT_EQ(second.op_type, "rmsnorm");
  EXPECT_EQ(second.description, std::optional<std::string>("root mean square norm"));
  EXPECT_EQ(second.tags, first.tags);
  EXPECT_EQ(second.constraints, first.constraints);
  EXPECT_EQ(second.reference, first.reference);
  EXPECT_EQ(second.const_axes(), (std::map<std::string, std::int64_t>{{"hidden", 128}}));
  EXPECT_EQ(second.var_axes(), std::vector<std::string>{"batch"});
  ASSERT_EQ(second.inputs.size(), 4u);
  for (std::size_t i = 0; i < first.inputs.size(); ++i) {
    EXPECT_EQ(second.inputs[i].first, first.inputs[i].first);
    EXPECT_EQ(second.inputs[i].second.shape, first.inputs[i].second.shape);
    EXPECT_EQ(second.inputs[i].second.dtype, first.inputs[i].second.dtype);
    EXPECT_EQ(second.inputs[i].second.description, first.inputs[i].second.description);
  }
  // A second dump is identical: to_json is a fixed point after one round.
  EXPECT_EQ(to_json(second), dumped);
}

TEST(Serialization, DefinitionDumpKeepsShapeNullVsEmptyAndInputOrder) {
  DiagnosticList sink;
  const Json dumped = to_json(definition_of(k_definition, sink));
  EXPECT_EQ(keys_of(dumped["inputs"]), (std::vector<std::string>{"x", "weight", "eps", "flag"}));
  EXPECT_TRUE(dumped["inputs"]["eps"]["shape"].is_null());
  EXPECT_TRUE(dumped["inputs"]["flag"]["shape"].is_array());
  EXPECT_TRUE(dumped["inputs"]["flag"]["shape"].empty());
  EXPECT_EQ(dumped["inputs"]["flag"]["dtype"], "bool");
  EXPECT_EQ(dumped["axes"]["hidden"], Json::parse(R"({"type": "const", "value": 128})"));
  EXPECT_EQ(dumped["axes"]["batch"], Json::parse(R"({"type": "var", "description": "tokens"})"));
  // Unset optional fields are omitted (exclude_unset).
  EXPECT_FALSE(dumped["inputs"]["weight"].contains("description"));
}

TEST(Serialization, DefinitionDumpOmitsUnsetOptionalFields) {
  DiagnosticList sink;
  const Definition definition = definition_of(R"({
    "name": "d", "op_type": "x", "axes": {}, "inputs": {}, "outputs": {},
    "reference": "def run():\n    pass\n"
  })",
                                              sink);
  ASSERT_FALSE(sink.has_errors()) << describe(sink);
  const Json dumped = to_json(definition);
  EXPECT_EQ(keys_of(dumped), (std::vector<std::string>{"name", "op_type", "axes", "inputs",
                                                       "outputs", "reference"}));
}

TEST(Serialization, DefinitionDumpDropsUnknownKeys) {
  DiagnosticList sink;
  Json root = Json::parse(k_definition);
  root["inputs"]["x"]["optional"] = true;
  root["axes"]["batch"]["parent"] = "x";
  const Json dumped = to_json(definition_of(root.dump(), sink));
  EXPECT_FALSE(dumped["inputs"]["x"].contains("optional"));
  EXPECT_FALSE(dumped["axes"]["batch"].contains("parent"));
  EXPECT_TRUE(testing::has(sink, codes::k_schema_unknown_key, "/axes/batch/parent"))
      << describe(sink);
}

TEST(Serialization, Item27SolutionRoundTrip) {
  DiagnosticList first_sink;
  const Solution first = solution_of(k_solution, first_sink);
  ASSERT_TRUE(first_sink.items().empty()) << describe(first_sink);
  const Json dumped = to_json(first);
  DiagnosticList second_sink;
  const Solution second = solution_of(dumped.dump(2), second_sink);
  EXPECT_TRUE(second_sink.items().empty()) << describe(second_sink);
  EXPECT_EQ(second.name, "rmsnorm_triton_v1");
  EXPECT_EQ(second.author, "alice");
  EXPECT_EQ(second.description, std::optional<std::string>("fast"));
  EXPECT_EQ(second.spec.language, Language::triton);
  EXPECT_EQ(second.spec.dependencies, std::vector<std::string>{"triton"});
  EXPECT_EQ(second.spec.destination_passing_style, DestinationPassing::no);
  EXPECT_EQ(second.spec.binding, std::optional<Binding>(Binding::torch));
  ASSERT_EQ(second.sources.size(), 2u);
  EXPECT_EQ(second.sources[1].path, "util/helpers.py");
  EXPECT_EQ(second.content_hash(), first.content_hash());
  EXPECT_EQ(dumped["spec"]["binding"], "torch");
  EXPECT_EQ(to_json(second), dumped);
}

TEST(Serialization, Item27TraceRoundTrip) {
  DiagnosticList first_sink;
  const Trace first = trace_of(k_trace, first_sink);
  ASSERT_TRUE(first_sink.items().empty()) << describe(first_sink);
  const Json dumped = to_json(first);
  EXPECT_EQ(keys_of(dumped),
            (std::vector<std::string>{"definition", "workload", "solution", "evaluation"}));
  EXPECT_EQ(keys_of(dumped["workload"]), (std::vector<std::string>{"axes", "inputs", "uuid"}));
  DiagnosticList second_sink;
  const Trace second = trace_of(dumped.dump(), second_sink);
  EXPECT_TRUE(second_sink.items().empty()) << describe(second_sink);
  EXPECT_EQ(second.solution, std::optional<std::string>("rmsnorm_triton_v1"));
  EXPECT_TRUE(second.is_successful());
  EXPECT_EQ(second.workload.uuid, "w1");
  ASSERT_EQ(second.workload.inputs.size(), 4u);
  EXPECT_EQ(std::get<double>(std::get<ScalarInput>(second.workload.inputs[2].second).value), 1e-6);
  EXPECT_EQ(std::get<SafetensorsInput>(second.workload.inputs[1].second).tensor_key, "weight");
  ASSERT_TRUE(second.evaluation && second.evaluation->correctness);
  EXPECT_EQ(second.evaluation->correctness->extra, Json::parse(R"({"matched_ratio": 1.0})"));
  EXPECT_EQ(second.evaluation->log, "ok");
  EXPECT_EQ(second.evaluation->performance->speedup_factor, 4.0);
  EXPECT_EQ(to_json(second), dumped);
}

TEST(Serialization, Item28WorkloadTraceDumpKeepsExplicitNulls) {
  DiagnosticList sink;
  const Trace trace = trace_of(R"({"definition": "d",
    "workload": {"axes": {"M": 4}, "inputs": {"A": {}}, "uuid": "w1"}})",
                               sink);
  ASSERT_TRUE(sink.items().empty()) << describe(sink);
  const Json dumped = to_json(trace);
  ASSERT_TRUE(dumped.contains("solution"));
  ASSERT_TRUE(dumped.contains("evaluation"));
  EXPECT_TRUE(dumped["solution"].is_null());
  EXPECT_TRUE(dumped["evaluation"].is_null());
  // The untyped input is dumped with its chosen type.
  EXPECT_EQ(dumped["workload"]["inputs"]["A"], Json::parse(R"({"type": "random"})"));
}

TEST(Serialization, Item29BuildSpecLanguageTriton) {
  DiagnosticList sink;
  const Solution solution = solution_of(R"({
    "name": "s", "definition": "d", "author": "a",
    "spec": {"language": "triton", "target_hardware": ["cuda"], "entry_point": "main.py::run"},
    "sources": [{"path": "main.py", "content": "x"}]
  })",
                                        sink);
  EXPECT_TRUE(sink.items().empty()) << describe(sink);
  EXPECT_EQ(solution.spec.language, Language::triton);
  EXPECT_EQ(to_json(solution)["spec"]["language"], "triton");
}

TEST(Serialization, Item30EvaluationWithEmptyObjectsTakesDefaults) {
  DiagnosticList sink;
  const Trace trace = trace_of(R"({"definition": "d",
    "workload": {"axes": {}, "inputs": {}, "uuid": "w1"}, "solution": "s",
    "evaluation": {"status": "PASSED", "log": "l", "environment": {"hardware": "h"},
                   "timestamp": "t", "correctness": {}, "performance": {}}})",
                               sink);
  EXPECT_TRUE(sink.items().empty()) << describe(sink);
  ASSERT_TRUE(trace.evaluation.has_value());
  const Json dumped = to_json(*trace.evaluation);
  EXPECT_EQ(
      dumped["correctness"],
      Json::parse(R"({"max_relative_error": 0.0, "max_absolute_error": 0.0, "extra": null})"));
  EXPECT_EQ(
      dumped["performance"],
      Json::parse(R"({"latency_ms": 0.0, "reference_latency_ms": 0.0, "speedup_factor": 0.0})"));
  EXPECT_EQ(dumped["environment"], Json::parse(R"({"hardware": "h", "libs": {}})"));
}

TEST(Serialization, PerformanceInfinityIsDumpedAsNullAndCannotBeReadBack) {
  DiagnosticList sink;
  const Trace trace = trace_of(R"({"definition": "d",
    "workload": {"axes": {}, "inputs": {}, "uuid": "w1"}, "solution": "s",
    "evaluation": {"status": "PASSED", "environment": {"hardware": "h"}, "timestamp": "t",
                   "correctness": {"max_relative_error": NaN, "max_absolute_error": Infinity},
                   "performance": {"latency_ms": 1.0, "reference_latency_ms": Infinity,
                                   "speedup_factor": Infinity}}})",
                               sink);
  ASSERT_TRUE(sink.items().empty()) << describe(sink);
  const Json dumped = to_json(trace);
  EXPECT_EQ(dumped["evaluation"]["correctness"]["max_relative_error"], "NaN");
  EXPECT_EQ(dumped["evaluation"]["correctness"]["max_absolute_error"], "Infinity");
  EXPECT_TRUE(dumped["evaluation"]["performance"]["reference_latency_ms"].is_null());
  EXPECT_TRUE(dumped["evaluation"]["performance"]["speedup_factor"].is_null());
  EXPECT_EQ(dumped["evaluation"]["performance"]["latency_ms"], 1.0);

  DiagnosticList reread;
  const Trace again = trace_of(dumped.dump(), reread);
  EXPECT_TRUE(
      testing::has(reread, codes::k_schema_type, "/evaluation/performance/reference_latency_ms"))
      << describe(reread);
  EXPECT_TRUE(testing::has(reread, codes::k_schema_type, "/evaluation/performance/speedup_factor"))
      << describe(reread);
  // The correctness strings read back as the same non-finite values.
  ASSERT_TRUE(again.evaluation && again.evaluation->correctness);
  EXPECT_TRUE(std::isnan(again.evaluation->correctness->max_relative_error));
  EXPECT_EQ(again.evaluation->correctness->max_absolute_error,
            std::numeric_limits<double>::infinity());
}

TEST(Serialization, NegativeInfinityCorrectnessDumpsAsString) {
  Evaluation evaluation;
  evaluation.status = EvaluationStatus::incorrect_numerical;
  evaluation.environment.hardware = "h";
  evaluation.timestamp = "t";
  evaluation.correctness = Correctness{-std::numeric_limits<double>::infinity(), 0.5, {}};
  const Json dumped = to_json(evaluation);
  EXPECT_EQ(dumped["correctness"]["max_relative_error"], "-Infinity");
  EXPECT_EQ(dumped["correctness"]["max_absolute_error"], 0.5);
  EXPECT_TRUE(dumped["performance"].is_null());
  EXPECT_EQ(dumped["status"], "INCORRECT_NUMERICAL");
}

TEST(Serialization, ScalarInputsDumpWithTheirJsonType) {
  Workload workload;
  workload.axes = {{"M", 3}};
  workload.inputs = {{"i", ScalarInput{std::int64_t{3}}},
                     {"f", ScalarInput{1.0}},
                     {"b", ScalarInput{true}},
                     {"r", RandomInput{}},
                     {"s", SafetensorsInput{"blob/a.safetensors", "k"}}};
  workload.uuid = "u";
  const Json dumped = to_json(workload);
  EXPECT_TRUE(dumped["inputs"]["i"]["value"].is_number_integer());
  EXPECT_TRUE(dumped["inputs"]["f"]["value"].is_number_float());
  EXPECT_TRUE(dumped["inputs"]["b"]["value"].is_boolean());
  EXPECT_EQ(dumped, Json::parse(R"({
    "axes": {"M": 3},
    "inputs": {"i": {"type": "scalar", "value": 3},
               "f": {"type": "scalar", "value": 1.0},
               "b": {"type": "scalar", "value": true},
               "r": {"type": "random"},
               "s": {"type": "safetensors", "path": "blob/a.safetensors", "tensor_key": "k"}},
    "uuid": "u"
  })"));
}

TEST(Serialization, Item31DefinitionSavedToFileAndLoaded) {
  TempDir dir;
  DiagnosticList sink;
  const Definition definition = definition_of(k_definition, sink);
  ASSERT_TRUE(sink.items().empty()) << describe(sink);
  const auto file = dir.write("definitions/rmsnorm/rmsnorm_h128.json", to_json(definition).dump(2));
  auto text = read_text_file(file);
  ASSERT_TRUE(text.has_value()) << text.error().message;
  DiagnosticList load_sink;
  auto document = parse_json(*text, file, load_sink);
  ASSERT_TRUE(document.has_value()) << document.error().message;
  const Definition loaded = parse_definition(*document, load_sink);
  EXPECT_TRUE(load_sink.items().empty()) << describe(load_sink);
  EXPECT_EQ(loaded.name, "rmsnorm_h128");
  EXPECT_EQ(document->file, file);
}

TEST(Serialization, Item32JsonLinesOfWorkloadTracesRoundTrip) {
  DiagnosticList sink;
  std::string text;
  for (const std::string_view uuid : {"w1", "w2"}) {
    const Trace trace = trace_of(R"({"definition": "rmsnorm_h128",
      "workload": {"axes": {"batch": 4}, "inputs": {"x": {"type": "random"}}, "uuid": ")" +
                                     std::string(uuid) + R"("}})",
                                 sink);
    text += to_json(trace).dump() + "\n";
  }
  ASSERT_TRUE(sink.items().empty()) << describe(sink);
  TempDir dir;
  const auto file = dir.write("workloads/rmsnorm/rmsnorm_h128.jsonl", text);
  auto loaded_text = read_text_file(file);
  ASSERT_TRUE(loaded_text.has_value()) << loaded_text.error().message;
  DiagnosticList load_sink;
  const auto lines = parse_trace_lines(*loaded_text, file, TraceFileKind::workload, load_sink);
  EXPECT_TRUE(load_sink.items().empty()) << describe(load_sink);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(lines[0].valid);
  EXPECT_TRUE(lines[0].trace.is_workload_trace());
  EXPECT_EQ(lines[0].trace.workload.uuid, "w1");
  EXPECT_EQ(lines[1].trace.workload.uuid, "w2");
  EXPECT_EQ(lines[1].line, 2);
  // The explicit nulls were written and read back.
  EXPECT_NE(text.find(R"("solution":null,"evaluation":null)"), std::string::npos) << text;
}

} // namespace
} // namespace fib
