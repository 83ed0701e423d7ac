// fib normalize: each rule firing and not firing on small hand-written definitions, the decisions
// file, canonical output and idempotence, and the file side (normalize_files).

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/normalize/normalize.hpp>
#include <fib/validate/files.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace fib {
namespace {

using testing::parse_or_die;
using testing::python;

struct Outcome {
  Json document;
  std::vector<RuleFinding> findings;
  bool changed = false;
};

Outcome normalize(const Json& input, const NormalizeOptions& options = {}) {
  const JsonDocument document = parse_or_die(input.dump());
  auto result = normalize_definition(document, options, python());
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message);
  if (!result) {
    return {};
  }
  return Outcome{result->document, result->findings, result->changed};
}

// (code, pointer, kind) of every finding, for failure messages and assertions.
std::string describe(const std::vector<RuleFinding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    out += std::string(to_string(f.kind)) + " " + f.diagnostic.code + " " + f.diagnostic.pointer +
           ": " + f.diagnostic.message + "\n";
  }
  return out;
}

bool has_finding(const Outcome& outcome, std::string_view code, std::string_view pointer,
                 FindingKind kind) {
  return std::any_of(outcome.findings.begin(), outcome.findings.end(), [&](const auto& f) {
    return f.diagnostic.code == code && f.diagnostic.pointer == pointer && f.kind == kind;
  });
}

bool has_code(const Outcome& outcome, std::string_view code) {
  return std::any_of(outcome.findings.begin(), outcome.findings.end(),
                     [&](const auto& f) { return f.diagnostic.code == code; });
}

// Errors of the core validator on `document`.
std::vector<std::string> validation_errors(const Json& document) {
  const JsonDocument parsed = parse_or_die(canonical_json_text(document));
  DiagnosticList sink;
  EXPECT_FALSE(validate_definition_document(parsed, python(), sink).has_value());
  return testing::error_codes(sink);
}

// A small dumped definition: rmsnorm as the dumper writes it (entry `_rmsnorm_reference`).
Json rmsnorm_dump() {
  return Json::parse(R"({
    "name": "rmsnorm_h64",
    "description": "RMSNorm",
    "op_type": "rmsnorm",
    "tags": ["fi_api:flashinfer.norm.rmsnorm", "status:verified"],
    "axes": {"batch_size": {"type": "var"}, "hidden_size": {"type": "const", "value": 64}},
    "inputs": {
      "hidden_states": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"},
      "weight": {"shape": ["hidden_size"], "dtype": "bfloat16"}
    },
    "outputs": {"output": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}},
    "reference": "import torch\n\n@torch.no_grad()\ndef _rmsnorm_reference(hidden_states, weight):\n    x = hidden_states.float()\n    return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight.float()).to(hidden_states.dtype)\n"
  })");
}

std::string reference_of(const Outcome& outcome) {
  return outcome.document.value("reference", std::string());
}

// --- A3b-1 ---

TEST(Normalize, EntryGetsARunWrapperThatForwardsByKeyword) {
  const Outcome out = normalize(rmsnorm_dump());
  EXPECT_TRUE(has_finding(out, codes::k_normalize_a3b_1, "/reference", FindingKind::applied))
      << describe(out.findings);
  EXPECT_NE(reference_of(out).find("def run(hidden_states, weight):\n    return "
                                   "_rmsnorm_reference(hidden_states=hidden_states, "
                                   "weight=weight)\n"),
            std::string::npos)
      << reference_of(out);
  EXPECT_NE(reference_of(out).find("def _rmsnorm_reference("), std::string::npos);
  EXPECT_TRUE(out.changed);
  EXPECT_TRUE(validation_errors(out.document).empty());
}

TEST(Normalize, ExistingRunIsLeftAlone) {
  Json input = rmsnorm_dump();
  input["reference"] = "def run(hidden_states, weight):\n    return hidden_states\n";
  const Outcome out = normalize(input);
  EXPECT_FALSE(has_code(out, codes::k_normalize_a3b_1)) << describe(out.findings);
  EXPECT_EQ(reference_of(out), input["reference"].get<std::string>());
  EXPECT_FALSE(out.changed);
}

TEST(Normalize, TheLastDefIsTheEntryNotTheFirstReferenceNamedOne) {
  Json input = rmsnorm_dump();
  input["reference"] = "import torch\n\ndef _helper_reference(x, n):\n    return x, n\n\n"
                       "def _rmsnorm_reference(hidden_states, weight):\n"
                       "    return _helper_reference(hidden_states, 1)[0]\n";
  const Outcome out = normalize(input);
  EXPECT_NE(reference_of(out).find("return _rmsnorm_reference(hidden_states=hidden_states"),
            std::string::npos)
      << reference_of(out);
}

TEST(Normalize, TheMarkerPicksTheDefAfterIt) {
  Json input = rmsnorm_dump();
  input["reference"] = "import torch\n# ----- reference dependencies -----\n"
                       "def _dep(x):\n    return x\n# ----- reference -----\n"
                       "def _rmsnorm_reference(hidden_states, weight):\n    return _dep(weight)\n\n"
                       "def _later_helper(x):\n    return x\n";
  const Outcome out = normalize(input);
  EXPECT_NE(reference_of(out).find("return _rmsnorm_reference("), std::string::npos)
      << reference_of(out);
}

TEST(Normalize, AReferenceThatDoesNotParseIsAQuestion) {
  Json input = rmsnorm_dump();
  input["reference"] = "def _r(:\n";
  const Outcome out = normalize(input);
  EXPECT_TRUE(has_finding(out, codes::k_normalize_a3b_1, "/reference", FindingKind::question))
      << describe(out.findings);
  EXPECT_EQ(reference_of(out), "def _r(:\n");
}

// --- N2 ---

TEST(Normalize, InputsTheEntryDoesNotTakeAreAcceptedAndIgnored) {
  Json input = rmsnorm_dump();
  input["inputs"]["eps"] = Json{{"shape", nullptr}, {"dtype", "float32"}};
  const Outcome out = normalize(input);
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n2, "/reference", FindingKind::applied))
      << describe(out.findings);
  EXPECT_NE(reference_of(out).find("def run(hidden_states, weight, eps):"), std::string::npos);
  EXPECT_TRUE(validation_errors(out.document).empty());
}

TEST(Normalize, RenamedParameterAtTheSamePositionIsPassedItsInput) {
  Json input = rmsnorm_dump();
  input["reference"] = "import torch\ndef _r(input, weight):\n    return input * weight\n";
  const Outcome out = normalize(input);
  EXPECT_NE(reference_of(out).find("return _r(input=hidden_states, weight=weight)"),
            std::string::npos)
      << reference_of(out);
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n2, "/reference", FindingKind::applied));
}

TEST(Normalize, RenameByPositionNeedsMatchingCounts) {
  Json input = rmsnorm_dump();
  input["reference"] = "def _r(input, weight, extra):\n    return input\n";
  const Outcome out = normalize(input);
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n2, "/reference", FindingKind::question))
      << describe(out.findings);
  EXPECT_EQ(reference_of(out).find("def run("), std::string::npos);
}

TEST(Normalize, ARequiredParameterNamedLikeAConstAxisGetsItsValue) {
  Json input = rmsnorm_dump();
  input["reference"] = "def _r(hidden_states, weight, hidden_size):\n    return hidden_states\n";
  const Outcome out = normalize(input);
  EXPECT_NE(reference_of(out).find("hidden_size=64"), std::string::npos) << reference_of(out);
}

TEST(Normalize, RunArgumentsDecisionBindsAParameter) {
  Json input = rmsnorm_dump();
  input["reference"] = "def _r(hidden_states, weight, pair):\n    return hidden_states\n";
  NormalizeDecisions decisions;
  decisions.definitions["rmsnorm_h64"].run_arguments["pair"] = "(hidden_states, weight)";
  NormalizeOptions options;
  options.decisions = &decisions;
  const Outcome out = normalize(input, options);
  EXPECT_NE(reference_of(out).find("pair=(hidden_states, weight)"), std::string::npos)
      << reference_of(out);
  EXPECT_TRUE(validation_errors(out.document).empty());
}

// --- N1, N3 ---

TEST(Normalize, MissingImportsAreAddedAfterDocstringAndFutureImports) {
  Json input = rmsnorm_dump();
  input["reference"] =
      "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\n"
      "def _r(hidden_states, weight):\n    return torch.relu(F.silu(hidden_states))\n";
  const Outcome out = normalize(input);
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n1, "/reference", FindingKind::applied));
  EXPECT_EQ(reference_of(out).rfind("\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\n"
                                    "import torch\nimport torch.nn.functional as F\ndef _r(",
                                    0),
            0U)
      << reference_of(out);
  EXPECT_FALSE(has_code(out, codes::k_normalize_n3)) << describe(out.findings);
}

TEST(Normalize, PresentImportsAreNotAddedAgain) {
  const Outcome out = normalize(rmsnorm_dump());
  EXPECT_FALSE(has_code(out, codes::k_normalize_n1));
}

TEST(Normalize, HelpersThatWereNotInlinedAreReported) {
  Json input = rmsnorm_dump();
  input["reference"] = "import torch\ndef _r(hidden_states, weight):\n"
                       "    return _rope_core(hidden_states) + _E2M1\n";
  const Outcome out = normalize(input);
  ASSERT_TRUE(has_finding(out, codes::k_normalize_n3, "/reference", FindingKind::question))
      << describe(out.findings);
  const auto it = std::find_if(out.findings.begin(), out.findings.end(), [](const auto& f) {
    return f.diagnostic.code == codes::k_normalize_n3;
  });
  EXPECT_NE(it->diagnostic.message.find("_E2M1, _rope_core"), std::string::npos);
}

// --- dtypes: A3b-2, N4, N5, N6, N7, N8, N9, N10, N11 ---

Json with_input(std::string_view name, Json spec) {
  Json input = rmsnorm_dump();
  input["inputs"][std::string(name)] = std::move(spec);
  return input;
}

TEST(Normalize, PlanTimeIndexTensorsBecomeInt32) {
  const Outcome out =
      normalize(with_input("kv_indptr", {{"shape", {"batch_size"}}, {"dtype", "unknown"}}));
  EXPECT_EQ(out.document["inputs"]["kv_indptr"]["dtype"], "int32");
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_a3b_2, "/inputs/kv_indptr/dtype", FindingKind::applied));
}

TEST(Normalize, KnownDtypesAreNotTouched) {
  const Outcome out =
      normalize(with_input("kv_indptr", {{"shape", {"batch_size"}}, {"dtype", "int64"}}));
  EXPECT_EQ(out.document["inputs"]["kv_indptr"]["dtype"], "int64");
  EXPECT_FALSE(has_code(out, codes::k_normalize_a3b_2));
}

TEST(Normalize, UnknownInputTakesTheDtypeOfTheSameNamedOutput) {
  Json input = with_input("cache", {{"shape", {"batch_size"}}, {"dtype", "unknown"}});
  input["outputs"]["cache"] = {{"shape", {"batch_size"}}, {"dtype", "float16"}};
  const Outcome out = normalize(input);
  EXPECT_EQ(out.document["inputs"]["cache"]["dtype"], "float16");
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n4, "/inputs/cache/dtype", FindingKind::applied));
}

TEST(Normalize, IndexLikeUnknownBecomesInt32UnlessTheRuleIsOff) {
  const Json input = with_input("indices", {{"shape", {"batch_size"}}, {"dtype", "unknown"}});
  const Outcome on = normalize(input);
  EXPECT_EQ(on.document["inputs"]["indices"]["dtype"], "int32");
  EXPECT_TRUE(
      has_finding(on, codes::k_normalize_n5, "/inputs/indices/dtype", FindingKind::applied));
  NormalizeOptions options;
  options.disabled_rules = {"N5"};
  const Outcome off = normalize(input, options);
  EXPECT_EQ(off.document["inputs"]["indices"]["dtype"], "unknown");
  EXPECT_TRUE(
      has_finding(off, codes::k_normalize_n7, "/inputs/indices/dtype", FindingKind::question))
      << describe(off.findings);
}

TEST(Normalize, UnknownOptionalInputIsDroppedAndPassedAsNone) {
  Json input =
      with_input("bias", {{"shape", {"hidden_size"}}, {"dtype", "unknown"}, {"optional", true}});
  input["reference"] = "def _r(hidden_states, weight, bias):\n    return hidden_states\n";
  const Outcome out = normalize(input);
  EXPECT_FALSE(out.document["inputs"].contains("bias"));
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n6, "/inputs/bias", FindingKind::applied));
  EXPECT_NE(reference_of(out).find("def run(hidden_states, weight):\n    return "
                                   "_r(hidden_states=hidden_states, weight=weight, bias=None)"),
            std::string::npos)
      << reference_of(out);
  EXPECT_TRUE(validation_errors(out.document).empty());
}

TEST(Normalize, UnknownOptionalInputOfAnExistingRunIsAQuestion) {
  Json input =
      with_input("bias", {{"shape", {"hidden_size"}}, {"dtype", "unknown"}, {"optional", true}});
  input["reference"] = "def run(hidden_states, weight, bias):\n    return hidden_states\n";
  const Outcome out = normalize(input);
  EXPECT_TRUE(out.document["inputs"].contains("bias"));
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n6, "/inputs/bias/dtype", FindingKind::question));
}

TEST(Normalize, UnknownRequiredInputIsAQuestionWithTheDecisionKey) {
  const Outcome out = normalize(with_input("a", {{"shape", {"batch_size"}}, {"dtype", "unknown"}}));
  ASSERT_TRUE(has_finding(out, codes::k_normalize_n7, "/inputs/a/dtype", FindingKind::question))
      << describe(out.findings);
  EXPECT_EQ(out.document["inputs"]["a"]["dtype"], "unknown");
  const auto it = std::find_if(out.findings.begin(), out.findings.end(), [](const auto& f) {
    return f.diagnostic.code == codes::k_normalize_n7;
  });
  EXPECT_NE(it->diagnostic.hint.find("\"input_dtypes\": {\"a\": \"<dtype>\"}"), std::string::npos)
      << it->diagnostic.hint;
}

TEST(Normalize, DecisionsAnswerUnknownDtypes) {
  NormalizeDecisions decisions;
  decisions.definitions["rmsnorm_h64"].input_dtypes["a"] = "float32";
  NormalizeOptions options;
  options.decisions = &decisions;
  const Outcome out =
      normalize(with_input("a", {{"shape", {"batch_size"}}, {"dtype", "unknown"}}), options);
  EXPECT_EQ(out.document["inputs"]["a"]["dtype"], "float32");
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_decision, "/inputs/a/dtype", FindingKind::applied));
  EXPECT_FALSE(has_code(out, codes::k_normalize_n7));
}

TEST(Normalize, Float64ScalarBecomesFloat32ButFloat64TensorIsAQuestion) {
  Json input = with_input("k_scale", {{"shape", nullptr}, {"dtype", "float64"}});
  input["inputs"]["table"] = {{"shape", {"batch_size"}}, {"dtype", "float64"}};
  const Outcome out = normalize(input);
  EXPECT_EQ(out.document["inputs"]["k_scale"]["dtype"], "float32");
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_n8, "/inputs/k_scale/dtype", FindingKind::applied));
  EXPECT_EQ(out.document["inputs"]["table"]["dtype"], "float64");
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_n11, "/inputs/table/dtype", FindingKind::question));
}

TEST(Normalize, OptionalStringScalarWithADefaultIsDropped) {
  Json input = with_input("layout", {{"shape", nullptr}, {"dtype", "string"}, {"optional", true}});
  input["reference"] = "def _r(hidden_states, weight, layout='NHD'):\n    return hidden_states\n";
  const Outcome out = normalize(input);
  EXPECT_FALSE(out.document["inputs"].contains("layout"));
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n9, "/inputs/layout", FindingKind::applied));
}

TEST(Normalize, StringScalarWithoutADefaultIsAQuestion) {
  Json input = with_input("layout", {{"shape", nullptr}, {"dtype", "string"}, {"optional", true}});
  input["reference"] = "def _r(hidden_states, weight, layout):\n    return hidden_states\n";
  const Outcome out = normalize(input);
  EXPECT_TRUE(out.document["inputs"].contains("layout"));
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_n9, "/inputs/layout/dtype", FindingKind::question));
}

TEST(Normalize, PackedFp4BytesBecomeFloat4ButScaleBytesAreAQuestion) {
  Json input = with_input("a", {{"shape", {"batch_size"}},
                                {"dtype", "uint8"},
                                {"description", "Input, fp4 e2m1 packed as uint8."}});
  input["inputs"]["a_scale"] = {
      {"shape", {"batch_size"}}, {"dtype", "uint8"}, {"description", "UE8M0 block scales"}};
  const Outcome out = normalize(input);
  EXPECT_EQ(out.document["inputs"]["a"]["dtype"], "float4_e2m1");
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n10, "/inputs/a/dtype", FindingKind::applied));
  EXPECT_EQ(out.document["inputs"]["a_scale"]["dtype"], "uint8");
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_n11, "/inputs/a_scale/dtype", FindingKind::question));
}

TEST(Normalize, Uint32IndexBecomesInt32ButWorkspaceIsAQuestion) {
  Json input = with_input("seq_lens", {{"shape", {"batch_size"}}, {"dtype", "uint32"}});
  input["inputs"]["workspace_buffer"] = {{"shape", {"batch_size"}}, {"dtype", "uint8"}};
  const Outcome out = normalize(input);
  EXPECT_EQ(out.document["inputs"]["seq_lens"]["dtype"], "int32");
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_n11, "/inputs/seq_lens/dtype", FindingKind::applied));
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n11, "/inputs/workspace_buffer/dtype",
                          FindingKind::question));
}

// --- axes: N12, N13, N14 ---

TEST(Normalize, DerivedShapeNamesBecomeConstAxes) {
  Json input = rmsnorm_dump();
  input["inputs"]["packed"] = {{"shape", {"hidden_size_div_2", "1"}}, {"dtype", "int8"}};
  const Outcome out = normalize(input);
  EXPECT_EQ(out.document["axes"]["hidden_size_div_2"], (Json{{"type", "const"}, {"value", 32}}));
  EXPECT_EQ(out.document["axes"]["one"], (Json{{"type", "const"}, {"value", 1}}));
  EXPECT_EQ(out.document["inputs"]["packed"]["shape"], (Json{"hidden_size_div_2", "one"}));
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_n12, "/axes/hidden_size_div_2", FindingKind::applied));
  EXPECT_TRUE(validation_errors(out.document).empty());
}

TEST(Normalize, UnderivableShapeNameIsAQuestion) {
  Json input = rmsnorm_dump();
  input["inputs"]["packed"] = {{"shape", {"block_size"}}, {"dtype", "int8"}};
  const Outcome out = normalize(input);
  EXPECT_FALSE(out.document["axes"].contains("block_size"));
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_n12, "/inputs/packed/shape/0", FindingKind::question));
}

TEST(Normalize, ConstAxisWithoutValueBoundByAnInputBecomesVar) {
  Json input = rmsnorm_dump();
  input["axes"]["hidden_size"] = {{"type", "const"}};
  const Outcome out = normalize(input);
  EXPECT_EQ(out.document["axes"]["hidden_size"], (Json{{"type", "var"}}));
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n13, "/axes/hidden_size", FindingKind::applied));
}

TEST(Normalize, ConstAxisWithoutValueAndUnboundIsAQuestionADecisionAnswers) {
  Json input = rmsnorm_dump();
  input["axes"]["page_size"] = {{"type", "const"}};
  const Outcome asked = normalize(input);
  EXPECT_TRUE(has_finding(asked, codes::k_normalize_n13, "/axes/page_size", FindingKind::question));
  NormalizeDecisions decisions;
  decisions.definitions["rmsnorm_h64"].axis_values["page_size"] = 16;
  NormalizeOptions options;
  options.decisions = &decisions;
  const Outcome answered = normalize(input, options);
  EXPECT_EQ(answered.document["axes"]["page_size"], (Json{{"type", "const"}, {"value", 16}}));
  EXPECT_FALSE(has_code(answered, codes::k_normalize_n13)) << describe(answered.findings);
}

TEST(Normalize, OutputOnlyVarAxisIsSolvedFromAConstraint) {
  Json input = rmsnorm_dump();
  input["axes"]["packed"] = {{"type", "var"}};
  input["outputs"]["q"] = {{"shape", {"batch_size", "packed"}}, {"dtype", "int8"}};
  input["constraints"] = {"hidden_size == 2 * packed"};
  input["reference"] = "def _r(hidden_states, weight):\n    return hidden_states, hidden_states\n";
  const Outcome out = normalize(input);
  EXPECT_EQ(out.document["axes"]["packed"], (Json{{"type", "const"}, {"value", 32}}));
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n14, "/axes/packed", FindingKind::applied));
}

TEST(Normalize, OutputOnlyVarAxisWithoutAConstraintIsAQuestion) {
  Json input = rmsnorm_dump();
  input["axes"]["scales"] = {{"type", "var"}};
  input["outputs"]["sf"] = {{"shape", {"scales"}}, {"dtype", "int8"}};
  const Outcome out = normalize(input);
  EXPECT_EQ(out.document["axes"]["scales"], (Json{{"type", "var"}}));
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n14, "/axes/scales", FindingKind::question));
}

// --- A3b-3 ---

Json in_place_dump(std::string_view body) {
  Json input = rmsnorm_dump();
  input["inputs"]["residual"] = {{"shape", {"batch_size", "hidden_size"}}, {"dtype", "bfloat16"}};
  input["outputs"]["residual"] = {{"shape", {"batch_size", "hidden_size"}}, {"dtype", "bfloat16"}};
  input["reference"] = "def _r(hidden_states, weight, residual):\n" + std::string(body);
  return input;
}

TEST(Normalize, InPlaceOutputTheReferenceDoesNotReturnIsDropped) {
  const Outcome out = normalize(in_place_dump("    return hidden_states + residual\n"));
  EXPECT_FALSE(out.document["outputs"].contains("residual"));
  EXPECT_TRUE(out.document["outputs"].contains("output"));
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_a3b_3, "/outputs/residual", FindingKind::applied));
  EXPECT_TRUE(validation_errors(out.document).empty());
}

TEST(Normalize, InPlaceOutputTheReferenceReturnsIsRenamed) {
  const Outcome out = normalize(in_place_dump("    return hidden_states, residual\n"));
  EXPECT_EQ(out.document["outputs"].size(), 2U);
  EXPECT_TRUE(out.document["outputs"].contains("residual_out"));
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_a3b_3, "/outputs/residual_out", FindingKind::applied));
  // The rename keeps the output's position.
  EXPECT_EQ(out.document["outputs"].begin().key(), "output");
  EXPECT_TRUE(validation_errors(out.document).empty());
}

TEST(Normalize, InPlaceOutputWithUnknownArityIsAQuestion) {
  const Outcome out = normalize(in_place_dump("    return helper(hidden_states)\n"));
  EXPECT_TRUE(out.document["outputs"].contains("residual"));
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_a3b_3, "/outputs/residual", FindingKind::question));
}

TEST(Normalize, RenameOutputsDecisionResolvesTheOverlap) {
  NormalizeDecisions decisions;
  decisions.definitions["rmsnorm_h64"].rename_outputs["residual"] = "new_residual";
  NormalizeOptions options;
  options.decisions = &decisions;
  const Outcome out = normalize(in_place_dump("    return helper(hidden_states)\n"), options);
  EXPECT_TRUE(out.document["outputs"].contains("new_residual"));
  EXPECT_FALSE(has_code(out, codes::k_normalize_a3b_3)) << describe(out.findings);
}

// --- N15, N16, N17, N18, N19, N21 ---

TEST(Normalize, HeadRatioIsReportedOnlyWhenImplausible) {
  Json input = rmsnorm_dump();
  input["axes"]["num_qo_heads"] = {{"type", "const"}, {"value", 8}};
  input["axes"]["num_kv_heads"] = {{"type", "const"}, {"value", 16}};
  EXPECT_TRUE(has_finding(normalize(input), codes::k_normalize_n15, "/axes/num_kv_heads",
                          FindingKind::question));
  input["axes"]["num_qo_heads"]["value"] = 32;
  input["axes"]["num_kv_heads"]["value"] = 8;
  EXPECT_FALSE(has_code(normalize(input), codes::k_normalize_n15));
}

TEST(Normalize, MissingReferenceIsAQuestionNamingTheStatus) {
  Json input = rmsnorm_dump();
  input.erase("reference");
  const Outcome out = normalize(input);
  ASSERT_TRUE(has_finding(out, codes::k_normalize_n16, "/reference", FindingKind::question));
  EXPECT_NE(out.findings.front().diagnostic.message.find("status:verified"), std::string::npos);
  EXPECT_FALSE(has_code(normalize(rmsnorm_dump()), codes::k_normalize_n16));
}

TEST(Normalize, FlagLikeScalarsAreAdvisedNotChanged) {
  const Outcome out = normalize(with_input("return_lse", {{"shape", nullptr}, {"dtype", "int32"}}));
  EXPECT_TRUE(has_finding(out, codes::k_normalize_n17, "/inputs/return_lse", FindingKind::advice));
  EXPECT_EQ(out.document["inputs"]["return_lse"]["dtype"], "int32");
  EXPECT_FALSE(has_code(normalize(with_input("eps", {{"shape", nullptr}, {"dtype", "float32"}})),
                        codes::k_normalize_n17));
}

TEST(Normalize, ExtrasAreKeptUnlessStripped) {
  Json input = rmsnorm_dump();
  input["init"] = "def _init():\n    pass\n";
  input["check"] = "from flashinfer.trace.default_check import standard_check\n";
  input["inputs"]["weight"]["optional"] = false;
  input["outputs"]["output"]["param"] = "out";
  const Outcome kept = normalize(input);
  EXPECT_TRUE(kept.document.contains("init"));
  EXPECT_TRUE(kept.document["outputs"]["output"].contains("param"));
  EXPECT_TRUE(has_finding(kept, codes::k_normalize_n18, "/check", FindingKind::advice));
  NormalizeOptions options;
  options.strip_extras = StripExtras::yes;
  const Outcome stripped = normalize(input, options);
  EXPECT_FALSE(stripped.document.contains("init"));
  EXPECT_FALSE(stripped.document.contains("check"));
  EXPECT_FALSE(stripped.document["inputs"]["weight"].contains("optional"));
  EXPECT_FALSE(stripped.document["outputs"]["output"].contains("param"));
  EXPECT_TRUE(has_finding(stripped, codes::k_normalize_n18, "", FindingKind::applied));
}

TEST(Normalize, NamesAreNeverRenamedWithoutADecision) {
  Json input = rmsnorm_dump();
  input["name"] = "gemm_N256_K64";
  const Outcome asked = normalize(input);
  EXPECT_EQ(asked.document["name"], "gemm_N256_K64");
  EXPECT_TRUE(has_finding(asked, codes::k_normalize_n19, "/name", FindingKind::question));
  NormalizeDecisions decisions;
  decisions.definitions["gemm_N256_K64"].name = "gemm_n256_k64";
  NormalizeOptions options;
  options.decisions = &decisions;
  const Outcome renamed = normalize(input, options);
  EXPECT_EQ(renamed.document["name"], "gemm_n256_k64");
  EXPECT_FALSE(has_code(renamed, codes::k_normalize_n19));
  // The decision is found again under the new name, so a second run is a no-op.
  const Outcome again = normalize(renamed.document, options);
  EXPECT_FALSE(again.changed) << describe(again.findings);
}

TEST(Normalize, QuantizedOutputDeclaredAsActivationDtypeIsAQuestion) {
  Json input = rmsnorm_dump();
  input["outputs"]["output"]["description"] = "FP8 quantized output";
  EXPECT_TRUE(has_finding(normalize(input), codes::k_normalize_n21, "/outputs/output/dtype",
                          FindingKind::question));
  input["outputs"]["output"]["dtype"] = "float8_e4m3fn";
  EXPECT_FALSE(has_code(normalize(input), codes::k_normalize_n21));
}

// --- N0, idempotence, robustness ---

TEST(Normalize, CanonicalTextKeepsKeyOrderAndWritesUtf8AsIs) {
  const Json document = Json::parse(R"({"b": "x \u2192 y", "a": [1, {"c": null}], "e": []})");
  EXPECT_EQ(canonical_json_text(document),
            "{\n  \"b\": \"x \xe2\x86\x92 y\",\n  \"a\": [\n    1,\n    {\n      \"c\": null\n"
            "    }\n  ],\n  \"e\": []\n}\n");
}

TEST(Normalize, NormalizingTwiceEqualsNormalizingOnce) {
  for (const Json& input :
       {rmsnorm_dump(), in_place_dump("    return hidden_states + residual\n"),
        with_input("bias", {{"shape", {"hidden_size"}}, {"dtype", "unknown"}, {"optional", true}}),
        with_input("a", {{"shape", {"batch_size"}}, {"dtype", "unknown"}})}) {
    const Outcome once = normalize(input);
    const Outcome twice = normalize(once.document);
    EXPECT_EQ(canonical_json_text(twice.document), canonical_json_text(once.document));
    EXPECT_FALSE(twice.changed) << describe(twice.findings);
  }
}

TEST(Normalize, ANormalizedDumpHasNoFindingsOnASecondRun) {
  const Outcome once = normalize(rmsnorm_dump());
  const Outcome twice = normalize(once.document);
  EXPECT_TRUE(twice.findings.empty()) << describe(twice.findings);
}

TEST(Normalize, NonDefinitionsAreRejectedNotCrashedOn) {
  for (const std::string_view text :
       {R"([1, 2])", R"({"inputs": 3, "outputs": {}})", R"({"inputs": {}, "outputs": null})"}) {
    auto result = normalize_definition(parse_or_die(text), {}, python());
    ASSERT_FALSE(result.has_value()) << text;
    EXPECT_EQ(result.error().code, codes::k_normalize_not_definition) << text;
  }
}

TEST(Normalize, WrongTypesInsideADefinitionAreLeftForTheValidator) {
  const std::string_view text = R"({"name": "x", "inputs": {"a": 5}, "outputs": {"y": [1]},
                                    "axes": 7, "reference": 12, "constraints": "no"})";
  const JsonDocument document = parse_or_die(text);
  auto result = normalize_definition(document, {}, python());
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->document, document.root) << "nothing is guessed on malformed parts";
  ASSERT_EQ(result->findings.size(), 1U) << describe(result->findings);
  EXPECT_EQ(result->findings[0].diagnostic.code, codes::k_normalize_n16);
  EXPECT_EQ(result->findings[0].kind, FindingKind::question);
}

} // namespace
} // namespace fib

namespace fib {
namespace {

// --- files ---

struct FilesRun {
  std::vector<NormalizedFile> files;
  NormalizeSummary summary;
};

// Environment errors (I/O, Python) among a file's diagnostics, as the CLI counts them.
std::size_t environment_errors(const NormalizedFile& file) {
  return count_diagnostics(all_diagnostics(file)).environment_errors;
}

std::size_t environment_errors(const FilesRun& run) {
  std::size_t count = 0;
  for (const auto& file : run.files) {
    count += environment_errors(file);
  }
  return count;
}

FilesRun run_files(const NormalizeFilesOptions& options) {
  FilesRun run;
  run.summary = normalize_files(options, python(),
                                [&](const NormalizedFile& file) { run.files.push_back(file); });
  return run;
}

TEST(NormalizeFiles, MalformedInputIsSkippedAndTheRunGoesOn) {
  testing::TempDir dir;
  dir.write("a/bad.json", R"({"name": "x", "inputs": {)");
  dir.write("a/good.json", rmsnorm_dump().dump());
  NormalizeFilesOptions options;
  options.paths = {dir.path() / "a"};
  const FilesRun run = run_files(options);
  ASSERT_EQ(run.files.size(), 2U);
  EXPECT_EQ(run.files[0].verdict, NormalizeVerdict::skipped);
  EXPECT_EQ(run.files[0].findings.front().diagnostic.code, codes::k_json_parse);
  EXPECT_EQ(run.files[1].verdict, NormalizeVerdict::valid);
  EXPECT_EQ(run.summary.skipped, 1U);
  EXPECT_EQ(run.summary.valid, 1U);
  EXPECT_EQ(environment_errors(run), 0U) << "a malformed file is a finding, not an I/O problem";
}

TEST(NormalizeFiles, InPlaceReplacesOnlyChangedFilesAndRefusesSymlinks) {
  testing::TempDir dir;
  const auto raw = dir.write("d/raw.json", rmsnorm_dump().dump());
  const auto target = dir.write("elsewhere/target.json", rmsnorm_dump().dump());
  std::filesystem::create_symlink(target, dir.path() / "d" / "link.json");
  NormalizeFilesOptions options;
  options.paths = {dir.path() / "d"};
  options.write = NormalizeWrite::in_place;
  const FilesRun first = run_files(options);
  ASSERT_EQ(first.files.size(), 2U);
  const auto& link =
      first.files[0].input.filename() == "link.json" ? first.files[0] : first.files[1];
  EXPECT_FALSE(link.written.has_value());
  ASSERT_FALSE(link.findings.empty());
  EXPECT_EQ(link.findings.back().diagnostic.code, codes::k_io_write);
  EXPECT_EQ(environment_errors(link), 1U);
  EXPECT_TRUE(std::filesystem::is_symlink(dir.path() / "d" / "link.json"));
  EXPECT_EQ(*read_text_file(target), rmsnorm_dump().dump()) << "the link target is untouched";
  EXPECT_NE(read_text_file(raw)->find("def run("), std::string::npos);
  std::filesystem::remove(dir.path() / "d" / "link.json");
  const FilesRun second = run_files(options);
  ASSERT_EQ(second.files.size(), 1U);
  EXPECT_FALSE(second.files[0].changed);
  EXPECT_FALSE(second.files[0].written.has_value()) << "an unchanged file is not rewritten";
}

// Killed between writing a normalized file and renaming it, an in-place run leaves the input as it
// was and a temporary beside it; the rerun removes the temporary, is not misled into reading it
// as an input, and writes the normalized file.
TEST(NormalizeFiles, ARerunAfterAKillLeavesNoTemporary) {
  testing::TempDir dir;
  const auto raw = dir.write("d/raw.json", rmsnorm_dump().dump());
  NormalizeFilesOptions options;
  options.paths = {dir.path() / "d"};
  options.write = NormalizeWrite::in_place;
  ASSERT_TRUE(testing::dies_in_an_atomic_write([&] { (void)run_files(options); }));
  ASSERT_EQ(testing::temporaries_below(dir.path() / "d").size(), 1U);
  EXPECT_EQ(*read_text_file(raw), rmsnorm_dump().dump());
  const FilesRun rerun = run_files(options);
  ASSERT_EQ(rerun.files.size(), 1U) << "the temporary is no input";
  EXPECT_EQ(rerun.files[0].written, raw);
  EXPECT_EQ(testing::tree(dir.path() / "d"), std::vector<std::string>{"raw.json"});
  EXPECT_NE(read_text_file(raw)->find("def run("), std::string::npos);
}

// In place, the replaced file's permission bits are the new file's already before the rename: a
// kill just after the rename used to leave the normalized file with 0644, which no rerun repaired
// (the content being right, the file was not written again).
TEST(NormalizeFiles, InPlaceKeepsThePermissionBitsAtEveryMoment) {
  testing::TempDir dir;
  const auto raw = dir.write("d/raw.json", rmsnorm_dump().dump());
  constexpr auto k_bits = std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                          std::filesystem::perms::group_read;
  std::filesystem::permissions(raw, k_bits, std::filesystem::perm_options::replace);
  NormalizeFilesOptions options;
  options.paths = {dir.path() / "d"};
  options.write = NormalizeWrite::in_place;
  const auto bits_of = [](const std::filesystem::path& path) {
    return std::filesystem::status(path).permissions() & std::filesystem::perms::mask;
  };
  std::vector<std::filesystem::perms> temporary_bits;
  ASSERT_TRUE(testing::inspect_a_stopped_atomic_write(
      [&] { (void)run_files(options); },
      [&] {
        for (const auto& temporary : testing::temporaries_below(dir.path() / "d")) {
          temporary_bits.push_back(bits_of(dir.path() / "d" / temporary));
        }
      }));
  EXPECT_EQ(temporary_bits, std::vector<std::filesystem::perms>{k_bits});
  const FilesRun run = run_files(options);
  ASSERT_EQ(run.files.size(), 1U);
  EXPECT_EQ(run.files[0].written, raw);
  EXPECT_EQ(bits_of(raw), k_bits);
}

TEST(NormalizeFiles, OutputDirKeepsRelativePathsAndRejectsCollisions) {
  testing::TempDir dir;
  dir.write("in/sub/x.json", rmsnorm_dump().dump());
  dir.write("other/x.json", rmsnorm_dump().dump());
  NormalizeFilesOptions options;
  options.paths = {dir.path() / "in", dir.path() / "other" / "x.json", dir.path() / "in"};
  options.write = NormalizeWrite::output_dir;
  options.output_dir = dir.path() / "out";
  const FilesRun run = run_files(options);
  ASSERT_EQ(run.files.size(), 3U);
  EXPECT_EQ(*run.files[0].written, dir.path() / "out" / "sub" / "x.json");
  EXPECT_EQ(*run.files[1].written, dir.path() / "out" / "x.json");
  EXPECT_FALSE(run.files[2].written.has_value());
  EXPECT_EQ(run.files[2].findings.back().diagnostic.code, codes::k_normalize_output_collision);
  EXPECT_EQ(environment_errors(run.files[2]), 1U);
  EXPECT_EQ(environment_errors(run), 1U);
}

} // namespace
} // namespace fib

namespace fib {
namespace {

TEST(Normalize, DecisionsNamingMissingTargetsAreReported) {
  NormalizeDecisions decisions;
  auto& d = decisions.definitions["rmsnorm_h64"];
  d.input_dtypes["hiden_states"] = "float32";
  d.axis_values["page_sise"] = 16;
  d.rename_outputs["outptu"] = "y";
  NormalizeOptions options;
  options.decisions = &decisions;
  const Outcome out = normalize(rmsnorm_dump(), options);
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_decision, "/inputs/hiden_states", FindingKind::question))
      << describe(out.findings);
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_decision, "/axes/page_sise", FindingKind::question));
  EXPECT_TRUE(
      has_finding(out, codes::k_normalize_decision, "/outputs/outptu", FindingKind::question));
  // Decisions already in effect (a dropped input, a renamed output) stay silent on a re-run.
  NormalizeDecisions applied_once;
  applied_once.definitions["rmsnorm_h64"].drop_inputs.insert("gone");
  applied_once.definitions["rmsnorm_h64"].rename_outputs["old"] = "output";
  options.decisions = &applied_once;
  EXPECT_FALSE(has_code(normalize(rmsnorm_dump(), options), codes::k_normalize_decision));
}

} // namespace
} // namespace fib
