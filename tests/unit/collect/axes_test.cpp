// Axes of a workload from one call's bound tensors: var axes read off, const axes and every
// repeated occurrence checked (the old tools skipped the check for plan-paired runs, so every
// definition sharing an fi_api took every call).
#include <fib/base/codes.hpp>
#include <fib/collect/axes.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

Axis var() {
  return Axis{AxisKind::var_axis, 0, std::nullopt};
}
Axis fixed(std::int64_t value) {
  return Axis{AxisKind::const_axis, value, std::nullopt};
}
TensorSpec tensor(std::vector<std::string> shape) {
  return TensorSpec{std::move(shape), DType::int32, std::nullopt};
}

// gqa_paged_decode_h4_kv2_d16_ps1, as in the fixtures of the spec (F2).
Definition decode_h4_kv2() {
  Definition d;
  d.name = "gqa_paged_decode_h4_kv2_d16_ps1";
  d.axes = {{"batch_size", var()},   {"num_qo_heads", fixed(4)}, {"num_kv_heads", fixed(2)},
            {"head_dim", fixed(16)}, {"num_pages", var()},       {"page_size", fixed(1)},
            {"len_indptr", var()},   {"num_kv_indices", var()}};
  d.inputs = {{"q", tensor({"batch_size", "num_qo_heads", "head_dim"})},
              {"k_cache", tensor({"num_pages", "page_size", "num_kv_heads", "head_dim"})},
              {"v_cache", tensor({"num_pages", "page_size", "num_kv_heads", "head_dim"})},
              {"kv_indptr", tensor({"len_indptr"})},
              {"kv_indices", tensor({"num_kv_indices"})},
              {"kv_last_page_len", tensor({"batch_size"})},
              {"sm_scale", TensorSpec{std::nullopt, DType::float32, std::nullopt}}};
  return d;
}

std::vector<BoundShape> rank0_shapes(std::int64_t q_heads, std::int64_t kv_heads) {
  return {{"q", {2, q_heads, 16}},
          {"k_cache", {12, 1, kv_heads, 16}},
          {"v_cache", {12, 1, kv_heads, 16}},
          {"kv_indptr", {3}},
          {"kv_indices", {5}},
          {"kv_last_page_len", {2}}};
}

TEST(InferAxes, VarAxesComeFromTheBoundShapesAndNumPagesIsThePoolSize) {
  auto axes = infer_axes(decode_h4_kv2(), rank0_shapes(4, 2));
  ASSERT_TRUE(axes.has_value()) << axes.error().message;
  EXPECT_EQ(*axes,
            (std::map<std::string, std::int64_t>{
                {"batch_size", 2}, {"len_indptr", 3}, {"num_kv_indices", 5}, {"num_pages", 12}}));
}

TEST(InferAxes, AnotherTpRanksHeadCountsAreAConstMismatch) {
  // F4: the TP=2 rank sees 2 query heads and 1 KV head; h4_kv2 must not take it.
  auto axes = infer_axes(decode_h4_kv2(), rank0_shapes(2, 1));
  ASSERT_FALSE(axes.has_value());
  EXPECT_EQ(axes.error().code, codes::k_collect_axis_mismatch);
  EXPECT_EQ(axes.error().pointer, "/axes/num_qo_heads");
  EXPECT_NE(axes.error().message.find("4 in the definition, 2 in the call"), std::string::npos)
      << axes.error().message;
}

TEST(InferAxes, DisagreeingOccurrencesOfAVarAxisRefuseTheCall) {
  auto shapes = rank0_shapes(4, 2);
  shapes[5].shape = {3}; // kv_last_page_len padded to len(qo_indptr), as the old tool does
  auto axes = infer_axes(decode_h4_kv2(), shapes);
  ASSERT_FALSE(axes.has_value());
  EXPECT_EQ(axes.error().code, codes::k_collect_axis_mismatch);
  EXPECT_EQ(axes.error().pointer, "/axes/batch_size");
}

TEST(InferAxes, AWrongRankAndAnUnboundVarAxisAreReported) {
  auto shapes = rank0_shapes(4, 2);
  shapes[0].shape = {2, 64};
  auto rank = infer_axes(decode_h4_kv2(), shapes);
  ASSERT_FALSE(rank.has_value());
  EXPECT_EQ(rank.error().code, codes::k_collect_axis_mismatch);
  EXPECT_EQ(rank.error().pointer, "/inputs/q/shape");

  shapes = rank0_shapes(4, 2);
  shapes.erase(shapes.begin() + 4); // kv_indices not found in the call
  auto unbound = infer_axes(decode_h4_kv2(), shapes);
  ASSERT_FALSE(unbound.has_value());
  EXPECT_EQ(unbound.error().code, codes::k_collect_axis_unbound);
  EXPECT_EQ(unbound.error().pointer, "/axes/num_kv_indices");
}

} // namespace
} // namespace fib
