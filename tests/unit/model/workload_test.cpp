// Workload and its input specs: required keys, axis values, the input-spec union choice (a spec
// without `type` is read as the member the old tool would pick), scalars and safetensors inputs.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/workload.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
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

struct ParsedWorkload {
  Workload workload;
  DiagnosticList diagnostics;
};

// A standalone workload object (the "/workload" of a trace line, read at the root here).
ParsedWorkload workload_of(std::string_view text) {
  ParsedWorkload out;
  const JsonDocument document = testing::parse_or_die(text, "workload.json");
  out.workload = parse_workload(document, document.root, "", out.diagnostics);
  return out;
}

// A workload whose only input "A" is `input`.
ParsedWorkload workload_with_input(std::string_view input) {
  return workload_of(R"({"axes": {"M": 4}, "inputs": {"A": )" + std::string(input) +
                     R"(}, "uuid": "w1"})");
}

TEST(Workload, Item34RandomInputIsAccepted) {
  const ParsedWorkload w = workload_of(R"({"axes": {"M": 4}, "inputs": {"A": {"type": "random"}},
                                           "uuid": "w1"})");
  EXPECT_TRUE(w.diagnostics.items().empty()) << describe(w.diagnostics);
  ASSERT_EQ(w.workload.axes.size(), 1u);
  EXPECT_EQ(w.workload.axes[0], (std::pair<std::string, std::int64_t>{"M", 4}));
  ASSERT_EQ(w.workload.inputs.size(), 1u);
  EXPECT_EQ(w.workload.inputs[0].first, "A");
  EXPECT_TRUE(std::holds_alternative<RandomInput>(w.workload.inputs[0].second));
  EXPECT_EQ(input_type_name(w.workload.inputs[0].second), "random");
  EXPECT_EQ(w.workload.uuid, "w1");
}

TEST(Workload, Item35NegativeAxisIsRejected) {
  const ParsedWorkload w = workload_of(R"({"axes": {"M": -1}, "inputs": {}, "uuid": "w1"})");
  EXPECT_EQ(testing::code_pointers(w.diagnostics), (Pairs{{"schema.range", "/axes/M"}}))
      << describe(w.diagnostics);
}

TEST(Workload, ZeroAxisPassesTheSchema) {
  const ParsedWorkload w = workload_of(R"({"axes": {"M": 0}, "inputs": {}, "uuid": "w1"})");
  EXPECT_TRUE(w.diagnostics.items().empty()) << describe(w.diagnostics);
  EXPECT_EQ(w.workload.axes[0].second, 0);
}

TEST(Workload, Item36InputThatIsNotAnInputSpecIsRejected) {
  for (const std::string_view input : {"42", R"("random")", "null", "[]"}) {
    const ParsedWorkload w = workload_with_input(input);
    EXPECT_TRUE(has(w.diagnostics, codes::k_schema_type, "/inputs/A")) << input << "\n"
                                                                       << describe(w.diagnostics);
  }
}

TEST(Workload, RequiredKeysAndEmptyUuid) {
  const ParsedWorkload missing = workload_of("{}");
  EXPECT_EQ(testing::code_pointers(missing.diagnostics), (Pairs{{"schema.required", "/axes"},
                                                                {"schema.required", "/inputs"},
                                                                {"schema.required", "/uuid"}}))
      << describe(missing.diagnostics);
  const ParsedWorkload empty = workload_of(R"({"axes": {}, "inputs": {}, "uuid": ""})");
  EXPECT_EQ(testing::code_pointers(empty.diagnostics), (Pairs{{"schema.empty", "/uuid"}}))
      << describe(empty.diagnostics);
}

TEST(Workload, AxisValueCoercionIsWarned) {
  const ParsedWorkload w =
      workload_of(R"({"axes": {"M": "8", "N": 2.0}, "inputs": {}, "uuid": "w"})");
  EXPECT_EQ(testing::code_pointers(w.diagnostics),
            (Pairs{{"schema.coerced", "/axes/M"}, {"schema.coerced", "/axes/N"}}))
      << describe(w.diagnostics);
  EXPECT_EQ(w.workload.axes[0].second, 8);
  EXPECT_EQ(w.workload.axes[1].second, 2);
}

TEST(Workload, UnknownTopLevelKeyIsANote) {
  const ParsedWorkload w = workload_of(R"({"axes": {}, "inputs": {}, "uuid": "w1", "batch": 3})");
  EXPECT_EQ(testing::code_pointers(w.diagnostics), (Pairs{{"schema.unknown-key", "/batch"}}))
      << describe(w.diagnostics);
  EXPECT_EQ(w.diagnostics.items()[0].severity, Severity::note);
}

// --- input-spec union ---

TEST(WorkloadInput, UnionChoiceWithoutType) {
  {
    const ParsedWorkload w = workload_with_input("{}");
    EXPECT_TRUE(w.diagnostics.items().empty()) << describe(w.diagnostics);
    EXPECT_TRUE(std::holds_alternative<RandomInput>(w.workload.inputs[0].second));
  }
  {
    const ParsedWorkload w = workload_with_input(R"({"value": 1})");
    EXPECT_TRUE(w.diagnostics.items().empty()) << describe(w.diagnostics);
    const auto* scalar = std::get_if<ScalarInput>(&w.workload.inputs[0].second);
    ASSERT_NE(scalar, nullptr);
    EXPECT_EQ(std::get<std::int64_t>(scalar->value), 1);
  }
  {
    const ParsedWorkload w =
        workload_with_input(R"({"path": "blob/a.safetensors", "tensor_key": "k"})");
    EXPECT_TRUE(w.diagnostics.items().empty()) << describe(w.diagnostics);
    const auto* blob = std::get_if<SafetensorsInput>(&w.workload.inputs[0].second);
    ASSERT_NE(blob, nullptr);
    EXPECT_EQ(blob->path, "blob/a.safetensors");
    EXPECT_EQ(blob->tensor_key, "k");
  }
}

TEST(WorkloadInput, IncompleteMembersWithoutTypeFallBackToRandom) {
  {
    const ParsedWorkload w = workload_with_input(R"({"path": "p"})");
    EXPECT_FALSE(w.diagnostics.has_errors()) << describe(w.diagnostics);
    EXPECT_EQ(testing::code_pointers(w.diagnostics),
              (Pairs{{"schema.unknown-key", "/inputs/A/path"}}))
        << describe(w.diagnostics);
    EXPECT_TRUE(std::holds_alternative<RandomInput>(w.workload.inputs[0].second));
  }
  {
    const ParsedWorkload w = workload_with_input(R"({"value": "abc"})");
    EXPECT_FALSE(w.diagnostics.has_errors()) << describe(w.diagnostics);
    EXPECT_EQ(testing::code_pointers(w.diagnostics),
              (Pairs{{"schema.unknown-key", "/inputs/A/value"}}))
        << describe(w.diagnostics);
    EXPECT_TRUE(std::holds_alternative<RandomInput>(w.workload.inputs[0].second));
  }
}

TEST(WorkloadInput, UnknownTypeIsRejected) {
  const ParsedWorkload w = workload_with_input(R"({"type": "zeros"})");
  EXPECT_EQ(testing::code_pointers(w.diagnostics), (Pairs{{"schema.choice", "/inputs/A/type"}}))
      << describe(w.diagnostics);
}

TEST(WorkloadInput, RandomSeedIsDroppedWithANote) {
  const ParsedWorkload w = workload_with_input(R"({"type": "random", "seed": 1})");
  EXPECT_EQ(testing::code_pointers(w.diagnostics),
            (Pairs{{"schema.unknown-key", "/inputs/A/seed"}}))
      << describe(w.diagnostics);
  EXPECT_TRUE(std::holds_alternative<RandomInput>(w.workload.inputs[0].second));
}

TEST(WorkloadInput, ScalarValuesKeepTheirJsonType) {
  {
    const ParsedWorkload w = workload_with_input(R"({"type": "scalar", "value": true})");
    EXPECT_TRUE(w.diagnostics.items().empty()) << describe(w.diagnostics);
    EXPECT_EQ(std::get<bool>(std::get<ScalarInput>(w.workload.inputs[0].second).value), true);
  }
  {
    const ParsedWorkload w = workload_with_input(R"({"type": "scalar", "value": 1})");
    EXPECT_TRUE(w.diagnostics.items().empty()) << describe(w.diagnostics);
    EXPECT_EQ(std::get<std::int64_t>(std::get<ScalarInput>(w.workload.inputs[0].second).value), 1);
  }
  {
    const ParsedWorkload w = workload_with_input(R"({"type": "scalar", "value": 1.0})");
    EXPECT_TRUE(w.diagnostics.items().empty()) << describe(w.diagnostics);
    EXPECT_EQ(std::get<double>(std::get<ScalarInput>(w.workload.inputs[0].second).value), 1.0);
  }
  {
    const ParsedWorkload w = workload_with_input(R"({"type": "scalar", "value": NaN})");
    EXPECT_TRUE(w.diagnostics.items().empty()) << describe(w.diagnostics);
    EXPECT_TRUE(
        std::isnan(std::get<double>(std::get<ScalarInput>(w.workload.inputs[0].second).value)));
  }
}

TEST(WorkloadInput, NumericStringScalarIsCoercedToInt) {
  const ParsedWorkload w = workload_with_input(R"({"type": "scalar", "value": "3"})");
  EXPECT_EQ(testing::code_pointers(w.diagnostics), (Pairs{{"schema.coerced", "/inputs/A/value"}}))
      << describe(w.diagnostics);
  EXPECT_EQ(std::get<std::int64_t>(std::get<ScalarInput>(w.workload.inputs[0].second).value), 3);
}

TEST(WorkloadInput, NullListAndMissingScalarValuesAreRejected) {
  for (const std::string_view value : {"null", "[1]", R"("abc")", "{}"}) {
    const ParsedWorkload w =
        workload_with_input(R"({"type": "scalar", "value": )" + std::string(value) + "}");
    EXPECT_TRUE(has(w.diagnostics, codes::k_schema_type, "/inputs/A/value"))
        << value << "\n"
        << describe(w.diagnostics);
  }
  const ParsedWorkload missing = workload_with_input(R"({"type": "scalar"})");
  EXPECT_EQ(testing::code_pointers(missing.diagnostics),
            (Pairs{{"schema.required", "/inputs/A/value"}}))
      << describe(missing.diagnostics);
}

TEST(WorkloadInput, SafetensorsNeedsPathAndTensorKey) {
  const ParsedWorkload missing = workload_with_input(R"({"type": "safetensors", "path": "p"})");
  EXPECT_EQ(testing::code_pointers(missing.diagnostics),
            (Pairs{{"schema.required", "/inputs/A/tensor_key"}}))
      << describe(missing.diagnostics);
  const ParsedWorkload empty =
      workload_with_input(R"({"type": "safetensors", "path": "", "tensor_key": "k"})");
  EXPECT_EQ(testing::code_pointers(empty.diagnostics), (Pairs{{"schema.empty", "/inputs/A/path"}}))
      << describe(empty.diagnostics);
  const ParsedWorkload absolute = workload_with_input(
      R"({"type": "safetensors", "path": "/data/x.safetensors", "tensor_key": "k"})");
  EXPECT_TRUE(absolute.diagnostics.items().empty()) << describe(absolute.diagnostics);
  EXPECT_EQ(std::get<SafetensorsInput>(absolute.workload.inputs[0].second).path,
            "/data/x.safetensors");
}

TEST(WorkloadInput, InputOrderIsPreserved) {
  const ParsedWorkload w = workload_of(R"({"axes": {}, "inputs": {"z": {}, "a": {"value": 2},
                                           "m": {"type": "random"}}, "uuid": "w"})");
  ASSERT_EQ(w.workload.inputs.size(), 3u);
  EXPECT_EQ(w.workload.inputs[0].first, "z");
  EXPECT_EQ(w.workload.inputs[1].first, "a");
  EXPECT_EQ(w.workload.inputs[2].first, "m");
  EXPECT_EQ(input_type_name(w.workload.inputs[1].second), "scalar");
}

// --- Correctness, Performance, Environment ---

} // namespace
} // namespace fib
