// Synthesized smoke inputs honour index semantics and the definition's constraints, so a smoke
// run raises no false alarm: index pointers end at the length of the array they span, indices
// stay below the axis they index, tied axes are solved, scalars take sensible values. No worker.

#include "smoke_fixture.hpp"
#include "test_support.hpp"

#include <fib/exec/smoke.hpp>
#include <fib/model/definition.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

using testing::definition_of;
using testing::input_named;

// The shape of FlashInfer's append_paged_kv_cache dump: an indptr with no data constraint, token
// batch indices, positions, and a `batch_size_plus_1` axis.
constexpr const char* k_append = R"JSON({
  "name": "append_paged_kv_cache", "op_type": "kv_cache",
  "axes": {"nnz_kv": {"type": "var"}, "num_pages": {"type": "const", "value": 16},
           "page_size": {"type": "var"}, "batch_size": {"type": "var"},
           "batch_size_plus_1": {"type": "var"}, "num_kv_indices": {"type": "var"},
           "num_kv_heads": {"type": "const", "value": 2}, "head_dim": {"type": "const", "value": 8}},
  "constraints": ["batch_size_plus_1 == batch_size + 1", "num_kv_indices >= 8"],
  "inputs": {"append_key": {"shape": ["nnz_kv", "num_kv_heads", "head_dim"], "dtype": "bfloat16"},
             "batch_indices": {"shape": ["nnz_kv"], "dtype": "int32"},
             "positions": {"shape": ["nnz_kv"], "dtype": "int32"},
             "paged_kv_cache": {"shape": ["num_pages", "page_size", "num_kv_heads", "head_dim"],
                                "dtype": "bfloat16"},
             "kv_indices": {"shape": ["num_kv_indices"], "dtype": "int32"},
             "kv_indptr": {"shape": ["batch_size_plus_1"], "dtype": "int32"},
             "kv_last_page_len": {"shape": ["batch_size"], "dtype": "int32"}},
  "outputs": {"out": {"shape": ["num_pages", "page_size", "num_kv_heads", "head_dim"],
                      "dtype": "bfloat16"}},
  "reference": "def run(append_key, batch_indices, positions, paged_kv_cache, kv_indices, kv_indptr, kv_last_page_len):\n    return paged_kv_cache\n"
})JSON";

TEST(SmokeSemantics, AnIndexPointerEndsAtTheLengthOfTheArrayItSpans) {
  const auto plan = plan_smoke_run(definition_of(k_append));
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  EXPECT_EQ(plan->axes.at("batch_size_plus_1"), plan->axes.at("batch_size") + 1);
  const auto& indptr = input_named(*plan, "kv_indptr");
  EXPECT_EQ(indptr.fill, InputFill::index_pointer);
  // No constraint names kv_indptr[-1]: kv_indptr spans kv_indices, so it ends at its length
  // (8 here), not at one entry per sequence (4).
  EXPECT_EQ(plan->axes.at("num_kv_indices"), 8);
  EXPECT_EQ(indptr.total, 8);
  EXPECT_EQ(input_named(*plan, "kv_indices").bound, plan->axes.at("num_pages"));
}

TEST(SmokeSemantics, IndicesStayBelowTheAxisTheyIndex) {
  const auto plan = plan_smoke_run(definition_of(k_append));
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  // batch_indices index sequences (4), not pages (16).
  const auto& batch = input_named(*plan, "batch_indices");
  EXPECT_EQ(batch.fill, InputFill::indices);
  EXPECT_EQ(batch.bound, 4);
  EXPECT_EQ(input_named(*plan, "kv_indices").bound, 16);
  // Positions inside a sequence: 0 is in range of every sequence's pages.
  EXPECT_EQ(input_named(*plan, "positions").fill, InputFill::zeros);
  // Last-page lengths of 1 fit any page size.
  EXPECT_EQ(input_named(*plan, "kv_last_page_len").fill, InputFill::lengths);
}

TEST(SmokeSemantics, PlusOneAxesWithoutAConstraintAreSolvedFromTheirName) {
  const auto plan = plan_smoke_run(definition_of(R"JSON({
    "name": "rope", "op_type": "rope",
    "axes": {"nnz": {"type": "var"}, "batch_size": {"type": "var"},
             "batch_size_plus_1": {"type": "var"},
             "num_heads": {"type": "const", "value": 2}, "head_dim": {"type": "const", "value": 16}},
    "inputs": {"q": {"shape": ["nnz", "num_heads", "head_dim"], "dtype": "float32"},
               "indptr": {"shape": ["batch_size_plus_1"], "dtype": "int32"},
               "offsets": {"shape": ["batch_size"], "dtype": "int32"},
               "rotary_dim": {"shape": null, "dtype": "int32"},
               "rope_theta": {"shape": null, "dtype": "float32"},
               "rope_scale": {"shape": null, "dtype": "float32"}},
    "constraints": ["nnz >= 8"],
    "outputs": {"q_out": {"shape": ["nnz", "num_heads", "head_dim"], "dtype": "float32"}},
    "reference": "def run(q, indptr, offsets, rotary_dim, rope_theta, rope_scale):\n    return q\n"})JSON"));
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  EXPECT_EQ(plan->axes.at("batch_size_plus_1"), plan->axes.at("batch_size") + 1);
  // A bare `indptr` spans the token axis of q (8 tokens over 4 sequences).
  EXPECT_EQ(plan->axes.at("nnz"), 8);
  EXPECT_EQ(input_named(*plan, "indptr").total, 8);
  EXPECT_EQ(input_named(*plan, "offsets").fill, InputFill::zeros);
  // rotary_dim: the whole head, not 1; theta and scale as RoPE uses them.
  EXPECT_EQ(input_named(*plan, "rotary_dim").scalar_value, 16);
  EXPECT_EQ(input_named(*plan, "rope_theta").scalar_value, 10000.0);
  EXPECT_EQ(input_named(*plan, "rope_scale").scalar_value, 1.0);
}

TEST(SmokeSemantics, RaggedPointersSpanQueriesAndKeys) {
  const auto plan = plan_smoke_run(definition_of(R"JSON({
    "name": "ragged", "op_type": "gqa_ragged",
    "axes": {"len_indptr": {"type": "var"}, "total_q": {"type": "var"}, "total_kv": {"type": "var"},
             "h": {"type": "const", "value": 2}, "d": {"type": "const", "value": 8}},
    "inputs": {"q": {"shape": ["total_q", "h", "d"], "dtype": "bfloat16"},
               "k": {"shape": ["total_kv", "h", "d"], "dtype": "bfloat16"},
               "qo_indptr": {"shape": ["len_indptr"], "dtype": "int32"},
               "kv_indptr": {"shape": ["len_indptr"], "dtype": "int32"}},
    "outputs": {"o": {"shape": ["total_q", "h", "d"], "dtype": "bfloat16"}},
    "reference": "def run(q, k, qo_indptr, kv_indptr):\n    return q\n"})JSON"));
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  EXPECT_EQ(input_named(*plan, "qo_indptr").total, plan->axes.at("total_q"));
  EXPECT_EQ(input_named(*plan, "kv_indptr").total, plan->axes.at("total_kv"));
}

TEST(SmokeSemantics, AnAxisTimesOrPlusAConstantIsSolved) {
  const auto plan = plan_smoke_run(definition_of(R"JSON({
    "name": "packed", "op_type": "quant",
    "axes": {"n": {"type": "var"}, "packed": {"type": "var"}, "groups": {"type": "var"},
             "d": {"type": "const", "value": 64}},
    "constraints": ["packed * 2 == d", "groups + 1 == n"],
    "inputs": {"x": {"shape": ["n", "d"], "dtype": "float32"},
               "p": {"shape": ["n", "packed"], "dtype": "int8"},
               "g": {"shape": ["groups"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["n", "d"], "dtype": "float32"}},
    "reference": "def run(x, p, g):\n    return x\n"})JSON"));
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  EXPECT_EQ(plan->axes.at("packed"), 32);
  EXPECT_EQ(plan->axes.at("groups"), plan->axes.at("n") - 1);
}

TEST(SmokeSemantics, AConstantTheAxisCannotReachIsASkipNotAGuess) {
  const auto plan = plan_smoke_run(definition_of(R"JSON({
    "name": "odd", "op_type": "quant",
    "axes": {"packed": {"type": "var"}, "d": {"type": "const", "value": 63}},
    "constraints": ["packed * 2 == d"],
    "inputs": {"p": {"shape": ["packed"], "dtype": "int8"}},
    "outputs": {"y": {"shape": ["packed"], "dtype": "int8"}},
    "reference": "def run(p):\n    return p\n"})JSON"));
  ASSERT_FALSE(plan.has_value());
  EXPECT_NE(plan.error().message.find("'packed * 2 == d'"), std::string::npos)
      << plan.error().message;
}

TEST(SmokeSemantics, ScalarsTakeSensibleValues) {
  const auto plan = plan_smoke_run(definition_of(R"JSON({
    "name": "gemm_fp4_N64_K64_block_size16", "op_type": "gemm",
    "axes": {"M": {"type": "var"}, "K": {"type": "const", "value": 64},
             "num_experts": {"type": "const", "value": 8},
             "max_seq_len": {"type": "var"}, "nnz": {"type": "var"}},
    "inputs": {"a": {"shape": ["M", "K"], "dtype": "float32"},
               "block_size": {"shape": null, "dtype": "int32"},
               "local_expert_offset": {"shape": null, "dtype": "int32"},
               "expert_ids": {"shape": ["M"], "dtype": "int32"},
               "pos_ids": {"shape": ["nnz"], "dtype": "int32"},
               "cos_sin_cache": {"shape": ["max_seq_len", "K"], "dtype": "float32"},
               "eps": {"shape": null, "dtype": "float32"},
               "sm_scale": {"shape": null, "dtype": "float32"}},
    "outputs": {"y": {"shape": ["M", "K"], "dtype": "float32"}},
    "reference": "def run(a, block_size, local_expert_offset, expert_ids, pos_ids, cos_sin_cache, eps, sm_scale):\n    return a\n"})JSON"));
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  // The definition's name says block_size16.
  EXPECT_EQ(input_named(*plan, "block_size").scalar_value, 16);
  EXPECT_EQ(input_named(*plan, "local_expert_offset").scalar_value, 0);
  EXPECT_EQ(input_named(*plan, "expert_ids").bound, 8);
  EXPECT_EQ(input_named(*plan, "pos_ids").bound, plan->axes.at("max_seq_len"));
  EXPECT_EQ(input_named(*plan, "eps").scalar_value, 1e-6);
  EXPECT_EQ(input_named(*plan, "sm_scale").scalar_value, 1.0);
}

} // namespace
} // namespace fib
