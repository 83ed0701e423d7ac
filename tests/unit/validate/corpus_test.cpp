// Real data from the corpus beside the repository (testing::corpus_dir(); read in place, never
// copied). Skipped when the corpus is absent.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/validate/files.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fib {
namespace {

using testing::corpus_dir;

struct FileResult {
  DiagnosticList diagnostics;
  ValidateSummary summary;
};

FileResult validate_one(const std::filesystem::path& file, FileKind kind = FileKind::automatic) {
  FileResult result;
  ValidateFilesOptions options;
  options.paths = {file};
  options.kind = kind;
  result.summary = validate_files(options, testing::python(), result.diagnostics);
  return result;
}

// The old tool's verdict covers its own checks only: fib's extra errors (origin fib) are left out.
bool rejected_by_legacy_checks(const DiagnosticList& list) {
  for (const Diagnostic& d : list.items()) {
    const CodeInfo* info = find_code(d.code);
    if (d.severity == Severity::error && info != nullptr && info->origin == CheckOrigin::legacy) {
      return true;
    }
  }
  return false;
}

#define FIB_REQUIRE_CORPUS()                                                                       \
  if (corpus_dir().empty()) {                                                                      \
    GTEST_SKIP() << "../shared/corpus is absent";                                                  \
  }

TEST(Corpus, AllNineteenDatasetDefinitionsAreValid) {
  FIB_REQUIRE_CORPUS();
  ValidateFilesOptions options;
  options.paths = {corpus_dir() / "dataset" / "definitions"};
  DiagnosticList diagnostics;
  const ValidateSummary summary = validate_files(options, testing::python(), diagnostics);
  EXPECT_EQ(summary.files, 19u);
  EXPECT_EQ(diagnostics.count(Severity::error), 0u)
      << (diagnostics.items().empty() ? "" : diagnostics.items()[0].message);
  EXPECT_GT(diagnostics.count(Severity::warning),
            0u); // missing descriptions, as the old tool warns
  EXPECT_TRUE(diagnostics.contains(codes::k_description_missing));
}

TEST(Corpus, WholeDatasetTreeHasNoErrors) {
  FIB_REQUIRE_CORPUS();
  ValidateFilesOptions options;
  options.paths = {corpus_dir() / "dataset"};
  DiagnosticList diagnostics;
  const ValidateSummary summary = validate_files(options, testing::python(), diagnostics);
  EXPECT_GT(summary.files, 19u);
  EXPECT_EQ(diagnostics.count(Severity::error), 0u);
}

struct VariantCase {
  const char* path; // relative to the corpus
  const char* code;
  const char* pointer;
};

TEST(Corpus, EachVariantGetsThePredictedError) {
  FIB_REQUIRE_CORPUS();
  const VariantCase cases[] = {
      // an integer inside `shape`
      {"variants/fib-branches-extra/flashinfer_trace/definitions/nsa_paged/"
       "nsa_topk_indexer_h16_ckv512_kpe64_topk256.json",
       "schema.type", "/inputs/k_index_cache/shape/1"},
      // uint8 dtype
      {"variants/fib-branches-extra/flashinfer_trace/definitions/moe/"
       "trtllm_fp4_block_scale_routed_moe_topk8_e128_h4096_i2048.json",
       "definition.dtype.invalid", "/inputs/hidden_states/dtype"},
      // missing reference, and an expression as a shape entry
      {"variants/gugudeshubao__flashinfer-bench-tma-thrust/definitions/attention/"
       "deepseek_dsa_decode_mla_core_v1.json",
       "schema.required", "/reference"},
      {"variants/gugudeshubao__flashinfer-bench-tma-thrust/definitions/attention/"
       "deepseek_dsa_decode_mla_core_v1.json",
       "definition.shape.expression", "/inputs/wkv_b/shape/1"},
      // `type` instead of `op_type`
      {"variants/xslingcn__flashinfer-trace/definitions/gemm/gemm_n_4096_k_4096.json",
       "schema.required", "/op_type"},
      {"legacy-2025-08/dataset/definitions/prefill/batch_gqa_ragged_prefill_h32_kv8_d128.json",
       "schema.required", "/op_type"},
      // `sycl` and capitalised languages
      {"variants/sandlbn__flashinfer-bench/solutions/flashinfer-bench-examples/rmsnorm/"
       "rmsnorm_example_h4096/rmsnorm_sycl_example.json",
       "schema.choice", "/spec/language"},
      {"variants/xslingcn__flashinfer-trace/solutions/gemm/gemm_n_4096_k_4096/"
       "torch_gemm_n_4096_k_4096.json",
       "schema.choice", "/spec/language"},
      // old-schema workload lines: "solution": "" and "evaluation": {}
      {"variants/xslingcn__flashinfer-trace/traces/workloads/gemm/"
       "gemm_n_6144_k_4096.workload.jsonl",
       "schema.required", "/evaluation/status"},
      {"variants/xslingcn__flashinfer-trace/traces/workloads/gemm/"
       "gemm_n_6144_k_4096.workload.jsonl",
       "workload.not-workload-only", "/solution"},
      {"legacy-2025-08/dataset/traces/workloads/prefill/"
       "batch_gqa_ragged_prefill_h32_kv8_d128.workload.jsonl",
       "schema.required", "/workload/uuid"},
      // a dumped reference without a top-level run
      {"variants/flashinfer-ai__flashinfer-fi_trace_out/definitions/rmsnorm/rmsnorm_h3072.json",
       "definition.reference.no-run", "/reference"},
  };
  for (const VariantCase& c : cases) {
    SCOPED_TRACE(c.path);
    const FileResult result = validate_one(corpus_dir() / c.path);
    EXPECT_TRUE(testing::has(result.diagnostics, c.code, c.pointer))
        << "expected " << c.code << " at " << c.pointer;
    EXPECT_GT(result.diagnostics.count(Severity::error), 0u);
  }
}

TEST(Corpus, EveryRawDumpFails) {
  FIB_REQUIRE_CORPUS();
  int dumps = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(corpus_dir() / "dumps")) {
    if (entry.path().extension() != ".json") {
      continue;
    }
    ++dumps;
    SCOPED_TRACE(entry.path().string());
    const FileResult result = validate_one(entry.path(), FileKind::definition);
    EXPECT_GT(result.diagnostics.count(Severity::error), 0u);
    // No top-level `run`: either a dumped `_<name>_reference` or no reference at all.
    EXPECT_TRUE(testing::has(result.diagnostics, codes::k_reference_no_run, "/reference") ||
                testing::has(result.diagnostics, codes::k_schema_required, "/reference"));
  }
  EXPECT_EQ(dumps, 26);
}

TEST(Corpus, DefinitionVerdictsAgreeWithTheOldTool) {
  FIB_REQUIRE_CORPUS();
  std::ifstream tsv(corpus_dir() / "anchor-reports" / "definition-verdicts.tsv");
  ASSERT_TRUE(tsv.good());
  std::string line;
  int compared = 0;
  while (std::getline(tsv, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const auto tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    const std::string path = line.substr(0, tab);
    const std::string verdict = line.substr(tab + 1);
    SCOPED_TRACE(path);
    const FileResult result = validate_one(corpus_dir() / path, FileKind::definition);
    EXPECT_EQ(rejected_by_legacy_checks(result.diagnostics), verdict == "error");
    ++compared;
  }
  EXPECT_EQ(compared, 56);
}

} // namespace
} // namespace fib
