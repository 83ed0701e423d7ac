// Which dumped calls belong to a definition's fi_api, and which plan set up a run: the old
// tools' misses (the method form of the tag, pairing by process only, bare `run` of any class).
#include <fib/collect/api_target.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fib {
namespace {

DumpedCall call(std::string name, std::string function, std::int64_t pid,
                std::optional<std::string> self_id = std::nullopt) {
  DumpedCall c;
  c.name = std::move(name);
  c.function_name = std::move(function);
  c.process_id = pid;
  c.self_id = std::move(self_id);
  return c;
}

DumpedCall plain_method(std::string name, std::string method, std::string type, std::string repr) {
  DumpedCall c = call(std::move(name), std::move(method), 4242);
  c.input_metadata = {{"arg_0", {{"type", std::move(type)}, {"repr", std::move(repr)}}}};
  return c;
}

ApiTarget target(std::string_view value) {
  auto parsed = parse_fi_api(value);
  EXPECT_TRUE(parsed.has_value()) << value;
  return parsed.value_or(ApiTarget{});
}

TEST(ApiTarget, IncludePatternsDumpEveryCallAWorkloadNeeds) {
  const std::vector<std::string> patterns = dump_include_patterns(
      {target("flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper.run"),
       target("flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper"), // the same, other form
       target("flashinfer.norm.rmsnorm"), target("flashinfer.attention.BatchAttention")});
  EXPECT_EQ(patterns, (std::vector<std::string>{"*BatchDecodeWithPagedKVCacheWrapper.plan",
                                                "*BatchDecodeWithPagedKVCacheWrapper.run", "plan",
                                                "rmsnorm", "run"}));
  EXPECT_TRUE(dump_include_patterns({}).empty());
  // The tags of a definition, in either form, give its targets; other tags are not APIs.
  EXPECT_EQ(api_targets_of({"status:verified", "fi_api:flashinfer.norm.rmsnorm", "fi_api:"}).size(),
            1u);
}

TEST(ApiTarget, BothTagFormsOfAWrapperNameTheSameClass) {
  for (const char* value : {"flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper",
                            "flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper.run"}) {
    const ApiTarget t = target(value);
    EXPECT_EQ(t.kind, ApiKind::wrapper_class) << value;
    EXPECT_EQ(t.class_name, "BatchDecodeWithPagedKVCacheWrapper") << value;
    EXPECT_EQ(t.dotted, value);
  }
  const ApiTarget function = target("flashinfer.norm.rmsnorm");
  EXPECT_EQ(function.kind, ApiKind::function);
  EXPECT_EQ(function.function, "rmsnorm");
  const ApiTarget plain = target("flashinfer.attention.BatchAttention.run");
  EXPECT_EQ(plain.kind, ApiKind::plain_class);
  EXPECT_EQ(plain.class_name, "BatchAttention");
  for (const char* bad : {"", "flashinfer..norm", "flashinfer.norm.", "1x", "a-b", "a b"}) {
    EXPECT_FALSE(parse_fi_api(bad).has_value()) << bad;
  }
}

TEST(ApiTarget, RunsOfTheWrapperAndItsSubclassesAreWorkloadCallsAndPlansAreNot) {
  const ApiTarget decode = target("flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper.run");
  EXPECT_TRUE(is_workload_call(decode, call("a", "BatchDecodeWithPagedKVCacheWrapper.run", 1)));
  EXPECT_TRUE(
      is_workload_call(decode, call("a", "CUDAGraphBatchDecodeWithPagedKVCacheWrapper.run", 1)));
  EXPECT_FALSE(is_workload_call(decode, call("a", "BatchDecodeWithPagedKVCacheWrapper.plan", 1)));
  EXPECT_FALSE(is_workload_call(decode, call("a", "BatchPrefillWithPagedKVCacheWrapper.run", 1)));
  EXPECT_FALSE(is_workload_call(decode, call("a", "run", 1)));
  const ApiTarget rmsnorm = target("flashinfer.norm.rmsnorm");
  EXPECT_TRUE(is_workload_call(rmsnorm, call("a", "rmsnorm", 1)));
  EXPECT_FALSE(is_workload_call(rmsnorm, call("a", "fused_add_rmsnorm", 1)));
}

TEST(ApiTarget, ABareRunBelongsOnlyToTheClassOfItsSelf) {
  const DumpedCall run = plain_method("r", "run", "BatchAttention",
                                      "<flashinfer.attention.BatchAttention object at 0x7f01>");
  EXPECT_TRUE(is_workload_call(target("flashinfer.attention.BatchAttention"), run));
  EXPECT_FALSE(
      is_workload_call(target("flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper"), run));
  EXPECT_FALSE(is_workload_call(target("flashinfer.other.OtherThing"), run));
}

TEST(ApiTarget, ARunIsPairedWithTheLastPlanOfItsOwnWrapperInItsOwnProcess) {
  const ApiTarget decode = target("flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper");
  const std::string d = "BatchDecodeWithPagedKVCacheWrapper";
  const std::vector<DumpedCall> calls = {
      call("20260101_120000_050_pid4242_" + d + ".plan_call0001", d + ".plan", 4242, "1"),
      call("20260101_120000_100_pid4242_" + d + ".plan_call0002", d + ".plan", 4242, "1"),
      // Another wrapper of the same process planned in between (F3): not this run's plan.
      call("20260101_120000_103_pid4242_BatchPrefillWithPagedKVCacheWrapper.plan_call0001",
           "BatchPrefillWithPagedKVCacheWrapper.plan", 4242, "2"),
      // Another decode wrapper object of the same process, and the same object in another rank.
      call("20260101_120000_104_pid4242_" + d + ".plan_call0003", d + ".plan", 4242, "3"),
      call("20260101_120000_104_pid4243_" + d + ".plan_call0001", d + ".plan", 4243, "1"),
      call("20260101_120000_105_pid4242_" + d + ".run_call0001", d + ".run", 4242, "1"),
      // A plan after the run sets up the next run, not this one.
      call("20260101_120000_200_pid4242_" + d + ".plan_call0004", d + ".plan", 4242, "1"),
  };
  const DumpedCall* plan = paired_plan(decode, calls, calls[5]);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->name, calls[1].name);

  const DumpedCall orphan =
      call("20260101_120000_001_pid4242_" + d + ".run_call0000", d + ".run", 4242, "1");
  EXPECT_EQ(paired_plan(decode, calls, orphan), nullptr); // before any plan (F2c)
  const DumpedCall no_self =
      call("20260101_120000_300_pid4242_" + d + ".run_call0009", d + ".run", 4242);
  EXPECT_EQ(paired_plan(decode, calls, no_self), nullptr);
  EXPECT_EQ(paired_plan(target("flashinfer.norm.rmsnorm"), calls, calls[5]), nullptr);
}

TEST(ApiTarget, APlainClassRunIsPairedByTheAddressInItsSelf) {
  const ApiTarget attention = target("flashinfer.attention.BatchAttention");
  const std::vector<DumpedCall> calls = {
      plain_method("a1", "plan", "BatchAttention", "<BatchAttention object at 0x7f01>"),
      plain_method("a2", "plan", "BatchAttention", "<BatchAttention object at 0x7f02>"),
      plain_method("a3", "run", "BatchAttention", "<BatchAttention object at 0x7f01>"),
  };
  const DumpedCall* plan = paired_plan(attention, calls, calls[2]);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->name, "a1");
}

TEST(ApiTarget, IncludePatternsCoverRunsPlansAndSubclasses) {
  const std::vector<ApiTarget> targets = {
      target("flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper.run"),
      target("flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper"),
      target("flashinfer.norm.rmsnorm"), target("flashinfer.attention.BatchAttention")};
  EXPECT_EQ(dump_include_patterns(targets),
            (std::vector<std::string>{"*BatchDecodeWithPagedKVCacheWrapper.plan",
                                      "*BatchDecodeWithPagedKVCacheWrapper.run", "plan", "rmsnorm",
                                      "run"}));
}

} // namespace
} // namespace fib
