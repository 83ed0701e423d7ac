// fib normalize on the real raw dumps of the test corpus (its dumps/ folder; skipped when it is
// absent): every file idempotent, every file without an open question valid afterwards, and the
// outcomes the dumper notes predict for named files.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/normalize/normalize.hpp>
#include <fib/validate/files.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace fib {
namespace {

using testing::python;

struct CorpusResult {
  Json document;
  std::vector<RuleFinding> findings;
  std::string text;
};

std::filesystem::path dumps_dir() {
  const auto corpus = testing::corpus_dir();
  return corpus.empty() ? corpus : corpus / "dumps";
}

std::vector<std::filesystem::path> dump_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dumps_dir())) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

CorpusResult normalize_text(const std::string& text, const std::filesystem::path& file) {
  DiagnosticList sink;
  auto document = parse_json(text, file, sink);
  EXPECT_TRUE(document.has_value()) << file;
  if (!document) {
    return {};
  }
  auto result = normalize_definition(*document, {}, python());
  EXPECT_TRUE(result.has_value()) << file << (result ? "" : result.error().message);
  if (!result) {
    return {};
  }
  return CorpusResult{result->document, result->findings, canonical_json_text(result->document)};
}

CorpusResult normalize_file(const std::filesystem::path& file) {
  auto text = read_text_file(file);
  EXPECT_TRUE(text.has_value()) << file;
  return text ? normalize_text(*text, file) : CorpusResult{};
}

bool asks(const CorpusResult& result, std::string_view code) {
  return std::any_of(result.findings.begin(), result.findings.end(), [&](const auto& f) {
    return f.diagnostic.code == code && f.kind == FindingKind::question;
  });
}

bool applied(const CorpusResult& result, std::string_view code, std::string_view pointer) {
  return std::any_of(result.findings.begin(), result.findings.end(), [&](const auto& f) {
    return f.diagnostic.code == code && f.diagnostic.pointer == pointer &&
           f.kind == FindingKind::applied;
  });
}

std::vector<std::string> errors_of(const std::string& text, const std::filesystem::path& file) {
  DiagnosticList sink;
  auto document = parse_json(text, file, sink);
  if (!document) {
    return {document.error().code};
  }
  EXPECT_FALSE(validate_definition_document(*document, python(), sink).has_value());
  return testing::error_codes(sink);
}

class NormalizeCorpus : public ::testing::Test {
protected:
  void SetUp() override {
    if (dumps_dir().empty() || !std::filesystem::is_directory(dumps_dir())) {
      GTEST_SKIP() << "the corpus of raw dumps is absent";
    }
  }
  CorpusResult named(std::string_view relative) { return normalize_file(dumps_dir() / relative); }
};

TEST_F(NormalizeCorpus, EveryDumpIsIdempotentAndValidWhenNothingIsAsked) {
  const auto files = dump_files();
  ASSERT_FALSE(files.empty());
  std::size_t without_questions = 0;
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    const CorpusResult once = normalize_file(file);
    const CorpusResult twice = normalize_text(once.text, file);
    EXPECT_EQ(twice.text, once.text) << "normalizing twice must equal normalizing once";
    const bool open_question =
        std::any_of(once.findings.begin(), once.findings.end(),
                    [](const auto& f) { return f.kind == FindingKind::question; });
    if (!open_question) {
      ++without_questions;
      const auto errors = errors_of(once.text, file);
      EXPECT_TRUE(errors.empty()) << "only M/W findings, yet invalid: " << errors.front();
    }
  }
  EXPECT_GT(without_questions, 0U);
}

TEST_F(NormalizeCorpus, RawDumpsFailAndMostPassAfterNormalization) {
  std::size_t valid_before = 0;
  std::size_t valid_after = 0;
  const auto files = dump_files();
  for (const auto& file : files) {
    const auto text = read_text_file(file);
    ASSERT_TRUE(text.has_value());
    valid_before += errors_of(*text, file).empty() ? 1 : 0;
    valid_after += errors_of(normalize_file(file).text, file).empty() ? 1 : 0;
  }
  EXPECT_EQ(valid_before, 0U) << "every raw dump lacks `run`";
  EXPECT_GT(valid_after * 2, files.size()) << valid_after << " of " << files.size();
}

TEST_F(NormalizeCorpus, SiluAndMulNvfp4WrapsTheLastDef) {
  const CorpusResult result = named("silu_and_mul_nvfp4_quantize_k16384.json");
  const std::string reference = result.document["reference"].get<std::string>();
  EXPECT_NE(reference.find("return _silu_and_mul_nvfp4_quantize_reference("), std::string::npos);
  EXPECT_EQ(reference.find("return _fp4_quantize_reference(input="), std::string::npos);
}

TEST_F(NormalizeCorpus, FusedAddRmsnormDropsTheResidualOutput) {
  const CorpusResult result = named("fused_add_rmsnorm_h5120.json");
  EXPECT_FALSE(result.document["outputs"].contains("residual"));
  EXPECT_TRUE(result.document["outputs"].contains("output"));
  EXPECT_TRUE(applied(result, codes::k_normalize_a3b_3, "/outputs/residual"));
}

TEST_F(NormalizeCorpus, MergeStateInPlaceRenamesBothOutputs) {
  const CorpusResult result = named("merge_state_in_place_h32_d128.json");
  EXPECT_TRUE(result.document["outputs"].contains("v_out"));
  EXPECT_TRUE(result.document["outputs"].contains("s_out"));
  EXPECT_EQ(result.document["outputs"].size(), 2U);
}

TEST_F(NormalizeCorpus, AppendPagedKvCacheTakesTheCacheDtypeFromTheOutput) {
  const CorpusResult result = named("append_paged_kv_cache_kv8_d128.json");
  EXPECT_EQ(result.document["inputs"]["paged_kv_cache"]["dtype"], "bfloat16");
  EXPECT_TRUE(applied(result, codes::k_normalize_n4, "/inputs/paged_kv_cache/dtype"));
}

TEST_F(NormalizeCorpus, XqaBatchDecodeGetsTheHeadRatioFinding) {
  EXPECT_TRUE(asks(named("xqa_batch_decode_h8_kv16_d128_ps2.json"), codes::k_normalize_n15));
}

TEST_F(NormalizeCorpus, V1DumpsGetTheImportPreamble) {
  for (const std::string_view file :
       {"v1-sglang/rmsnorm_h3072.json", "v1-sglang/fused_add_rmsnorm_h3072.json"}) {
    const CorpusResult result = named(file);
    EXPECT_TRUE(applied(result, codes::k_normalize_n1, "/reference")) << file;
    EXPECT_NE(result.document["reference"].get<std::string>().find("import torch\n"),
              std::string::npos);
    EXPECT_TRUE(errors_of(result.text, file).empty()) << file;
  }
}

TEST_F(NormalizeCorpus, DumpsWithoutReferenceAreReportedNotInvented) {
  const CorpusResult result = named("mxfp8_grouped_quantize_k4096.json");
  EXPECT_TRUE(asks(result, codes::k_normalize_n16));
  EXPECT_FALSE(result.document.contains("reference"));
}

} // namespace
} // namespace fib
