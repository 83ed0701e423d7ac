// The smoke planner: axis values that honour both kinds of constraints, input fills, byte
// estimates and the request round trip. No worker needed.

#include "smoke_fixture.hpp"
#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/smoke.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/model/definition.hpp>

#include <gtest/gtest.h>

namespace fib {
namespace {

using testing::definition_of;
using testing::input_named;

constexpr const char* k_paged = R"JSON({
  "name": "gqa_paged_decode", "op_type": "gqa_paged",
  "axes": {"batch_size": {"type": "var"}, "len_indptr": {"type": "var"},
           "num_kv_indices": {"type": "var"}, "num_pages": {"type": "var"},
           "page_size": {"type": "const", "value": 16}, "num_heads": {"type": "const", "value": 8},
           "head_dim": {"type": "const", "value": 64}},
  "constraints": ["len_indptr == batch_size + 1", "num_kv_indices == kv_indptr[-1].item()"],
  "inputs": {"q": {"shape": ["batch_size", "num_heads", "head_dim"], "dtype": "bfloat16"},
             "k_cache": {"shape": ["num_pages", "page_size", "num_heads", "head_dim"], "dtype": "bfloat16"},
             "kv_indptr": {"shape": ["len_indptr"], "dtype": "int32"},
             "kv_indices": {"shape": ["num_kv_indices"], "dtype": "int32"},
             "kv_last_page_len": {"shape": ["batch_size"], "dtype": "int32"},
             "sm_scale": {"shape": null, "dtype": "float32"}},
  "outputs": {"out": {"shape": ["batch_size", "num_heads", "head_dim"], "dtype": "bfloat16"}},
  "reference": "def run(q, k_cache, kv_indptr, kv_indices, kv_last_page_len, sm_scale):\n    return q\n"
})JSON";

TEST(SmokePlan, EqualitiesSetAxesAndDataConstraintsFillIndexPointers) {
  const auto plan = plan_smoke_run(definition_of(k_paged));
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  EXPECT_EQ(plan->axes.at("batch_size"), k_smoke_base_axis_value);
  EXPECT_EQ(plan->axes.at("len_indptr"), k_smoke_base_axis_value + 1);
  EXPECT_EQ(plan->axes.at("page_size"), 16);
  const auto& indptr = input_named(*plan, "kv_indptr");
  EXPECT_EQ(indptr.fill, InputFill::index_pointer);
  EXPECT_EQ(indptr.shape, std::vector<std::int64_t>{5});
  EXPECT_EQ(indptr.total, plan->axes.at("num_kv_indices"));
  const auto& indices = input_named(*plan, "kv_indices");
  EXPECT_EQ(indices.fill, InputFill::indices);
  EXPECT_EQ(indices.bound, plan->axes.at("num_pages"));
  EXPECT_EQ(input_named(*plan, "kv_last_page_len").fill, InputFill::lengths);
  EXPECT_EQ(input_named(*plan, "q").fill, InputFill::random_normal);
  const auto& scale = input_named(*plan, "sm_scale");
  EXPECT_TRUE(scale.scalar);
  EXPECT_EQ(scale.fill, InputFill::scalar);
  EXPECT_TRUE(plan->unchecked_constraints.empty());
  // q: 4*8*64*2, k_cache: 4*16*8*64*2, kv_indptr 5*4, kv_indices 4*4, lengths 4*4.
  EXPECT_EQ(plan->input_bytes, 4096u + 65536u + 20u + 16u + 16u);
  EXPECT_EQ(plan->output_bytes, 4096u);
}

TEST(SmokePlan, FailingInequalitiesAreRepairedByGrowingTheirAxes) {
  const auto plan = plan_smoke_run(definition_of(R"JSON({
    "name": "topk", "op_type": "x",
    "axes": {"max_num_pages": {"type": "var"}, "page_size": {"type": "const", "value": 64},
             "topk": {"type": "const", "value": 2048}, "seq_len": {"type": "var"}},
    "constraints": ["topk <= max_num_pages * page_size", "seq_len > 5"],
    "inputs": {"x": {"shape": ["max_num_pages", "seq_len"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["max_num_pages"], "dtype": "float32"}},
    "reference": "def run(x):\n    return x\n"})JSON"));
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  EXPECT_GE(plan->axes.at("max_num_pages") * 64, 2048);
  EXPECT_EQ(plan->axes.at("max_num_pages"), 32); // 4 doubled three times
  EXPECT_EQ(plan->axes.at("seq_len"), 8);
}

TEST(SmokePlan, UnsatisfiableConstraintsAreASkipNamingThem) {
  const auto plan = plan_smoke_run(definition_of(R"JSON({
    "name": "never", "op_type": "x",
    "axes": {"n": {"type": "var"}, "c": {"type": "const", "value": 3}},
    "constraints": ["c > n * 0 + 5"],
    "inputs": {"x": {"shape": ["n"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
    "reference": "def run(x):\n    return x\n"})JSON"));
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().code, codes::k_smoke_skipped);
  EXPECT_NE(plan.error().message.find("'c > n * 0 + 5'"), std::string::npos)
      << plan.error().message;
}

TEST(SmokePlan, ProbabilitiesBooleansAndOutputOnlyAxes) {
  const auto plan = plan_smoke_run(definition_of(R"JSON({
    "name": "sample", "op_type": "sampling",
    "axes": {"batch": {"type": "var"}, "vocab": {"type": "const", "value": 10},
             "k_out": {"type": "var"}},
    "inputs": {"probs": {"shape": ["batch", "vocab"], "dtype": "float32"},
               "mask": {"shape": ["batch"], "dtype": "bool"},
               "top_k": {"shape": null, "dtype": "int32"},
               "deterministic": {"shape": null, "dtype": "bool"}},
    "outputs": {"samples": {"shape": ["batch", "k_out"], "dtype": "int64"}},
    "reference": "def run(probs, mask, top_k, deterministic):\n    return probs\n"})JSON"));
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  EXPECT_EQ(input_named(*plan, "probs").fill, InputFill::probabilities);
  EXPECT_EQ(input_named(*plan, "mask").fill, InputFill::random_bool);
  EXPECT_EQ(input_named(*plan, "top_k").scalar_value, 1);
  EXPECT_EQ(input_named(*plan, "deterministic").scalar_value, 0);
  ASSERT_EQ(plan->outputs.size(), 1u);
  ASSERT_EQ(plan->outputs[0].shape.size(), 2u);
  EXPECT_EQ(plan->outputs[0].shape[0], std::optional<std::int64_t>(4));
  EXPECT_EQ(plan->outputs[0].shape[1], std::nullopt); // no input binds k_out
  EXPECT_EQ(plan->output_bytes, 0u);                  // unknown until the run
}

TEST(SmokePlan, RoundTripsThroughTheRequestJson) {
  const auto plan = plan_smoke_run(definition_of(k_paged));
  ASSERT_TRUE(plan.has_value());
  const auto back = smoke_plan_from_json(to_json(*plan));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(to_json(*back), to_json(*plan));
  Json broken = to_json(*plan);
  broken["inputs"][0]["fill"] = "lava";
  const auto rejected = smoke_plan_from_json(broken);
  ASSERT_FALSE(rejected.has_value());
  EXPECT_EQ(rejected.error().code, codes::k_worker_protocol);
  const auto missing = smoke_plan_from_json(Json::object());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, codes::k_worker_protocol);
}

} // namespace
} // namespace fib

namespace fib {
namespace {

Workload workload_of(const std::string& json) {
  DiagnosticList sink;
  const auto document = testing::parse_or_die(json);
  Workload w = parse_workload(document, document.root, "", sink);
  EXPECT_FALSE(sink.has_errors()) << testing::describe(sink);
  return w;
}

TEST(WorkloadPlan, UsesTheWorkloadsAxesScalarsAndBlobs) {
  const auto definition = definition_of(k_paged);
  const auto plan = plan_workload_run(definition, workload_of(R"JSON({"uuid": "u1",
        "axes": {"batch_size": 3, "len_indptr": 4, "num_kv_indices": 9, "num_pages": 12},
        "inputs": {"q": {"type": "random"}, "k_cache": {"type": "random"},
                   "kv_indptr": {"type": "safetensors", "path": "blob/a.safetensors",
                                 "tensor_key": "kv_indptr"},
                   "kv_indices": {"type": "random"}, "kv_last_page_len": {"type": "random"},
                   "sm_scale": {"type": "scalar", "value": 0.125}}})JSON"),
                                      "/data/ds");
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  EXPECT_EQ(plan->axes.at("batch_size"), 3);
  EXPECT_EQ(plan->axes.at("page_size"), 16);
  EXPECT_EQ(input_named(*plan, "q").shape, (std::vector<std::int64_t>{3, 8, 64}));
  const auto& blob = input_named(*plan, "kv_indptr");
  EXPECT_EQ(blob.fill, InputFill::safetensors);
  EXPECT_EQ(blob.file, "/data/ds/blob/a.safetensors");
  EXPECT_EQ(blob.key, "kv_indptr");
  EXPECT_EQ(input_named(*plan, "kv_indices").bound, 12);
  EXPECT_EQ(input_named(*plan, "sm_scale").scalar_value, 0.125);
  const auto back = smoke_plan_from_json(to_json(*plan));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(input_named(*back, "kv_indptr").file, "/data/ds/blob/a.safetensors");
}

TEST(WorkloadPlan, AMissingVarAxisIsAnError) {
  const auto plan = plan_workload_run(definition_of(k_paged),
                                      workload_of(R"JSON({"uuid": "u2", "axes": {"batch_size": 3},
        "inputs": {"q": {"type": "random"}, "k_cache": {"type": "random"},
                   "kv_indptr": {"type": "random"}, "kv_indices": {"type": "random"},
                   "kv_last_page_len": {"type": "random"}, "sm_scale": {"type": "scalar", "value": 1}}})JSON"),
                                      "/data/ds");
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().code, codes::k_shape_missing_axes);
  EXPECT_NE(plan.error().message.find("len_indptr, num_kv_indices, num_pages"), std::string::npos)
      << plan.error().message;
}

// Every fill and device has a protocol name, and the name parses back to it.
TEST(SmokePlan, FillsAndDevicesHaveOneNameEach) {
  for (const auto fill :
       {InputFill::random_normal, InputFill::probabilities, InputFill::random_bool,
        InputFill::index_pointer, InputFill::indices, InputFill::lengths, InputFill::zeros,
        InputFill::scalar, InputFill::safetensors}) {
    ASSERT_FALSE(to_string(fill).empty());
    EXPECT_EQ(parse_enum<InputFill>(to_string(fill)), fill);
  }
  EXPECT_EQ(to_string(InputFill::index_pointer), "index_pointer");
  EXPECT_FALSE(parse_enum<InputFill>("Zeros").has_value());
  EXPECT_EQ(to_string(SmokeDevice::cpu), "cpu");
  EXPECT_EQ(to_string(SmokeDevice::cuda), "cuda");
}

} // namespace
} // namespace fib
