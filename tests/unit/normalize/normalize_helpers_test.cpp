// Rule N22 (helpers inlined from FlashInfer's trace templates) and what it leaves to N3: on the
// project's fixture package (tests/fakes/helper_source) and on the real package source of the
// corpus (its flashinfer-src/, the revision that wrote its dumps/; skipped when absent), where the
// normalized references must then build and pass the smoke run.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/model/definition.hpp>
#include <fib/normalize/normalize.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>

namespace fib {
namespace {

using testing::parse_or_die;
using testing::python;

#ifdef FIB_WORKER_BINARY
constexpr const char* k_worker = FIB_WORKER_BINARY;
#else
constexpr const char* k_worker = "";
#endif

std::filesystem::path fixture_source() {
  return std::filesystem::path(FIB_SOURCE_DIR) / "tests" / "fakes" / "helper_source";
}

std::filesystem::path corpus_source() {
  const auto corpus = testing::corpus_dir();
  return corpus.empty() ? corpus : corpus / "flashinfer-src";
}

NormalizedDefinition normalize(const Json& input, const std::filesystem::path& source) {
  NormalizeOptions options;
  options.flashinfer_source = source;
  auto result = normalize_definition(parse_or_die(input.dump(), "dump.json"), options, python());
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message);
  return result ? std::move(*result) : NormalizedDefinition{};
}

// The findings with `code`.
std::vector<RuleFinding> findings_of(const NormalizedDefinition& out, std::string_view code) {
  std::vector<RuleFinding> found;
  std::copy_if(out.findings.begin(), out.findings.end(), std::back_inserter(found),
               [&](const RuleFinding& f) { return f.diagnostic.code == code; });
  return found;
}

std::string describe(const NormalizedDefinition& out) {
  std::string text;
  for (const auto& f : out.findings) {
    text += f.diagnostic.code + " " + f.diagnostic.pointer + ": " + f.diagnostic.message + "\n";
  }
  return text;
}

std::string reference_of(const NormalizedDefinition& out) {
  return out.document.value("reference", std::string());
}

// A scalar definition whose reference (entry `_alpha_reference`, as if dumped from the fixture's
// alpha.py) returns `expression`.
Json fixture_dump(std::string_view expression, std::string_view own_code = "") {
  Json dump = Json::parse(R"({
    "name": "alpha_h4", "op_type": "alpha", "tags": ["status:verified"],
    "axes": {"n": {"type": "var"}},
    "inputs": {"x": {"shape": ["n"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["n"], "dtype": "float32"}}
  })");
  dump["reference"] = std::string("import torch\n\n") + std::string(own_code) +
                      "def _alpha_reference(x):\n    return " + std::string(expression) + "\n";
  return dump;
}

TEST(NormalizeHelpers, TransitiveHelpersAndTheirImportAreInlinedAndReported) {
  const auto out = normalize(fixture_dump("_outer(x)"), fixture_source());
  const auto applied = findings_of(out, codes::k_normalize_n22);
  ASSERT_EQ(applied.size(), 1U) << describe(out);
  EXPECT_EQ(applied[0].kind, FindingKind::applied);
  EXPECT_EQ(applied[0].diagnostic.pointer, "/reference");
  EXPECT_EQ(applied[0].diagnostic.severity, Severity::note);
  EXPECT_EQ(applied[0].diagnostic.message,
            "inlined 3 helpers from flashinfer/trace/templates/alpha.py: _EPS, _inner, _outer, "
            "with the import they need: import math");
  EXPECT_TRUE(findings_of(out, codes::k_normalize_n3).empty()) << describe(out);
  const std::string reference = reference_of(out);
  EXPECT_LT(reference.find("def _outer"), reference.find("def _alpha_reference")) << reference;
  // A3b-1 counts the inlined lines when it names the entry's line.
  const auto wrapper = findings_of(out, codes::k_normalize_a3b_1);
  ASSERT_EQ(wrapper.size(), 1U);
  const auto entry_line =
      1 + std::count(reference.begin(),
                     reference.begin() +
                         static_cast<std::ptrdiff_t>(reference.find("def _alpha_reference")),
                     '\n');
  EXPECT_NE(wrapper[0].diagnostic.message.find(fmt::format("(line {})", entry_line)),
            std::string::npos)
      << wrapper[0].diagnostic.message;
}

TEST(NormalizeHelpers, HelpersFromSeveralModulesNameEachFile) {
  const auto out = normalize(fixture_dump("_uses_beta(x) + _uses_template(x)"), fixture_source());
  const auto applied = findings_of(out, codes::k_normalize_n22);
  ASSERT_EQ(applied.size(), 1U) << describe(out);
  EXPECT_EQ(applied[0].diagnostic.message,
            "inlined 6 helpers from flashinfer/trace/template.py (_SCALE, scaled) and "
            "flashinfer/trace/templates/beta.py (beta_helper, _BETA) and "
            "flashinfer/trace/templates/alpha.py (_uses_template, _uses_beta)");
}

TEST(NormalizeHelpers, NamesNotFoundStayAQuestionWithTheReason) {
  const auto out =
      normalize(fixture_dump("_outer(x) + _nope(x) + _uses_compiled(x)"), fixture_source());
  EXPECT_EQ(findings_of(out, codes::k_normalize_n22).size(), 1U) << describe(out);
  const auto asked = findings_of(out, codes::k_normalize_n3);
  ASSERT_EQ(asked.size(), 1U) << describe(out);
  EXPECT_EQ(asked[0].kind, FindingKind::question);
  EXPECT_EQ(asked[0].diagnostic.pointer, "/reference");
  EXPECT_EQ(asked[0].diagnostic.message,
            "decision needed: the reference reads names it never defines: _nope, _uses_compiled; "
            "it fails with NameError when run. Not inlined from FlashInfer's trace templates: "
            "_nope: not defined in any flashinfer/trace/templates module; _uses_compiled: needs "
            "fast_op: imported by `from ...compiled_ext import fast_op` in "
            "flashinfer/trace/templates/alpha.py, but flashinfer.compiled_ext is not Python "
            "source in the package");
  EXPECT_EQ(asked[0].diagnostic.hint, "paste the missing helpers into the reference by hand");
}

TEST(NormalizeHelpers, ANameTheReferenceDefinesItselfIsNotReplaced) {
  const auto out =
      normalize(fixture_dump("_outer(x)", "def _inner(x):\n    return x\n\n\n"), fixture_source());
  const auto applied = findings_of(out, codes::k_normalize_n22);
  ASSERT_EQ(applied.size(), 1U) << describe(out);
  EXPECT_EQ(applied[0].diagnostic.message,
            "inlined 2 helpers from flashinfer/trace/templates/alpha.py: _EPS, _outer");
  const std::string reference = reference_of(out);
  EXPECT_EQ(reference.find("def _inner"), reference.rfind("def _inner")) << reference;
}

TEST(NormalizeHelpers, NormalizingTheResultAgainChangesNothing) {
  const auto first = normalize(fixture_dump("_outer(x) + _uses_beta(x)"), fixture_source());
  const auto second = normalize(first.document, fixture_source());
  EXPECT_FALSE(second.changed) << describe(second);
  EXPECT_TRUE(findings_of(second, codes::k_normalize_n22).empty());
  const auto again = normalize(fixture_dump("_outer(x) + _uses_beta(x)"), fixture_source());
  EXPECT_EQ(canonical_json_text(again.document), canonical_json_text(first.document));
}

TEST(NormalizeHelpers, WithoutAPackageTheHintSaysHowToNameOne) {
  const auto out = normalize(fixture_dump("_outer(x)"), fixture_source() / "flashinfer");
  const auto asked = findings_of(out, codes::k_normalize_n3);
  ASSERT_EQ(asked.size(), 1U) << describe(out);
  EXPECT_NE(asked[0].diagnostic.message.find("has no trace/templates"), std::string::npos)
      << asked[0].diagnostic.message;
  EXPECT_NE(asked[0].diagnostic.hint.find("--flashinfer-src DIR"), std::string::npos);
  EXPECT_NE(asked[0].diagnostic.hint.find("FIB_FLASHINFER_SRC"), std::string::npos);
}

TEST(NormalizeHelpers, ThousandsOfUnknownNamesStayOneQuestion) {
  // One flat list (a chain of 5000 `+` would be too deep for CPython's parser).
  std::string expression = "[x";
  for (int i = 0; i < 5000; ++i) {
    expression += fmt::format(", _unknown_{:05}", i);
  }
  expression += "][0]";
  const auto out = normalize(fixture_dump(expression), fixture_source());
  EXPECT_TRUE(findings_of(out, codes::k_normalize_n22).empty());
  const auto asked = findings_of(out, codes::k_normalize_n3);
  ASSERT_EQ(asked.size(), 1U);
  EXPECT_NE(asked[0].diagnostic.message.find("_unknown_00000, _unknown_00001"), std::string::npos);
}

// --- the corpus: the real package source and the dumps it wrote ---

struct CorpusCase {
  const char* dump;
  const char* message; // N22's
};

constexpr CorpusCase k_corpus_cases[] = {
    {"rope_h32_kv8_d128.json", "inlined 4 helpers from flashinfer/trace/templates/rope.py: "
                               "_rope_freqs, _rotate, _positions_from_indptr, _apply_rope_core, "
                               "with the import they need: from typing import Tuple"},
    {"rope_quantize_fp8_h8_kv2_rope64.json",
     "inlined 1 helper from flashinfer/trace/templates/rope.py: _rotate"},
    {"xqa_batch_decode_h8_kv16_d128_ps2.json",
     "inlined 2 helpers from flashinfer/trace/templates/attention.py: _trtllm_kv_from_cache, "
     "_trtllm_paged_attention_reference"},
    {"moe_fp4_block_scale_default_routing_topk8_e32_h7168_i2048.json",
     "inlined 6 helpers from flashinfer/trace/templates/moe.py: _unpack_fp4_e2m1, "
     "_ue8m0_to_float32, _decode_block_scales, _dequantize_fp4_tensor, "
     "_dequantize_fp4_hidden_states, _fp4_moe_run_experts"},
};

NormalizedDefinition normalize_corpus_dump(const char* dump) {
  const auto text = testing::read_file(testing::corpus_dir() / "dumps" / dump);
  EXPECT_FALSE(text.empty()) << dump;
  return normalize(Json::parse(text), corpus_source());
}

TEST(NormalizeHelpersCorpus, TheDumpsThatCallHelpersGetThemFromTheRealTemplates) {
  if (corpus_source().empty() || !std::filesystem::is_directory(corpus_source())) {
    GTEST_SKIP() << "no shared corpus";
  }
  for (const auto& c : k_corpus_cases) {
    SCOPED_TRACE(c.dump);
    const auto out = normalize_corpus_dump(c.dump);
    const auto applied = findings_of(out, codes::k_normalize_n22);
    ASSERT_EQ(applied.size(), 1U) << describe(out);
    EXPECT_EQ(applied[0].kind, FindingKind::applied);
    EXPECT_EQ(applied[0].diagnostic.pointer, "/reference");
    EXPECT_EQ(applied[0].diagnostic.message, c.message);
    EXPECT_TRUE(findings_of(out, codes::k_normalize_n3).empty()) << describe(out);
    const auto again = normalize(out.document, corpus_source());
    EXPECT_FALSE(again.changed) << describe(again);
  }
}

// After N22 the references of those dumps build (no NameError) and the smoke run either passes or
// says why not: what is left is the dump's own defect or this machine's torch, never a helper.
struct SmokeCase {
  const char* dump;
  const char* note;                   // what the case shows
  std::string_view code;              // of the smoke run's diagnostic
  std::string_view pointer;           // of that diagnostic ("" for the reference as a whole)
  const char* text;                   // in its message
  DefinitionDecisions decisions = {}; // answers given before normalizing
};

std::vector<SmokeCase> smoke_cases() {
  DefinitionDecisions rope_float32;
  rope_float32.output_dtypes = {{"q_rope", "float32"}, {"k_rope", "float32"}};
  DefinitionDecisions xqa_workspace;
  xqa_workspace.run_arguments = {{"workspace_buffer", "None"}};
  return {
      {"rope_h32_kv8_d128.json",
       "the template's reference rotates a float32 copy and returns it: a defect of the dump",
       codes::k_smoke_output_dtype, "/outputs/q_rope/dtype",
       "has dtype float32, declared bfloat16"},
      {"rope_h32_kv8_d128.json", "with the outputs declared as what the reference returns, it runs",
       codes::k_reference_ok, "", "smoke run: ok (2 outputs as declared", rope_float32},
      {"rope_quantize_fp8_h8_kv2_rope64.json", "float8 needs a newer torch than this machine's",
       codes::k_smoke_skipped, "", "torch.float8_e4m3fn, which torch"},
      {"xqa_batch_decode_h8_kv16_d128_ps2.json",
       "num_heads 8 < num_kv_heads 16 (N15: axes read from the wrong layout), a defect of the dump",
       codes::k_smoke_exception, "", "ZeroDivisionError", xqa_workspace},
      {"moe_fp4_block_scale_default_routing_topk8_e32_h7168_i2048.json",
       "its smallest inputs are above the smoke run's byte limit", codes::k_smoke_skipped, "",
       "above --max-bytes"},
  };
}

TEST(NormalizeHelpersCorpus, TheNormalizedReferencesBuildAndTheSmokeRunSaysWhatIsLeft) {
  if (corpus_source().empty() || !std::filesystem::is_directory(corpus_source())) {
    GTEST_SKIP() << "no shared corpus";
  }
  if (std::string_view(k_worker).empty()) {
    GTEST_SKIP() << "fib was built without torch (no fib-worker)";
  }
  ReferenceRunnerOptions runner_options;
  runner_options.worker = k_worker;
  ReferenceRunner runner(runner_options);
  for (const auto& c : smoke_cases()) {
    SCOPED_TRACE(std::string(c.dump) + ": " + c.note);
    NormalizeDecisions decisions;
    const auto text = testing::read_file(testing::corpus_dir() / "dumps" / c.dump);
    Json dump = Json::parse(text);
    decisions.definitions[dump.at("name").get<std::string>()] = c.decisions;
    NormalizeOptions options;
    options.flashinfer_source = corpus_source();
    options.decisions = &decisions;
    auto normalized = normalize_definition(parse_or_die(dump.dump(), c.dump), options, python());
    ASSERT_TRUE(normalized.has_value());
    ASSERT_EQ(findings_of(*normalized, codes::k_normalize_n22).size(), 1U);
    DiagnosticList sink;
    const Definition definition =
        parse_definition(parse_or_die(canonical_json_text(normalized->document), c.dump), sink);
    ASSERT_FALSE(sink.has_errors()) << testing::describe(sink);
    const auto diagnostics =
        run_reference_checks(definition, ReferenceChecks::build_and_smoke, runner,
                             normalized->document.value("init", std::string()));
    ASSERT_FALSE(diagnostics.empty());
    std::string all;
    for (const auto& d : diagnostics) {
      all += d.code + " " + d.pointer + ": " + d.message + "\n";
    }
    EXPECT_EQ(diagnostics.front().code, codes::k_reference_ok) << all; // the build passed
    EXPECT_EQ(diagnostics.front().message, "reference build: ok") << all;
    const bool found = std::any_of(diagnostics.begin() + 1, diagnostics.end(), [&](const auto& d) {
      return d.code == c.code && d.pointer == c.pointer &&
             d.message.find(c.text) != std::string::npos;
    });
    EXPECT_TRUE(found) << c.code << " " << c.pointer << " " << c.text << "\n" << all;
    EXPECT_EQ(all.find("missing-helper"), std::string::npos) << all;
    EXPECT_EQ(all.find("NameError"), std::string::npos) << all;
  }
}

} // namespace
} // namespace fib
