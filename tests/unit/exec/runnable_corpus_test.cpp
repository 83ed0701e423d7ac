// Issue 16, "runnable is a verdict": every corpus dump, normalized as `fib normalize` does it,
// gets one of the four verdicts, each with its reason. Every "fails when run" here is a defect of
// the dump itself (the reason is with its row), not a false alarm of fib's synthesized inputs.
// Skipped without the torch worker or without the shared corpus.

#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/normalize/runnable.hpp>

#include <gtest/gtest.h>

#include <map>

namespace fib {
namespace {

#ifdef FIB_WORKER_BINARY
constexpr const char* k_worker = FIB_WORKER_BINARY;
#else
constexpr const char* k_worker = "";
#endif

struct ExpectedVerdict {
  Runnability runnability;
  std::string_view code;
  std::string_view reason; // a part of the verdict's reason
  // Once normalize inlines FlashInfer's helpers (the reference calls names the dump lacks), the
  // N3 question goes away and the verdict is this one instead (code too); nullopt when the row
  // has no such question.
  std::optional<Runnability> with_helpers = std::nullopt;
  std::string_view helpers_code = "";
};

using R = Runnability;

// The float8 rows assume a torch without float8 (the worker's torch 1.13); with float8 they are
// not asserted.
const std::map<std::string, ExpectedVerdict>& expected_verdicts() {
  static const std::map<std::string, ExpectedVerdict> table{
      // Defect of the dump: `paged_kv_cache` is declared as one 4-D tensor [num_pages, page_size,
      // heads, head_dim], but the reference reads a single tensor as the interleaved 5-D layout
      // [num_pages, 2, page_size, heads, head_dim] (`paged_kv_cache[:, 0]` is K), so K's rows are
      // heads and assigning a [heads, head_dim] token into one row cannot expand.
      {"append_paged_kv_cache_kv8_d128", {R::fails_when_run, codes::k_smoke_exception, "expand"}},
      {"fused_add_rmsnorm_h5120", {R::runnable, codes::k_reference_ok, ""}},
      {"gdn_decode_qk4_v8_d128", {R::runnable, codes::k_reference_ok, ""}},
      {"gdn_prefill_qk4_v8_d128", {R::needs_decision, codes::k_normalize_n7, "dtype unknown"}},
      {"gemm_bf16_N4096_K4096", {R::needs_decision, codes::k_normalize_n19, "upper-case"}},
      {"gemm_fp4_N2048_K7168_block_size16",
       {R::needs_decision, codes::k_normalize_n19, "upper-case"}},
      {"gqa_paged_decode_h32_kv8_d128_ps16", {R::runnable, codes::k_reference_ok, ""}},
      {"gqa_ragged_h32_kv8_d128", {R::runnable, codes::k_reference_ok, ""}},
      // Defect of the dump: the reference rebinds `v_a = v_a.to(torch.float32)` and then returns
      // `v_merged.to(v_a.dtype)`, i.e. float32, where the definition declares bfloat16.
      {"merge_state_h32_d128",
       {R::fails_when_run, codes::k_smoke_output_dtype,
        "output 'v_merged' has dtype float32, declared bfloat16"}},
      {"merge_state_in_place_h32_d128", {R::runnable, codes::k_reference_ok, ""}},
      {"mla_paged_decode_h16_ckv512_kpe64_ps1",
       {R::not_runnable_here, codes::k_smoke_skipped, "float8"}},
      {"moe_fp4_block_scale_default_routing_topk8_e32_h7168_i2048",
       {R::needs_decision, codes::k_normalize_n3, "_fp4_moe_run_experts", R::not_runnable_here,
        codes::k_smoke_skipped}},
      {"mxfp8_grouped_quantize_k4096", {R::needs_decision, codes::k_normalize_n16, "no reference"}},
      {"nvfp4_quantize_append_paged_kv_cache_kv2_d64_pd32_sd4_ps4",
       {R::needs_decision, codes::k_normalize_n16, "no reference"}},
      {"prims_ts_block_sparse_h8_kv8_d128_qb64_kb64",
       {R::needs_decision, codes::k_normalize_n16, "no reference"}},
      {"rmsnorm_h7168", {R::runnable, codes::k_reference_ok, ""}},
      {"rmsnorm_quant_h7168", {R::needs_decision, codes::k_normalize_n21, "quantized"}},
      // With FlashInfer's helpers inlined, a defect of the template itself shows: the helper
      // `_apply_rope_core` rotates `q.to(torch.float32)` and `_rotate` casts back to the dtype
      // of what it was given, float32, where the dump declares q_rope/k_rope bfloat16.
      {"rope_h32_kv8_d128",
       {R::needs_decision, codes::k_normalize_n3, "_rope_freqs", R::fails_when_run,
        codes::k_smoke_output_dtype}},
      {"rope_quantize_fp8_h8_kv2_rope64",
       {R::needs_decision, codes::k_normalize_n3, "_rotate", R::not_runnable_here,
        codes::k_smoke_skipped}},
      {"silu_and_mul_nvfp4_quantize_k16384",
       {R::needs_decision, codes::k_normalize_n11, "scale bytes"}},
      {"single_decode_h32_kv8_d128", {R::runnable, codes::k_reference_ok, ""}},
      {"softmax_v32000", {R::runnable, codes::k_reference_ok, ""}},
      {"top_k_top_p_sampling_v128256", {R::runnable, codes::k_reference_ok, ""}},
      {"xqa_batch_decode_h8_kv16_d128_ps2",
       {R::needs_decision, codes::k_normalize_n2, "workspace_buffer"}},
      {"fused_add_rmsnorm_h3072", {R::runnable, codes::k_reference_ok, ""}},
      {"rmsnorm_h3072", {R::runnable, codes::k_reference_ok, ""}},
  };
  return table;
}

TEST(RunnableCorpus, EveryDumpHasAVerdictWithItsReason) {
  if (std::string_view(k_worker).empty()) {
    GTEST_SKIP() << "fib was built without torch (no fib-worker)";
  }
  const auto dumps = testing::corpus_dir() / "dumps";
  if (!std::filesystem::is_directory(dumps)) {
    GTEST_SKIP() << "no shared corpus";
  }
  ReferenceRunnerOptions options;
  options.worker = k_worker;
  options.job_timeout = std::chrono::milliseconds(60'000);
  ReferenceRunner runner(options);
  NormalizeFilesOptions normalize;
  normalize.paths = {dumps};
  std::map<std::string, RunnableCheck> found;
  normalize_files(normalize, testing::python(), [&](const NormalizedFile& file) {
    found.emplace(file.input.stem().string(), check_runnable(file, runner));
  });
  ASSERT_TRUE(runner.worker_info().has_value()) << "the worker did not start";
  const bool float8 = runner.worker_info()->float8;
  RunnableCounts counts;
  for (const auto& [name, expected] : expected_verdicts()) {
    SCOPED_TRACE(name);
    const auto it = found.find(name);
    ASSERT_NE(it, found.end()) << "no such dump";
    const RunnableVerdict& verdict = it->second.verdict;
    counts.add(verdict.runnability);
    if (float8 && expected.reason == "float8") {
      continue;
    }
    if (expected.with_helpers && verdict.code != expected.code) {
      // normalize inlined the helpers: the question is gone, the definition runs (or says why
      // it cannot here).
      EXPECT_EQ(verdict.runnability, *expected.with_helpers) << render_verdict(verdict);
      EXPECT_EQ(verdict.code, expected.helpers_code) << render_verdict(verdict);
      continue;
    }
    EXPECT_EQ(verdict.runnability, expected.runnability) << render_verdict(verdict);
    EXPECT_EQ(verdict.code, expected.code) << render_verdict(verdict);
    EXPECT_NE(verdict.reason.find(expected.reason), std::string::npos) << render_verdict(verdict);
    if (verdict.runnability == R::needs_decision) {
      EXPECT_TRUE(it->second.diagnostics.empty()) << "nothing runs before the decision";
    }
  }
  EXPECT_EQ(found.size(), expected_verdicts().size());
  EXPECT_EQ(counts.total(), found.size());
}

// The append_paged_kv_cache failure is the declared shape, not fib's inputs: declared as the 5-D
// interleaved layout its reference reads, the same definition (same synthesized batch indices,
// kv_indptr and kv_indices) runs.
TEST(RunnableCorpus, AppendPagedKvCacheRunsWithTheLayoutItsReferenceReads) {
  if (std::string_view(k_worker).empty()) {
    GTEST_SKIP() << "fib was built without torch (no fib-worker)";
  }
  const auto dump = testing::corpus_dir() / "dumps" / "append_paged_kv_cache_kv8_d128.json";
  if (!std::filesystem::exists(dump)) {
    GTEST_SKIP() << "no shared corpus";
  }
  NormalizeFilesOptions normalize;
  normalize.paths = {dump};
  std::string text;
  normalize_files(normalize, testing::python(),
                  [&](const NormalizedFile& file) { text = file.normalized_text; });
  Json definition = Json::parse(text);
  const Json interleaved = {"num_pages", "k_and_v", "page_size", "num_kv_heads", "head_dim"};
  definition["axes"]["k_and_v"] = Json{{"type", "const"}, {"value", 2}};
  definition["inputs"]["paged_kv_cache"]["shape"] = interleaved;
  definition["outputs"]["paged_kv_cache_out"]["shape"] = interleaved;
  ReferenceRunnerOptions options;
  options.worker = k_worker;
  ReferenceRunner runner(options);
  const auto check = smoke_check_text(canonical_json_text(definition), dump, runner);
  EXPECT_EQ(check.verdict.runnability, Runnability::runnable) << render_verdict(check.verdict);
}

} // namespace
} // namespace fib
