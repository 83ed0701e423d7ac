// Finding a dumped call's arguments by name, by position in its recorded signature, and as
// members of tuples: what the old tools missed (tuple caches were invisible to them).
#include <fib/collect/arguments.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fib {
namespace {

std::vector<std::string> names(const std::vector<SignatureParameter>& parameters) {
  std::vector<std::string> out;
  for (const SignatureParameter& p : parameters) {
    out.push_back(p.name);
  }
  return out;
}

constexpr std::string_view k_plan_signature =
    "(self, indptr: torch.Tensor, indices: torch.Tensor, last_page_len: torch.Tensor, "
    "num_qo_heads: int, num_kv_heads: int, head_dim: int, page_size: int, "
    "*deprecated_positional_args: Any, **kwargs: Any) -> None";

constexpr std::string_view k_run_signature =
    "(self, q: torch.Tensor, paged_kv_cache: Union[torch.Tensor, Tuple[torch.Tensor, "
    "torch.Tensor]], *args, q_scale: Optional[float] = None, kv_layout: str = 'N,HD', "
    "window: Tuple[int, int] = (-1, -1)) -> torch.Tensor";

TEST(FunctionSignature, ParametersAreSplitAtTopLevelCommasWithTheirKinds) {
  auto plan = parse_function_signature(k_plan_signature);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(names(*plan),
            (std::vector<std::string>{"self", "indptr", "indices", "last_page_len", "num_qo_heads",
                                      "num_kv_heads", "head_dim", "page_size",
                                      "deprecated_positional_args", "kwargs"}));
  EXPECT_EQ((*plan)[7].kind, SignatureParameterKind::positional);
  EXPECT_EQ((*plan)[8].kind, SignatureParameterKind::var_positional);
  EXPECT_EQ((*plan)[9].kind, SignatureParameterKind::var_keyword);

  auto run = parse_function_signature(k_run_signature);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(names(*run), (std::vector<std::string>{"self", "q", "paged_kv_cache", "args", "q_scale",
                                                   "kv_layout", "window"}));
  EXPECT_EQ((*run)[4].kind, SignatureParameterKind::keyword_only);

  auto marked = parse_function_signature("(a, /, b, *, c=1)");
  ASSERT_TRUE(marked.has_value());
  EXPECT_EQ(names(*marked), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ((*marked)[1].kind, SignatureParameterKind::positional);
  EXPECT_EQ((*marked)[2].kind, SignatureParameterKind::keyword_only);

  EXPECT_EQ(parse_function_signature("() -> None").value().size(), 0u);
  for (const char* bad : {"", "x", "(a, b", "(a b)", "(1a)", "(a: List[int)", "(a='x)", "(a) x"}) {
    EXPECT_FALSE(parse_function_signature(bad).has_value()) << bad;
  }
}

TEST(ArgumentRef, ANameOrATupleMember) {
  const auto q = parse_argument_ref("q");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->parameter, "q");
  EXPECT_FALSE(q->member.has_value());
  const auto v = parse_argument_ref("paged_kv_cache[1]");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->parameter, "paged_kv_cache");
  EXPECT_EQ(v->member, 1);
  for (const char* bad : {"", "a[", "a[x]", "[0]", "a[1000]", "a[0]b", "a.b", "a[-1]"}) {
    EXPECT_FALSE(parse_argument_ref(bad).has_value()) << bad;
  }
}

DumpedCall decode_run() {
  DumpedCall call;
  call.function_name = "BatchDecodeWithPagedKVCacheWrapper.run";
  call.input_tensor_keys = {"arg_1", "arg_2__0", "arg_2__1"};
  call.input_metadata = {
      {"arg_0", {{"type", "BatchDecodeWithPagedKVCacheWrapper"}, {"repr", "<… at 0x7f01>"}}},
      {"arg_2",
       {{"type", "tuple"},
        {"length", 2},
        {"items",
         {{{"type", "torch.Tensor"}, {"tensor_key", "arg_2__0"}},
          {{"type", "torch.Tensor"}, {"tensor_key", "arg_2__1"}}}}}},
      {"kwarg_q_scale", nullptr},
      {"kwarg_window", {{"type", "tuple"}, {"length", 2}, {"items", {-1, 7}}}},
  };
  return call;
}

TEST(FindArgument, TensorsByPositionTupleMembersAndKeywordValues) {
  const DumpedCall call = decode_run();
  const auto signature = parse_function_signature(k_run_signature).value();
  const auto find = [&](std::string_view ref) {
    return find_argument(call, signature, parse_argument_ref(ref).value());
  };
  const auto q = find("q");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->place, ArgumentPlace::tensor);
  EXPECT_EQ(q->key, "arg_1");
  const auto v_cache = find("paged_kv_cache[1]");
  ASSERT_TRUE(v_cache.has_value());
  EXPECT_EQ(v_cache->place, ArgumentPlace::tensor);
  EXPECT_EQ(v_cache->key, "arg_2__1");
  const auto q_scale = find("q_scale");
  ASSERT_TRUE(q_scale.has_value());
  EXPECT_EQ(q_scale->place, ArgumentPlace::metadata);
  ASSERT_NE(q_scale->value, nullptr);
  EXPECT_TRUE(q_scale->value->is_null());
  const auto right = find("window[1]");
  ASSERT_TRUE(right.has_value());
  ASSERT_NE(right->value, nullptr);
  EXPECT_EQ(right->value->get<int>(), 7);
  EXPECT_FALSE(find("window[2]").has_value());
  EXPECT_FALSE(find("paged_kv_cache[2]").has_value());
  EXPECT_FALSE(find("kv_layout").has_value()); // not passed: its default applied
  EXPECT_FALSE(find("sm_scale").has_value());
}

TEST(FindArgument, AKeywordWinsAndPositionsCountSelf) {
  DumpedCall plan;
  plan.input_tensor_keys = {"arg_1", "arg_2", "arg_3"};
  plan.input_metadata = {{"arg_4", 4}, {"arg_5", 2}, {"kwarg_head_dim", 16}, {"arg_6", 99}};
  const auto signature = parse_function_signature(k_plan_signature).value();
  const auto find = [&](std::string_view ref) {
    return find_argument(plan, signature, parse_argument_ref(ref).value());
  };
  EXPECT_EQ(find("indptr")->key, "arg_1");
  EXPECT_EQ(find("num_qo_heads")->value->get<int>(), 4);
  EXPECT_EQ(find("head_dim")->key, "kwarg_head_dim");
  EXPECT_EQ(find("head_dim")->value->get<int>(), 16);
  // Without a signature only keywords are found.
  EXPECT_FALSE(find_argument(plan, {}, parse_argument_ref("indptr").value()).has_value());
}

} // namespace
} // namespace fib
