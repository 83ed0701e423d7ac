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
                     reference.begin() + static_cast<std::ptrdiff_t>(
                                             reference.find("def _alpha_reference")),
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
  const auto out = normalize(fixture_dump("_outer(x) + _nope(x) + _uses_compiled(x)"),
                             fixture_source());
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
  const auto out = normalize(fixture_dump("_outer(x)", "def _inner(x):\n    return x\n\n\n"),
                             fixture_source());
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
  std::string expression = "x";
  for (int i = 0; i < 5000; ++i) {
    expression += fmt::format(" + _unknown_{:05}", i);
  }
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
