// Definition schema (the old tool's definition tests 1-26 and 33) and fib's own, non-Python
// definition checks (lint_definition). Python-exact checks are in definition_python_test.cpp.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fib {
namespace {

using testing::describe;

using testing::has;

// The old tool's definition test 8: M var, N const 16, A[M,N] → B[M,N].
constexpr std::string_view k_minimal = R"({
  "name": "gemm_n16",
  "op_type": "gemm",
  "axes": {
    "M": {"type": "var"},
    "N": {"type": "const", "value": 16}
  },
  "inputs": {"A": {"shape": ["M", "N"], "dtype": "float16"}},
  "outputs": {"B": {"shape": ["M", "N"], "dtype": "float16"}},
  "reference": "def run(A):\n    return A\n"
})";

// Every description present: lint_definition reports nothing about descriptions for this one.
constexpr std::string_view k_described = R"({
  "name": "gemm_n16",
  "op_type": "gemm",
  "description": "copy",
  "axes": {
    "M": {"type": "var", "description": "rows"},
    "N": {"type": "const", "value": 16, "description": "columns"}
  },
  "inputs": {"A": {"shape": ["M", "N"], "dtype": "float16", "description": "in"}},
  "outputs": {"B": {"shape": ["M", "N"], "dtype": "float16", "description": "out"}},
  "reference": "def run(A):\n    return A\n",
  "tags": ["status:verified", "fi_api:flashinfer.gemm", "fused"]
})";

struct Parsed {
  JsonDocument document;
  Definition definition;
  DiagnosticList diagnostics;
};

// Parses `text` with parse_json (keeping its duplicate-key warnings) and then parse_definition.
Parsed parse_text(std::string_view text) {
  Parsed out;
  auto document = parse_json(text, "def.json", out.diagnostics);
  if (!document) {
    ADD_FAILURE() << "test JSON does not parse: " << document.error().message;
    return out;
  }
  out.document = std::move(document).value();
  out.definition = parse_definition(out.document, out.diagnostics);
  return out;
}

// `base` with the value at `pointer` replaced by the JSON `value`.
std::string patched(std::string_view base, std::string_view pointer, std::string_view value) {
  Json root = Json::parse(base);
  root[Json::json_pointer(std::string(pointer))] = Json::parse(value);
  return root.dump(2);
}

// `base` without the key at `pointer`.
std::string erased(std::string_view base, std::string_view pointer) {
  Json root = Json::parse(base);
  const Json::json_pointer ptr{std::string(pointer)};
  root[ptr.parent_pointer()].erase(ptr.back());
  return root.dump(2);
}

Parsed parse_patched(std::string_view pointer, std::string_view value) {
  return parse_text(patched(k_minimal, pointer, value));
}

// lint_definition over an already parsed text.
DiagnosticList lint(const Parsed& parsed) {
  DiagnosticList sink;
  lint_definition(parsed.definition, parsed.document, sink);
  return sink;
}

std::vector<std::string> names_of(const OrderedMap<TensorSpec>& map) {
  std::vector<std::string> out;
  for (const auto& entry : map) {
    out.push_back(entry.first);
  }
  return out;
}

// --- the old tool's test_definition.py ---

TEST(DefinitionSchema, Item01ConstAxisValueOneIsAccepted) {
  const Parsed p = parse_patched("/axes/N", R"({"type": "const", "value": 1})");
  EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
  const Axis* n = find_entry(p.definition.axes, "N");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->kind, AxisKind::const_axis);
  EXPECT_EQ(n->value, 1);
}

TEST(DefinitionSchema, Item02ConstAxisValueZeroIsAccepted) {
  const Parsed p = parse_patched("/axes/N", R"({"type": "const", "value": 0})");
  EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
  const Axis* n = find_entry(p.definition.axes, "N");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->kind, AxisKind::const_axis);
  EXPECT_EQ(n->value, 0);
}

TEST(DefinitionSchema, Item03NegativeConstAxisIsRejected) {
  const Parsed p = parse_patched("/axes/N", R"({"type": "const", "value": -3})");
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_range, "/axes/N/value"))
      << describe(p.diagnostics);
  EXPECT_EQ(testing::error_codes(p.diagnostics), std::vector<std::string>{"schema.range"});
}

TEST(DefinitionSchema, Item04VarAxisWithoutArgumentsIsVar) {
  for (const std::string_view axis : {R"({"type": "var"})", R"({})"}) {
    const Parsed p = parse_patched("/axes/M", axis);
    EXPECT_TRUE(p.diagnostics.items().empty()) << axis << "\n" << describe(p.diagnostics);
    const Axis* m = find_entry(p.definition.axes, "M");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->kind, AxisKind::var_axis) << axis;
    EXPECT_FALSE(m->description.has_value());
  }
}

TEST(DefinitionSchema, Item05TensorSpecShapeAndInt32AreAccepted) {
  const Parsed p = parse_patched("/inputs/A", R"({"shape": ["M"], "dtype": "int32"})");
  EXPECT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  const TensorSpec* a = find_entry(p.definition.inputs, "A");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->shape.has_value());
  EXPECT_EQ(*a->shape, std::vector<std::string>{"M"});
  EXPECT_EQ(a->dtype, DType::int32);
}

TEST(DefinitionSchema, Item06BareStringShapeIsRejected) {
  const Parsed p = parse_patched("/inputs/A/shape", R"("M")");
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_type, "/inputs/A/shape"))
      << describe(p.diagnostics);
}

TEST(DefinitionSchema, NumberShapeEntryIsRejectedAtItsIndex) {
  const Parsed p = parse_patched("/inputs/A/shape", R"(["M", 16])");
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_type, "/inputs/A/shape/1"))
      << describe(p.diagnostics);
}

TEST(DefinitionSchema, Item07UnknownDtypeIsRejected) {
  const Parsed p = parse_patched("/inputs/A/dtype", R"("not_a_dtype")");
  EXPECT_TRUE(has(p.diagnostics, codes::k_dtype_invalid, "/inputs/A/dtype"))
      << describe(p.diagnostics);
  EXPECT_EQ(testing::error_codes(p.diagnostics),
            std::vector<std::string>{"definition.dtype.invalid"});
}

TEST(DefinitionSchema, Item08ArityMismatchIsNotASchemaError) {
  // The old tool's schema never looks at run's parameters; the arity check is in
  // definition_python_test.cpp (Item08...).
  const Parsed p = parse_patched("/reference", R"("def run(A, B):\n    B.copy_(A)\n")");
  EXPECT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  const auto const_axes = p.definition.const_axes();
  ASSERT_EQ(const_axes.size(), 1u);
  EXPECT_EQ(const_axes.begin()->first, "N");
  EXPECT_EQ(const_axes.begin()->second, 16);
  EXPECT_EQ(p.definition.var_axes(), std::vector<std::string>{"M"});
  EXPECT_EQ(p.definition.name, "gemm_n16");
  EXPECT_EQ(p.definition.op_type, "gemm");
}

TEST(DefinitionSchema, Item09UndefinedAxisIsRejected) {
  const Parsed p = parse_patched("/inputs/A/shape", R"(["M", "X"])");
  EXPECT_TRUE(has(p.diagnostics, codes::k_axis_undefined, "/inputs/A/shape/1"))
      << describe(p.diagnostics);
  ASSERT_EQ(p.diagnostics.items().size(), 1u) << describe(p.diagnostics);
  EXPECT_EQ(p.diagnostics.items()[0].message, R"(Input "A" references undefined axis "X")");
}

TEST(DefinitionSchema, UndefinedAxisInOutputUsesOutputWording) {
  const Parsed p = parse_patched("/outputs/B/shape", R"(["Y", "N"])");
  EXPECT_TRUE(has(p.diagnostics, codes::k_axis_undefined, "/outputs/B/shape/0"))
      << describe(p.diagnostics);
  ASSERT_EQ(p.diagnostics.items().size(), 1u) << describe(p.diagnostics);
  EXPECT_EQ(p.diagnostics.items()[0].message, R"(Output "B" references undefined axis "Y")");
}

TEST(DefinitionSchema, Item12TagsAndConstraintsAreRead) {
  Json root = Json::parse(k_minimal);
  root["tags"] = Json::parse(R"(["a", "b"])");
  root["constraints"] = Json::parse(R"(["M > 0", "M <= 4096"])");
  const Parsed p = parse_text(root.dump());
  EXPECT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  EXPECT_EQ(p.definition.tags, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.definition.constraints, (std::vector<std::string>{"M > 0", "M <= 4096"}));
}

TEST(DefinitionSchema, Item13EmptyAndNonStringTagsAreRejected) {
  const Parsed p = parse_patched("/tags", R"(["", 1])");
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_empty, "/tags/0")) << describe(p.diagnostics);
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_type, "/tags/1")) << describe(p.diagnostics);
}

TEST(DefinitionSchema, Item14EmptyConstraintIsRejected) {
  const Parsed p = parse_patched("/constraints", R"([""])");
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_empty, "/constraints/0"))
      << describe(p.diagnostics);
}

TEST(DefinitionSchema, NullTagsAndConstraintsAreRejected) {
  Json root = Json::parse(k_minimal);
  root["tags"] = nullptr;
  root["constraints"] = nullptr;
  const Parsed p = parse_text(root.dump());
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_type, "/tags")) << describe(p.diagnostics);
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_type, "/constraints")) << describe(p.diagnostics);
}

TEST(DefinitionSchema, Item16SameNameInInputsAndOutputsIsRejected) {
  const Parsed p = parse_text(R"({
    "name": "d", "op_type": "x",
    "axes": {"M": {"type": "var"}},
    "inputs": {"A": {"shape": ["M"], "dtype": "float32"}},
    "outputs": {"A": {"shape": ["M"], "dtype": "float32"}},
    "reference": "def run(A):\n    return A\n"
  })");
  EXPECT_TRUE(has(p.diagnostics, codes::k_io_overlap, "/outputs/A")) << describe(p.diagnostics);
  EXPECT_EQ(testing::error_codes(p.diagnostics), std::vector<std::string>{"definition.io.overlap"});
}

TEST(DefinitionSchema, Item33UnknownAxisTypeIsRejected) {
  const Parsed p = parse_patched("/axes/M", R"({"type": "unknown"})");
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_choice, "/axes/M/type"))
      << describe(p.diagnostics);
}

TEST(DefinitionSchema, MissingRequiredKeysAreReportedAtTheKey) {
  for (const std::string_view key : {"name", "op_type", "axes", "inputs", "outputs", "reference"}) {
    const std::string pointer = pointer_append("", key);
    const Parsed p = parse_text(erased(k_minimal, pointer));
    EXPECT_TRUE(has(p.diagnostics, codes::k_schema_required, pointer)) << key << "\n"
                                                                       << describe(p.diagnostics);
  }
}

TEST(DefinitionSchema, OldSchemaTypeKeyGetsOpTypeHint) {
  Json root = Json::parse(k_minimal);
  root.erase("op_type");
  root["type"] = "norm";
  const Parsed p = parse_text(root.dump());
  ASSERT_TRUE(has(p.diagnostics, codes::k_schema_required, "/op_type")) << describe(p.diagnostics);
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_unknown_key, "/type")) << describe(p.diagnostics);
  for (const Diagnostic& d : p.diagnostics.items()) {
    if (d.code == codes::k_schema_required) {
      EXPECT_NE(d.hint.find("op_type"), std::string::npos) << d.hint;
    }
  }
}

TEST(DefinitionSchema, NonObjectDocumentIsATypeErrorAtTheRoot) {
  const Parsed p = parse_text("[1, 2]");
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_type, "")) << describe(p.diagnostics);
}

TEST(DefinitionSchema, EmptyNameAndNumberOpTypeAreRejected) {
  Json root = Json::parse(k_minimal);
  root["name"] = "";
  root["op_type"] = 5;
  const Parsed p = parse_text(root.dump());
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_empty, "/name")) << describe(p.diagnostics);
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_type, "/op_type")) << describe(p.diagnostics);
}

TEST(DefinitionSchema, EmptyAxisAndInputKeysAreRejected) {
  const Parsed p = parse_text(R"({
    "name": "d", "op_type": "x",
    "axes": {"": {"type": "var"}},
    "inputs": {"": {"shape": null, "dtype": "float32"}},
    "outputs": {},
    "reference": "def run(x):\n    return x\n"
  })");
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_empty, "/axes/")) << describe(p.diagnostics);
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_empty, "/inputs/")) << describe(p.diagnostics);
}

TEST(DefinitionSchema, PointersEscapeSlashAndTildeInKeys) {
  const Parsed p = parse_text(R"({
    "name": "d", "op_type": "x",
    "axes": {},
    "inputs": {"a/b~c": {"shape": ["Q"], "dtype": "float32"}},
    "outputs": {},
    "reference": "def run(x):\n    return x\n"
  })");
  EXPECT_TRUE(has(p.diagnostics, codes::k_axis_undefined, "/inputs/a~1b~0c/shape/0"))
      << describe(p.diagnostics);
}

// --- the old tool's tests 17-26: merge_kwargs_to_args, input_shapes, axes_values ---

constexpr std::string_view k_abc = R"({
  "name": "d", "op_type": "x",
  "axes": {"M": {"type": "var"}},
  "inputs": {"A": {"shape": ["M"], "dtype": "float32"},
             "B": {"shape": ["M"], "dtype": "float32"}},
  "outputs": {"C": {"shape": ["M"], "dtype": "float32"}},
  "reference": "def run(A, B):\n    return A + B\n"
})";

std::vector<Json> ints(std::initializer_list<int> values) {
  std::vector<Json> out;
  for (const int v : values) {
    out.emplace_back(v);
  }
  return out;
}

TEST(MergeKwargs, Item17NoKwargsReturnsArgsUnchanged) {
  const Parsed p = parse_text(k_abc);
  auto merged = merge_kwargs_to_args(p.definition, ints({1, 2}), {});
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  EXPECT_EQ(*merged, ints({1, 2}));
}

TEST(MergeKwargs, Item18AllByKeyword) {
  const Parsed p = parse_text(k_abc);
  auto merged = merge_kwargs_to_args(p.definition, {}, {{"A", Json(1)}, {"B", Json(2)}});
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  EXPECT_EQ(*merged, ints({1, 2}));
}

TEST(MergeKwargs, Item19PositionalThenKeyword) {
  const Parsed p = parse_text(k_abc);
  auto merged = merge_kwargs_to_args(p.definition, ints({1}), {{"B", Json(2)}});
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  EXPECT_EQ(*merged, ints({1, 2}));
}

TEST(MergeKwargs, Item20OutputsCanBeGivenByKeyword) {
  const Parsed p = parse_text(k_abc);
  auto merged = merge_kwargs_to_args(p.definition, ints({1, 2}), {{"C", Json(3)}});
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  EXPECT_EQ(*merged, ints({1, 2, 3}));
}

TEST(MergeKwargs, Item21StopsAtFirstMissingName) {
  const Parsed p = parse_text(k_abc);
  auto merged = merge_kwargs_to_args(p.definition, ints({1}), {{"C", Json(3)}});
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  EXPECT_EQ(*merged, ints({1}));
}

TEST(MergeKwargs, TooManyPositionalArguments) {
  const Parsed p = parse_text(k_abc);
  // With a keyword argument, so that the test does not depend on whether an empty kwargs returns
  // early (the old tool's model does not say which comes first).
  auto merged = merge_kwargs_to_args(p.definition, ints({1, 2, 3, 4}), {{"Z", Json(5)}});
  ASSERT_FALSE(merged.has_value());
  EXPECT_EQ(merged.error().code, codes::k_call_too_many_arguments);
  EXPECT_EQ(merged.error().message, "Too many positional arguments: got 4, expected at most 3");
}

TEST(MergeKwargs, KeywordRepeatingAPositional) {
  const Parsed p = parse_text(k_abc);
  auto merged = merge_kwargs_to_args(p.definition, ints({1}), {{"A", Json(9)}});
  ASSERT_FALSE(merged.has_value());
  EXPECT_EQ(merged.error().code, codes::k_call_duplicate_argument);
  EXPECT_EQ(merged.error().message, "Got multiple values for argument 'A'");
}

// inputs [A[M, N=4], scale (scalar), B[M]]
constexpr std::string_view k_scaled = R"({
  "name": "d", "op_type": "x",
  "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 4}},
  "inputs": {"A": {"shape": ["M", "N"], "dtype": "float32"},
             "scale": {"shape": null, "dtype": "float32"},
             "B": {"shape": ["M"], "dtype": "float32"}},
  "outputs": {"C": {"shape": ["M", "N"], "dtype": "float32"}},
  "reference": "def run(A, scale, B):\n    return A\n"
})";

// inputs [A[M, N=4], B[M]]
constexpr std::string_view k_two_tensors = R"({
  "name": "d", "op_type": "x",
  "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 4}},
  "inputs": {"A": {"shape": ["M", "N"], "dtype": "float32"},
             "B": {"shape": ["M"], "dtype": "float32"}},
  "outputs": {},
  "reference": "def run(A, B):\n    return A\n"
})";

TEST(AxesValues, Item22ValuesFromTensorShapes) {
  const Parsed p = parse_text(k_two_tensors);
  ASSERT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  auto values =
      axes_values(p.definition, {std::vector<std::int64_t>{8, 4}, std::vector<std::int64_t>{8}});
  ASSERT_TRUE(values.has_value()) << values.error().message;
  EXPECT_EQ(*values, (std::map<std::string, std::int64_t>{{"M", 8}}));
}

TEST(AxesValues, Item23ScalarInputIsSkipped) {
  const Parsed p = parse_text(R"({
    "name": "d", "op_type": "x",
    "axes": {"M": {"type": "var"}},
    "inputs": {"x": {"shape": ["M"], "dtype": "float32"},
               "alpha": {"shape": null, "dtype": "float32"}},
    "outputs": {},
    "reference": "def run(x, alpha):\n    return x\n"
  })");
  ASSERT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  // A Python float 2.0 has no .shape: it maps onto nullopt.
  auto values = axes_values(p.definition, {std::vector<std::int64_t>{5}, std::nullopt});
  ASSERT_TRUE(values.has_value()) << values.error().message;
  EXPECT_EQ(*values, (std::map<std::string, std::int64_t>{{"M", 5}}));
}

TEST(InputShapes, Item24OneEntryPerInputWithNulloptForScalars) {
  const Parsed p = parse_text(k_scaled);
  ASSERT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  auto shapes = input_shapes(p.definition, {{"M", 8}});
  ASSERT_TRUE(shapes.has_value()) << shapes.error().message;
  const std::vector<ConcreteShape> expected = {std::vector<std::int64_t>{8, 4}, std::nullopt,
                                               std::vector<std::int64_t>{8}};
  EXPECT_EQ(*shapes, expected);
  auto outputs = output_shapes(p.definition, {{"M", 8}});
  ASSERT_TRUE(outputs.has_value()) << outputs.error().message;
  EXPECT_EQ(*outputs, (std::vector<ConcreteShape>{std::vector<std::int64_t>{8, 4}}));
}

TEST(InputShapes, MissingVarValueIsAnError) {
  const Parsed p = parse_text(k_scaled);
  auto shapes = input_shapes(p.definition, {});
  ASSERT_FALSE(shapes.has_value());
  EXPECT_EQ(shapes.error().code, codes::k_shape_missing_axis_value);
  EXPECT_EQ(shapes.error().message, "Missing value for variable axis 'M'");
}

TEST(AxesValues, Item25ConsistentShapes) {
  const Parsed p = parse_text(k_two_tensors);
  auto values =
      axes_values(p.definition, {std::vector<std::int64_t>{8, 4}, std::vector<std::int64_t>{8}});
  ASSERT_TRUE(values.has_value()) << values.error().message;
  ASSERT_EQ(values->size(), 1u);
  EXPECT_EQ(values->at("M"), 8);
}

TEST(AxesValues, Item26InconsistentAxisIsRejected) {
  const Parsed p = parse_text(k_two_tensors);
  auto values =
      axes_values(p.definition, {std::vector<std::int64_t>{8, 4}, std::vector<std::int64_t>{10}});
  ASSERT_FALSE(values.has_value());
  EXPECT_EQ(values.error().code, codes::k_shape_axis_conflict);
  EXPECT_EQ(values.error().message,
            "Axis 'M' has different values for different input tensors: 8 and 10");
}

TEST(AxesValues, RankMismatchUsesTheDoubledQuote) {
  const Parsed p = parse_text(k_two_tensors);
  auto values =
      axes_values(p.definition, {std::vector<std::int64_t>{8}, std::vector<std::int64_t>{8}});
  ASSERT_FALSE(values.has_value());
  EXPECT_EQ(values.error().code, codes::k_shape_rank_mismatch);
  EXPECT_EQ(values.error().message,
            "Input 'A''s defined dimension is 2 but the actual dimension is 1");
}

TEST(AxesValues, VarAxisOnlyInOutputsIsMissing) {
  const Parsed p = parse_text(R"({
    "name": "d", "op_type": "x",
    "axes": {"M": {"type": "var"}, "K": {"type": "var"}},
    "inputs": {"A": {"shape": ["M"], "dtype": "float32"}},
    "outputs": {"B": {"shape": ["M", "K"], "dtype": "float32"}},
    "reference": "def run(A):\n    return A\n"
  })");
  ASSERT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  auto values = axes_values(p.definition, {std::vector<std::int64_t>{3}});
  ASSERT_FALSE(values.has_value());
  EXPECT_EQ(values.error().code, codes::k_shape_missing_axes);
  EXPECT_EQ(values.error().message, "Missing values for variable axes: {'K'}");
}

TEST(Definition, VarAxesBindingsSkipScalarsAndUseTheFirstInput) {
  const Parsed p = parse_text(k_scaled);
  const auto bindings = p.definition.var_axes_bindings();
  ASSERT_EQ(bindings.size(), 1u);
  EXPECT_EQ(bindings.at("M"), (std::pair<std::string, std::size_t>{"A", 0}));
}

// --- fib's own checks and parser details ---

TEST(DefinitionLint, DescribedDefinitionIsClean) {
  const Parsed p = parse_text(k_described);
  EXPECT_TRUE(p.diagnostics.items().empty()) << describe(p.diagnostics);
  const DiagnosticList l = lint(p);
  EXPECT_TRUE(l.items().empty()) << describe(l);
  EXPECT_EQ(p.definition.description, std::optional<std::string>("copy"));
  EXPECT_EQ(p.definition.tags,
            (std::vector<std::string>{"status:verified", "fi_api:flashinfer.gemm", "fused"}));
}

TEST(DefinitionLint, MissingDescriptionsAreWarnedAtEachPointer) {
  const Parsed p = parse_text(k_minimal);
  const DiagnosticList l = lint(p);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"definition.description.missing", "/description"},
      {"definition.description.missing", "/axes/M/description"},
      {"definition.description.missing", "/axes/N/description"},
      {"definition.description.missing", "/inputs/A/description"},
      {"definition.description.missing", "/outputs/B/description"},
  };
  EXPECT_EQ(testing::code_pointers(l), expected) << describe(l);
  ASSERT_EQ(l.items().size(), expected.size());
  EXPECT_EQ(l.items()[0].message, "missing description");
  EXPECT_EQ(l.items()[1].message, "missing description: axes.M");
  EXPECT_EQ(l.items()[3].message, "missing description: inputs.A");
  EXPECT_EQ(l.items()[4].message, "missing description: outputs.B");
  for (const Diagnostic& d : l.items()) {
    EXPECT_EQ(d.severity, Severity::warning);
  }
}

TEST(DefinitionLint, EmptyDescriptionCountsAsMissing) {
  const Parsed p = parse_text(patched(k_described, "/description", R"("")"));
  EXPECT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  const DiagnosticList l = lint(p);
  EXPECT_EQ(testing::code_pointers(l), (std::vector<std::pair<std::string, std::string>>{
                                           {"definition.description.missing", "/description"}}))
      << describe(l);
}

TEST(DefinitionLint, VarAxisOnlyInOutputsIsUnbound) {
  Json root = Json::parse(k_described);
  root["axes"]["K"] = Json::parse(R"({"type": "var", "description": "k"})");
  root["outputs"]["B"]["shape"] = Json::parse(R"(["M", "K"])");
  const Parsed p = parse_text(root.dump());
  EXPECT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  const DiagnosticList l = lint(p);
  EXPECT_EQ(testing::code_pointers(l), (std::vector<std::pair<std::string, std::string>>{
                                           {"definition.axis.unbound", "/axes/K"}}))
      << describe(l);
  ASSERT_EQ(l.items().size(), 1u);
  EXPECT_EQ(l.items()[0].severity, Severity::warning);
}

TEST(DefinitionLint, UnusedAxesAreNotes) {
  Json root = Json::parse(k_described);
  root["axes"]["U"] = Json::parse(R"({"type": "const", "value": 2, "description": "u"})");
  root["axes"]["V"] = Json::parse(R"({"type": "var", "description": "v"})");
  const Parsed p = parse_text(root.dump());
  EXPECT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  const DiagnosticList l = lint(p);
  EXPECT_EQ(testing::code_pointers(l),
            (std::vector<std::pair<std::string, std::string>>{
                {"definition.axis.unused", "/axes/U"}, {"definition.axis.unused", "/axes/V"}}))
      << describe(l);
  for (const Diagnostic& d : l.items()) {
    EXPECT_EQ(d.severity, Severity::note);
  }
}

TEST(DefinitionLint, TagFormat) {
  const Parsed p = parse_text(patched(k_described, "/tags",
                                      R"(["stage:decode", "fused", "bogus", "status:", ":x",
                                          "my-ns:v", "model:llama-3.1-8b", "tp:2", "tp:02",
                                          "kv-cache:paged", "weird tag"])"));
  EXPECT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  const DiagnosticList l = lint(p);
  // Bare flags and unknown namespaces are the community's; what `fib tag add` refuses is noted.
  EXPECT_EQ(testing::code_pointers(l), (std::vector<std::pair<std::string, std::string>>{
                                           {"definition.tag.format", "/tags/3"},
                                           {"definition.tag.format", "/tags/4"},
                                           {"definition.tag.format", "/tags/8"},
                                           {"definition.tag.format", "/tags/10"}}))
      << describe(l);
  for (const Diagnostic& d : l.items()) {
    EXPECT_EQ(d.severity, Severity::note);
  }
}

TEST(DefinitionDtype, DumperUnknownAndUint8AreInvalidWithHints) {
  Json root = Json::parse(k_minimal);
  root["inputs"]["idx"] = Json::parse(R"({"shape": ["M"], "dtype": "unknown"})");
  root["inputs"]["raw"] = Json::parse(R"({"shape": ["M"], "dtype": "uint8"})");
  root["inputs"]["cased"] = Json::parse(R"({"shape": ["M"], "dtype": "Float32"})");
  root["inputs"]["num"] = Json::parse(R"({"shape": ["M"], "dtype": 3})");
  const Parsed p = parse_text(root.dump());
  for (const std::string_view pointer :
       {"/inputs/idx/dtype", "/inputs/raw/dtype", "/inputs/cased/dtype", "/inputs/num/dtype"}) {
    EXPECT_TRUE(has(p.diagnostics, codes::k_dtype_invalid, pointer)) << pointer << "\n"
                                                                     << describe(p.diagnostics);
  }
  for (const Diagnostic& d : p.diagnostics.items()) {
    if (d.pointer == "/inputs/idx/dtype") {
      EXPECT_NE(d.hint.find("normalize"), std::string::npos) << d.hint;
      EXPECT_NE(d.message.find("'unknown'"), std::string::npos) << d.message;
    }
    if (d.pointer == "/inputs/raw/dtype") {
      EXPECT_NE(d.hint.find("float4_e2m1"), std::string::npos) << d.hint;
    }
  }
}

TEST(DefinitionDtype, EveryAllowedDtypeParses) {
  for (const DType dtype : k_all_dtypes) {
    const Parsed p = parse_patched("/inputs/A/dtype", Json(std::string(to_string(dtype))).dump());
    EXPECT_FALSE(p.diagnostics.has_errors()) << to_string(dtype) << "\n" << describe(p.diagnostics);
    EXPECT_EQ(find_entry(p.definition.inputs, "A")->dtype, dtype);
  }
}

TEST(DefinitionShape, ExpressionEntriesGetTheirOwnCode) {
  const Parsed p = parse_patched("/inputs/A/shape", R"(["M + 1", "2", "N"])");
  EXPECT_TRUE(has(p.diagnostics, codes::k_shape_expression, "/inputs/A/shape/0"))
      << describe(p.diagnostics);
  EXPECT_TRUE(has(p.diagnostics, codes::k_shape_expression, "/inputs/A/shape/1"))
      << describe(p.diagnostics);
  EXPECT_FALSE(has(p.diagnostics, codes::k_axis_undefined, "/inputs/A/shape/0"));
  EXPECT_EQ(p.diagnostics.items().size(), 2u) << describe(p.diagnostics);
}

TEST(DefinitionShape, NullIsAScalarAndEmptyListIsA0DTensor) {
  Json root = Json::parse(k_minimal);
  root["inputs"]["s"] = Json::parse(R"({"shape": null, "dtype": "float32"})");
  root["inputs"]["z"] = Json::parse(R"({"shape": [], "dtype": "float32"})");
  const Parsed p = parse_text(root.dump());
  EXPECT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  const TensorSpec* s = find_entry(p.definition.inputs, "s");
  const TensorSpec* z = find_entry(p.definition.inputs, "z");
  ASSERT_NE(s, nullptr);
  ASSERT_NE(z, nullptr);
  EXPECT_TRUE(s->is_scalar());
  EXPECT_FALSE(s->shape.has_value());
  EXPECT_FALSE(z->is_scalar());
  ASSERT_TRUE(z->shape.has_value());
  EXPECT_TRUE(z->shape->empty());
  auto shapes = input_shapes(p.definition, {{"M", 2}});
  ASSERT_TRUE(shapes.has_value()) << shapes.error().message;
  const std::vector<ConcreteShape> expected = {std::vector<std::int64_t>{2, 16}, std::nullopt,
                                               std::vector<std::int64_t>{}};
  EXPECT_EQ(*shapes, expected);
}

TEST(DefinitionShape, ShapeKeyIsRequired) {
  const Parsed p = parse_text(erased(k_minimal, "/inputs/A/shape"));
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_required, "/inputs/A/shape"))
      << describe(p.diagnostics);
}

TEST(DefinitionCoercion, LaxIntegersAreAcceptedWithAWarning) {
  struct Case {
    std::string_view json;
    std::int64_t value;
  };
  for (const Case& c : {Case{R"("7")", 7}, Case{"4.0", 4}, Case{R"(" 7 ")", 7}, Case{R"("7.0")", 7},
                        Case{"1e3", 1000}, Case{"true", 1}}) {
    const Parsed p =
        parse_patched("/axes/N", R"({"type": "const", "value": )" + std::string(c.json) + "}");
    EXPECT_FALSE(p.diagnostics.has_errors()) << c.json << "\n" << describe(p.diagnostics);
    EXPECT_EQ(
        testing::code_pointers(p.diagnostics),
        (std::vector<std::pair<std::string, std::string>>{{"schema.coerced", "/axes/N/value"}}))
        << c.json << "\n"
        << describe(p.diagnostics);
    ASSERT_EQ(p.diagnostics.items().size(), 1u);
    EXPECT_EQ(p.diagnostics.items()[0].severity, Severity::warning);
    const Axis* n = find_entry(p.definition.axes, "N");
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->kind, AxisKind::const_axis);
    EXPECT_EQ(n->value, c.value) << c.json;
  }
}

TEST(DefinitionCoercion, FractionalAndNonNumericValuesAreRejected) {
  for (const std::string_view json :
       {"4.5", R"("abc")", "null", "[1]", R"("--5")", R"("+-5")", R"("0x10")", R"("inf")"}) {
    const Parsed p =
        parse_patched("/axes/N", R"({"type": "const", "value": )" + std::string(json) + "}");
    EXPECT_TRUE(has(p.diagnostics, codes::k_schema_type, "/axes/N/value"))
        << json << "\n"
        << describe(p.diagnostics);
  }
}

TEST(DefinitionCoercion, UntypedConstAxisWithStringValueIsCoerced) {
  const Parsed p = parse_patched("/axes/N", R"({"value": "7"})");
  EXPECT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_coerced, "/axes/N/value"))
      << describe(p.diagnostics);
  const Axis* n = find_entry(p.definition.axes, "N");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->kind, AxisKind::const_axis);
  EXPECT_EQ(n->value, 7);
}

TEST(DefinitionCoercion, StringFieldsDoNotAcceptNumbers) {
  const Parsed p = parse_patched("/name", "5");
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_type, "/name")) << describe(p.diagnostics);
}

TEST(DefinitionAxisUnion, ChoiceWithoutType) {
  struct Case {
    std::string_view json;
    AxisKind kind;
    std::int64_t value;
  };
  for (const Case& c : {Case{R"({})", AxisKind::var_axis, 0},
                        Case{R"({"description": "rows"})", AxisKind::var_axis, 0},
                        Case{R"({"value": 4})", AxisKind::const_axis, 4}}) {
    const Parsed p = parse_patched("/axes/M", c.json);
    EXPECT_TRUE(p.diagnostics.items().empty()) << c.json << "\n" << describe(p.diagnostics);
    const Axis* m = find_entry(p.definition.axes, "M");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->kind, c.kind) << c.json;
    EXPECT_EQ(m->value, c.value) << c.json;
  }
}

TEST(DefinitionAxisUnion, InvalidValueWithoutTypeFallsBackToVar) {
  for (const std::string_view json : {R"({"value": -1})", R"({"value": "abc"})"}) {
    const Parsed p = parse_patched("/axes/M", json);
    EXPECT_FALSE(p.diagnostics.has_errors()) << json << "\n" << describe(p.diagnostics);
    EXPECT_EQ(
        testing::code_pointers(p.diagnostics),
        (std::vector<std::pair<std::string, std::string>>{{"schema.unknown-key", "/axes/M/value"}}))
        << json << "\n"
        << describe(p.diagnostics);
    EXPECT_EQ(find_entry(p.definition.axes, "M")->kind, AxisKind::var_axis) << json;
  }
}

TEST(DefinitionAxisUnion, VarWithValueDropsTheValue) {
  const Parsed p = parse_patched("/axes/M", R"({"type": "var", "value": 3})");
  EXPECT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_unknown_key, "/axes/M/value"))
      << describe(p.diagnostics);
  const Axis* m = find_entry(p.definition.axes, "M");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->kind, AxisKind::var_axis);
  EXPECT_EQ(m->value, 0);
}

TEST(DefinitionAxisUnion, ConstWithoutValueIsRejected) {
  const Parsed p = parse_patched("/axes/N", R"({"type": "const"})");
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_required, "/axes/N/value"))
      << describe(p.diagnostics);
}

TEST(DefinitionAxisUnion, AxisMustBeAnObject) {
  const Parsed p = parse_patched("/axes/M", "4");
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_type, "/axes/M")) << describe(p.diagnostics);
}

TEST(DefinitionUnknownKeys, UnknownKeysAreNotesAndDumperExtrasAreSilent) {
  const Parsed p = parse_text(R"({
    "name": "d", "op_type": "x", "description": "d", "note": "hand-written",
    "axes": {"M": {"type": "var", "description": "m", "parent": "B"}},
    "inputs": {"A": {"shape": ["M"], "dtype": "float32", "description": "a",
                     "optional": true, "dtype_from": "B", "init": "randn", "check": "x > 0",
                     "param": "a", "layout": "row"}},
    "outputs": {"B": {"shape": ["M"], "dtype": "float32", "description": "b"}},
    "reference": "def run(A):\n    return A\n"
  })");
  EXPECT_EQ(
      testing::code_pointers(p.diagnostics),
      (std::vector<std::pair<std::string, std::string>>{{"schema.unknown-key", "/axes/M/parent"},
                                                        {"schema.unknown-key", "/inputs/A/layout"},
                                                        {"schema.unknown-key", "/note"}}))
      << describe(p.diagnostics);
  for (const Diagnostic& d : p.diagnostics.items()) {
    EXPECT_EQ(d.severity, Severity::note);
  }
  EXPECT_EQ(find_entry(p.definition.inputs, "A")->dtype, DType::float32);
}

TEST(DefinitionOrder, InputKeyOrderIsPreserved) {
  const Parsed p = parse_text(R"({
    "name": "d", "op_type": "x",
    "axes": {"M": {"type": "var"}},
    "inputs": {"z": {"shape": ["M"], "dtype": "float32"},
               "a": {"shape": ["M"], "dtype": "float32"},
               "m": {"shape": null, "dtype": "int32"}},
    "outputs": {"y": {"shape": ["M"], "dtype": "float32"},
                "b": {"shape": ["M"], "dtype": "float32"}},
    "reference": "def run(z, a, m):\n    return z, a\n"
  })");
  EXPECT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  EXPECT_EQ(names_of(p.definition.inputs), (std::vector<std::string>{"z", "a", "m"}));
  EXPECT_EQ(names_of(p.definition.outputs), (std::vector<std::string>{"y", "b"}));
}

TEST(DefinitionDuplicateKeys, LastValueWinsAtTheFirstPositionWithAWarning) {
  const Parsed p = parse_text(R"({
    "name": "first",
    "op_type": "x",
    "axes": {"M": {"type": "var"}},
    "inputs": {"A": {"shape": ["M"], "dtype": "float16"},
               "B": {"shape": ["M"], "dtype": "float32"},
               "A": {"shape": ["M"], "dtype": "int32"}},
    "outputs": {},
    "reference": "def run(A, B):\n    return A\n",
    "name": "second"
  })");
  EXPECT_FALSE(p.diagnostics.has_errors()) << describe(p.diagnostics);
  EXPECT_TRUE(has(p.diagnostics, codes::k_json_duplicate_key, "/inputs/A"))
      << describe(p.diagnostics);
  EXPECT_TRUE(has(p.diagnostics, codes::k_json_duplicate_key, "/name")) << describe(p.diagnostics);
  EXPECT_EQ(p.definition.name, "second");
  EXPECT_EQ(names_of(p.definition.inputs), (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(find_entry(p.definition.inputs, "A")->dtype, DType::int32);
}

TEST(DefinitionDuplicateKeys, LinesFollowTheWinningValue) {
  const Parsed p = parse_text(R"({
  "name": "d",
  "op_type": "x",
  "axes": {"M": {"type": "var"}},
  "inputs": {
    "A": {"shape": ["M"], "dtype": "float32"},
    "A": {"shape": ["Q"]}
  },
  "outputs": {},
  "reference": "def run(A):\n    return A\n"
})");
  EXPECT_TRUE(has(p.diagnostics, codes::k_json_duplicate_key, "/inputs/A"))
      << describe(p.diagnostics);
  EXPECT_TRUE(has(p.diagnostics, codes::k_axis_undefined, "/inputs/A/shape/0"))
      << describe(p.diagnostics);
  EXPECT_TRUE(has(p.diagnostics, codes::k_schema_required, "/inputs/A/dtype"))
      << describe(p.diagnostics);
  for (const Diagnostic& d : p.diagnostics.items()) {
    // Everything about the winning value is on line 7, none of it on the first value's line 6.
    EXPECT_EQ(d.line, 7) << d.code << " at " << d.pointer;
  }
}

TEST(DefinitionLines, DiagnosticsCarryTheFileAndLine) {
  const Parsed bad = parse_text(R"({
  "name": "d",
  "op_type": "x",
  "axes": {},
  "inputs": {"A": {"shape": ["Q"], "dtype": "float32"}},
  "outputs": {},
  "reference": "def run(A):\n    return A\n"
})");
  ASSERT_TRUE(has(bad.diagnostics, codes::k_axis_undefined, "/inputs/A/shape/0"))
      << describe(bad.diagnostics);
  EXPECT_EQ(bad.diagnostics.items()[0].line, 5);
  EXPECT_EQ(bad.diagnostics.items()[0].file, std::filesystem::path("def.json"));
}

} // namespace
} // namespace fib
