#include <fib/constraint/constraint.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fib {
namespace {

// Builds environments tersely: Env().axis("M", 4).tensor("x", {{4}}).
class Env {
public:
  Env& axis(const std::string& name, std::int64_t value) {
    m_environment.axes[name] = value;
    return *this;
  }
  Env& scalar(const std::string& name, ScalarFact value) {
    m_environment.scalars[name] = std::move(value);
    return *this;
  }
  Env& tensor(const std::string& name, TensorFacts facts) {
    m_environment.tensors[name] = std::move(facts);
    return *this;
  }
  Env& absent(const std::string& name) {
    m_environment.absent.insert(name);
    return *this;
  }
  operator const ConstraintEnvironment&() const { return m_environment; }

private:
  ConstraintEnvironment m_environment;
};

TensorFacts shape_only(std::vector<std::int64_t> shape) {
  return TensorFacts{std::move(shape), std::nullopt, true};
}

TensorFacts with_data(std::vector<std::int64_t> shape, std::vector<double> values) {
  return TensorFacts{std::move(shape), std::move(values), true};
}

::testing::AssertionResult has_outcome(ConstraintOutcome expected, std::string_view expression,
                                       const ConstraintEnvironment& environment) {
  const ConstraintResult result = evaluate_constraint(expression, environment);
  if (result.outcome == expected) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "'" << expression << "' is " << to_string(result.outcome) << " (" << result.detail
         << "), expected " << to_string(expected);
}

::testing::AssertionResult satisfied(std::string_view expression,
                                     const ConstraintEnvironment& environment = Env()) {
  return has_outcome(ConstraintOutcome::satisfied, expression, environment);
}

::testing::AssertionResult violated(std::string_view expression,
                                    const ConstraintEnvironment& environment = Env()) {
  return has_outcome(ConstraintOutcome::violated, expression, environment);
}

// "<violated: …>" for a result of the wrong kind, so that a failing EXPECT_EQ shows it.
std::string unexpected_outcome(const ConstraintResult& result) {
  std::string text = "<";
  text += to_string(result.outcome);
  text += ": ";
  text += result.detail;
  text += ">";
  return text;
}

// The detail of a not_evaluable result (or a marker saying it was something else).
std::string not_evaluable_detail(std::string_view expression,
                                 const ConstraintEnvironment& environment = Env()) {
  const ConstraintResult result = evaluate_constraint(expression, environment);
  if (result.outcome != ConstraintOutcome::not_evaluable) {
    return unexpected_outcome(result);
  }
  return result.detail;
}

std::string violation_detail(std::string_view expression,
                             const ConstraintEnvironment& environment) {
  const ConstraintResult result = evaluate_constraint(expression, environment);
  if (result.outcome != ConstraintOutcome::violated) {
    return unexpected_outcome(result);
  }
  return result.detail;
}

// --- Parsed once, evaluated many times ---

TEST(CompiledConstraint, GivesWhatEvaluateConstraintGivesOnEveryEnvironment) {
  const std::vector<std::string> expressions = {
      "num_qo_heads % num_kv_heads == 0",
      "kv_indptr.shape[0] == batch_size + 1",
      "total_q == qo_indptr[-1].item()",
      "len_indptr == (",       // no syntax tree
      "[x for x in range(3)]", // unsupported syntax
      "eps > 0 and eps < 1",
      std::string(k_constraint_max_length + 1, '1'),
  };
  std::vector<ConstraintEnvironment> environments;
  environments.push_back(Env().axis("num_qo_heads", 32).axis("num_kv_heads", 8));
  environments.push_back(Env().axis("num_qo_heads", 32).axis("num_kv_heads", 6));
  environments.push_back(Env()
                             .axis("batch_size", 2)
                             .axis("total_q", 5)
                             .tensor("kv_indptr", shape_only({3}))
                             .tensor("qo_indptr", with_data({3}, {0, 2, 5})));
  environments.push_back(Env().axis("batch_size", 3).tensor("kv_indptr", shape_only({3})));
  environments.push_back(Env().scalar("eps", 1e-6));
  environments.push_back(Env().scalar("eps", 2.0));
  std::size_t violations = 0;
  for (const std::string& expression : expressions) {
    const CompiledConstraint compiled(expression);
    EXPECT_EQ(compiled.expression(), expression);
    for (const ConstraintEnvironment& environment : environments) {
      const ConstraintResult once = evaluate_constraint(expression, environment);
      const ConstraintResult reused = compiled.evaluate(environment);
      EXPECT_EQ(reused.outcome, once.outcome) << expression;
      EXPECT_EQ(reused.detail, once.detail) << expression;
      violations += reused.outcome == ConstraintOutcome::violated ? 1 : 0;
    }
  }
  // The set exercises every outcome: violations here, satisfied and not evaluable above.
  EXPECT_GE(violations, 3u);
  // A copy shares the parsed tree and outlives the original.
  auto original = std::make_unique<CompiledConstraint>("num_qo_heads % num_kv_heads == 0");
  const CompiledConstraint copy = *original;
  original.reset();
  EXPECT_EQ(copy.evaluate(environments[1]).detail,
            "num_qo_heads % num_kv_heads == 0 is false with num_qo_heads=32, num_kv_heads=6");
}

// --- The constraints of the real definitions ---

TEST(Constraint, PackedDimension) {
  constexpr std::string_view k_expr = "K_packed == K_doubled // 4";
  EXPECT_TRUE(satisfied(k_expr, Env().axis("K_packed", 64).axis("K_doubled", 256)));
  EXPECT_EQ(violation_detail(k_expr, Env().axis("K_packed", 64).axis("K_doubled", 512)),
            "K_packed == K_doubled // 4 is false with K_packed=64, K_doubled=512");
}

TEST(Constraint, IndptrLength) {
  constexpr std::string_view k_expr = "len_indptr == batch_size + 1";
  EXPECT_TRUE(satisfied(k_expr, Env().axis("len_indptr", 9).axis("batch_size", 8)));
  EXPECT_EQ(violation_detail(k_expr, Env().axis("len_indptr", 8).axis("batch_size", 8)),
            "len_indptr == batch_size + 1 is false with len_indptr=8, batch_size=8");
}

TEST(Constraint, LastIndptrItem) {
  constexpr std::string_view k_expr = "num_kv_indices == kv_indptr[-1].item()";
  const auto indptr = with_data({5}, {0, 3, 7, 9, 12});
  EXPECT_TRUE(satisfied(k_expr, Env().axis("num_kv_indices", 12).tensor("kv_indptr", indptr)));
  EXPECT_EQ(violation_detail(k_expr, Env().axis("num_kv_indices", 10).tensor("kv_indptr", indptr)),
            "num_kv_indices == kv_indptr[-1].item() is false with num_kv_indices=10, "
            "kv_indptr[-1].item()=12");
  EXPECT_EQ(not_evaluable_detail(
                k_expr, Env().axis("num_kv_indices", 12).tensor("kv_indptr", shape_only({5}))),
            "needs the data of tensor 'kv_indptr'");
}

TEST(Constraint, PaddedToMultipleOf128) {
  constexpr std::string_view k_expr = "padded_K == ((K + 127) // 128) * 128";
  EXPECT_TRUE(satisfied(k_expr, Env().axis("padded_K", 384).axis("K", 300)));
  EXPECT_TRUE(satisfied(k_expr, Env().axis("padded_K", 256).axis("K", 256)));
  EXPECT_EQ(violation_detail(k_expr, Env().axis("padded_K", 300).axis("K", 300)),
            "padded_K == ((K + 127) // 128) * 128 is false with padded_K=300, K=300");
}

TEST(Constraint, GroupSizeInTuple) {
  constexpr std::string_view k_expr = "num_qo_heads // num_kv_heads in (1, 2, 4, 8, 16, 32)";
  EXPECT_TRUE(satisfied(k_expr, Env().axis("num_qo_heads", 32).axis("num_kv_heads", 8)));
  EXPECT_TRUE(satisfied(k_expr, Env().axis("num_qo_heads", 32).axis("num_kv_heads", 32)));
  EXPECT_EQ(violation_detail(k_expr, Env().axis("num_qo_heads", 32).axis("num_kv_heads", 6)),
            "num_qo_heads // num_kv_heads in (1, 2, 4, 8, 16, 32) is false with "
            "num_qo_heads=32, num_kv_heads=6");
  EXPECT_TRUE(violated(k_expr, Env().axis("num_qo_heads", 8).axis("num_kv_heads", 16)));
  EXPECT_EQ(not_evaluable_detail(k_expr, Env().axis("num_qo_heads", 8).axis("num_kv_heads", 0)),
            "division by zero");
}

TEST(Constraint, QueryBlockTimesGroupIsMultipleOf8) {
  constexpr std::string_view k_expr = "(q_block_size * (num_qo_heads // num_kv_heads)) % 8 == 0";
  EXPECT_TRUE(satisfied(
      k_expr, Env().axis("q_block_size", 2).axis("num_qo_heads", 32).axis("num_kv_heads", 8)));
  EXPECT_EQ(
      violation_detail(
          k_expr, Env().axis("q_block_size", 1).axis("num_qo_heads", 32).axis("num_kv_heads", 8)),
      "(q_block_size * (num_qo_heads // num_kv_heads)) % 8 == 0 is false with "
      "q_block_size=1, num_qo_heads=32, num_kv_heads=8");
}

TEST(Constraint, BlockSizeAlternatives) {
  constexpr std::string_view k_expr =
      "kv_block_size in (8, 16, 32) or (kv_block_size > 0 and kv_block_size % 64 == 0)";
  EXPECT_TRUE(satisfied(k_expr, Env().axis("kv_block_size", 16)));
  EXPECT_TRUE(satisfied(k_expr, Env().axis("kv_block_size", 128)));
  EXPECT_EQ(violation_detail(k_expr, Env().axis("kv_block_size", 48)),
            "kv_block_size in (8, 16, 32) or (kv_block_size > 0 and kv_block_size % 64 == 0) is "
            "false with kv_block_size=48");
  EXPECT_TRUE(violated(k_expr, Env().axis("kv_block_size", 0)));
  EXPECT_TRUE(violated(k_expr, Env().axis("kv_block_size", -64)));
}

TEST(Constraint, OptionalValidBits) {
  constexpr std::string_view k_expr =
      "kv_valid_bits is None or num_kv_valid_words == (seq_len_kv + 31) // 32";
  // Short-circuit: the other names are not needed (nor known) when the input is absent.
  EXPECT_TRUE(satisfied(k_expr, Env().absent("kv_valid_bits")));
  EXPECT_TRUE(satisfied(k_expr, Env().scalar("kv_valid_bits", std::monostate{})));
  const Env present = Env().tensor("kv_valid_bits", shape_only({2, 4})).axis("seq_len_kv", 100);
  EXPECT_TRUE(satisfied(k_expr, Env(present).axis("num_kv_valid_words", 4)));
  EXPECT_EQ(violation_detail(k_expr, Env(present).axis("num_kv_valid_words", 3)),
            "kv_valid_bits is None or num_kv_valid_words == (seq_len_kv + 31) // 32 is false "
            "with kv_valid_bits=<tensor of shape (2, 4)>, num_kv_valid_words=3, seq_len_kv=100");
  EXPECT_EQ(not_evaluable_detail(k_expr, present), "unknown name 'num_kv_valid_words'");
}

TEST(Constraint, OptionalMaskType) {
  constexpr std::string_view k_expr = "mask_type is None or mask_type in ('dense', 'causal')";
  EXPECT_TRUE(satisfied(k_expr, Env().absent("mask_type")));
  EXPECT_TRUE(satisfied(k_expr, Env().scalar("mask_type", std::monostate{})));
  EXPECT_TRUE(satisfied(k_expr, Env().scalar("mask_type", std::string("dense"))));
  EXPECT_TRUE(satisfied(k_expr, Env().scalar("mask_type", std::string("causal"))));
  EXPECT_EQ(violation_detail(k_expr, Env().scalar("mask_type", std::string("sliding"))),
            "mask_type is None or mask_type in ('dense', 'causal') is false with "
            "mask_type='sliding'");
  EXPECT_TRUE(violated(k_expr, Env().scalar("mask_type", std::int64_t{1})));
  EXPECT_EQ(not_evaluable_detail(k_expr), "unknown name 'mask_type'");
}

TEST(Constraint, TotalSequenceLength) {
  constexpr std::string_view k_expr = "total_seq_len == cu_seqlens[-1].item()";
  const auto cu_seqlens = with_data({4}, {0, 5, 12, 20});
  EXPECT_TRUE(satisfied(k_expr, Env().axis("total_seq_len", 20).tensor("cu_seqlens", cu_seqlens)));
  EXPECT_EQ(
      violation_detail(k_expr, Env().axis("total_seq_len", 19).tensor("cu_seqlens", cu_seqlens)),
      "total_seq_len == cu_seqlens[-1].item() is false with total_seq_len=19, "
      "cu_seqlens[-1].item()=20");
  EXPECT_EQ(not_evaluable_detail(
                k_expr, Env().axis("total_seq_len", 20).tensor("cu_seqlens", shape_only({4}))),
            "needs the data of tensor 'cu_seqlens'");
}

TEST(Constraint, WeightShapeDimension) {
  constexpr std::string_view k_expr = "gemm1_weights.shape[1] == 2 * intermediate_size";
  const Env weights = Env().tensor("gemm1_weights", shape_only({8, 4096, 7168}));
  EXPECT_TRUE(satisfied(k_expr, Env(weights).axis("intermediate_size", 2048)));
  EXPECT_EQ(violation_detail(k_expr, Env(weights).axis("intermediate_size", 1024)),
            "gemm1_weights.shape[1] == 2 * intermediate_size is false with "
            "gemm1_weights.shape[1]=4096, intermediate_size=1024");
}

TEST(Constraint, LastShapeDimension) {
  constexpr std::string_view k_expr = "sparse_indices.shape[-1] == topk";
  const Env indices = Env().tensor("sparse_indices", shape_only({4, 2048}));
  EXPECT_TRUE(satisfied(k_expr, Env(indices).axis("topk", 2048)));
  EXPECT_EQ(violation_detail(k_expr, Env(indices).axis("topk", 1024)),
            "sparse_indices.shape[-1] == topk is false with sparse_indices.shape[-1]=2048, "
            "topk=1024");
}

TEST(Constraint, TopkFitsInPages) {
  constexpr std::string_view k_expr = "topk <= max_num_pages * page_size";
  EXPECT_TRUE(
      satisfied(k_expr, Env().axis("topk", 2048).axis("max_num_pages", 32).axis("page_size", 64)));
  EXPECT_EQ(
      violation_detail(k_expr,
                       Env().axis("topk", 2049).axis("max_num_pages", 32).axis("page_size", 64)),
      "topk <= max_num_pages * page_size is false with topk=2049, max_num_pages=32, page_size=64");
}

TEST(Constraint, SequenceLongerThanOne) {
  EXPECT_TRUE(satisfied("seq_len > 1", Env().axis("seq_len", 2)));
  EXPECT_EQ(violation_detail("seq_len > 1", Env().axis("seq_len", 1)),
            "seq_len > 1 is false with seq_len=1");
  // A scalar input reads the same way as an axis.
  EXPECT_TRUE(satisfied("seq_len > 1", Env().scalar("seq_len", std::int64_t{7})));
  EXPECT_TRUE(violated("seq_len > 1", Env().scalar("seq_len", 1.0)));
}

// --- Python semantics ---

TEST(Constraint, ArithmeticFollowsPython) {
  for (const std::string_view expression : {
           "-7 // 2 == -4",
           "-7 % 2 == 1",
           "7 % -2 == -1",
           "7 // -2 == -4",
           "-7 % -2 == -1",
           "2 ** 10 == 1024",
           "-2 ** 2 == -4",
           "(-2) ** 2 == 4",
           "2 ** 3 ** 2 == 512",
           "2 ** -1 == 0.5",
           "-2 ** -1 == -0.5",
           "1 / 2 == 0.5",
           "4 / 2 == 2.0",
           "7.5 // 2 == 3.0",
           "-7.5 % 2 == 0.5",
           "7.0 % -2 == -1.0",
           "0.1 + 0.2 != 0.3",
           "True + True == 2",
           "1 == 1.0",
           "-(-3) == +3",
           "- - 3 == 3",
           "9223372036854775807 == 2 ** 62 - 1 + 2 ** 62",
           "-9223372036854775807 - 1 == (-2) ** 63",
           "9007199254740993 != 9007199254740992.0",
           "1_000 == 1000 and 0x10 == 16 and 0o17 == 15 and 0b101 == 5",
           "1e3 == 1000 and .5 == 0.5 and 1.5e-3 == 0.0015",
           "abs(-5) == 5 and abs(-2.5) == 2.5",
       }) {
    EXPECT_TRUE(satisfied(expression)) << expression;
  }
}

// Found by the differential test: / on ints over 2^53 converted both to double first and so
// rounded twice; Python rounds the exact quotient once.
TEST(Constraint, TrueDivisionOfLargeIntsRoundsOnce) {
  const auto env = Env().axis("big", 9007199254740993); // 2^53 + 1
  EXPECT_TRUE(satisfied("big / 3 == 3002399751580331", env));
  EXPECT_TRUE(satisfied("big / 3 == big // 3", env));
  EXPECT_TRUE(satisfied("-big / 3 == -3002399751580331", env));
  EXPECT_TRUE(satisfied("big / -3 == -big // 3", env));
  EXPECT_TRUE(satisfied("1 / 9007199254740995 == 1.1102230246251562e-16"));
  EXPECT_TRUE(satisfied("big / 9007199254740995 == 0.9999999999999998", env));
  EXPECT_TRUE(satisfied("9223372036854775807 / 3 == 3.0744573456182584e+18"));
  EXPECT_TRUE(satisfied("(-9223372036854775807 - 1) / 7 == -1.3176245766935393e+18"));
  EXPECT_TRUE(satisfied("0 / -9223372036854775807 == 0"));
  EXPECT_EQ(not_evaluable_detail("big / 0", env), "division by zero");
}

// Found by the differential test: str, tuple and list repetition was refused as "unsupported
// operand types for *".
TEST(Constraint, SequenceRepetitionFollowsPython) {
  for (const std::string_view expression : {
           "'ab' * 2 == 'abab'",
           "2 * 'ab' == 'abab'",
           "'ab' * -1 == ''",
           "(1, 2) * 2 == (1, 2, 1, 2)",
           "[0] * 3 == [0, 0, 0]",
           "(1,) * True == (1,)",
           "() * 5 == ()",
           "x.shape * 2 == (4, 8, 4, 8)",
           "len((0,) * 16384) == 16384",
           "len('ab' * 8192) == 16384",
           "(1,) * (-9223372036854775807 - 1) == ()",
       }) {
    EXPECT_TRUE(satisfied(expression, Env().tensor("x", shape_only({4, 8})))) << expression;
  }
  EXPECT_EQ(not_evaluable_detail("'a' * 2.0"),
            "unsupported operand types for *: 'str' and 'float'");
  // Results are bounded, so that a short expression cannot ask for gigabytes.
  EXPECT_EQ(not_evaluable_detail("'a' * 16385"), "a str longer than 16384 is not supported");
  EXPECT_EQ(not_evaluable_detail("(1,) * 9223372036854775807"),
            "a tuple longer than 16384 is not supported");
  EXPECT_EQ(not_evaluable_detail("[1, 2] * 8193"), "a list longer than 16384 is not supported");
  EXPECT_EQ(not_evaluable_detail("('a' * 16384) + 'b'"),
            "a str longer than 16384 is not supported");
}

// Found by the differential test: 0.0 ** -inf was a division by zero; Python gives inf (the
// zero-base error is for finite negative exponents only).
TEST(Constraint, ZeroToMinusInfinityIsInfinity) {
  EXPECT_TRUE(satisfied("0.0 ** -(1e308 * 10) > 1e308"));
  EXPECT_TRUE(satisfied("0 ** -(1e308 * 10) > 1e308"));
  EXPECT_TRUE(satisfied("0.0 ** (1e308 * 10) == 0"));
  EXPECT_EQ(not_evaluable_detail("0.0 ** -1e308"),
            "division by zero: zero raised to a negative power");
}

TEST(Constraint, ComparisonsFollowPython) {
  for (const std::string_view expression : {
           "1 < 2 < 3",
           "not (3 > 2 > 2)",
           "(3 > 2 > 2) is False",
           "(1 < 2) is True",
           "1 <= 1 >= 1 != 2",
           "1 in (1, 2) and 3 not in (1, 2)",
           "1 in [1, 2]",
           "1.0 in (1, 2)",
           "'aus' in 'causal'",
           "'a' < 'b' and 'ab' > 'a'",
           "(1, 2) < (1, 3) and (1, 2) < (1, 2, 0) and (1, 2) == (1, 2)",
           "(1, 2) != [1, 2]",
           "None is None and None is not False",
           "'1' != 1",
           "None != 0",
           "min(3, 1, 2) == 1 and max((4, 9, 2)) == 9 and max([1.5, 1]) == 1.5",
           "len((1, 2, 3)) == 3 and len('abc') == 3",
       }) {
    EXPECT_TRUE(satisfied(expression)) << expression;
  }
  EXPECT_TRUE(violated("3 > 2 > 2"));
  EXPECT_TRUE(violated("1 < 2 > 3"));
}

TEST(Constraint, BooleanOperatorsShortCircuitAndReturnOperands) {
  EXPECT_TRUE(satisfied("0 or 7"));
  EXPECT_TRUE(satisfied("(0 or 7) == 7"));
  EXPECT_TRUE(satisfied("(3 and 0) == 0"));
  EXPECT_TRUE(satisfied("not None"));
  EXPECT_TRUE(satisfied("not 0 and not '' and not () and not 0.0"));
  // The unknown name is never read.
  EXPECT_TRUE(satisfied("True or unknown_name"));
  EXPECT_TRUE(violated("False and unknown_name"));
  EXPECT_TRUE(satisfied("1 > 2 > unknown_name or True"));
  EXPECT_EQ(not_evaluable_detail("False or unknown_name"), "unknown name 'unknown_name'");
}

TEST(Constraint, NonBoolResultsAreJudgedByTruthiness) {
  EXPECT_TRUE(satisfied("x", Env().axis("x", 3)));
  EXPECT_EQ(violation_detail("x - 3", Env().axis("x", 3)), "x - 3 is falsy (0) with x=3");
  EXPECT_EQ(violation_detail("mask", Env().scalar("mask", std::string())),
            "mask is falsy ('') with mask=''");
  EXPECT_TRUE(violated("()"));
  EXPECT_TRUE(satisfied("(0,)"));
}

TEST(Constraint, ViolationListsEachNameOnceWithPythonReprs) {
  EXPECT_EQ(violation_detail("x + x == 3", Env().axis("x", 1)), "x + x == 3 is false with x=1");
  EXPECT_EQ(violation_detail("a == b", Env().scalar("a", 0.5).scalar("b", 1.0)),
            "a == b is false with a=0.5, b=1.0");
  EXPECT_EQ(violation_detail("a < 0", Env().scalar("a", 1e16)), "a < 0 is false with a=1e+16");
  EXPECT_EQ(violation_detail("a < 0", Env().scalar("a", 1e-5)), "a < 0 is false with a=1e-05");
  EXPECT_EQ(violation_detail("a < 0", Env().scalar("a", 123456.25)),
            "a < 0 is false with a=123456.25");
  EXPECT_EQ(violation_detail("flag", Env().scalar("flag", false)), "flag is false with flag=False");
  EXPECT_EQ(
      violation_detail("len(x) == 3 and x.numel() == 8", Env().tensor("x", shape_only({4, 2}))),
      "len(x) == 3 and x.numel() == 8 is false with len(x)=4");
  EXPECT_EQ(violation_detail("  seq_len > 1  ", Env().axis("seq_len", 0)),
            "seq_len > 1 is false with seq_len=0");
}

TEST(Constraint, TensorAccessors) {
  const Env env = Env()
                      .tensor("x", shape_only({4, 2, 3}))
                      .tensor("v", with_data({3}, {5, 6, 7}))
                      .tensor("s", with_data({}, {42}))
                      .tensor("f", TensorFacts{{2}, std::vector<double>{0.5, -1.5}, false});
  for (const std::string_view expression : {
           "len(x) == 4",
           "x.shape == (4, 2, 3)",
           "x.shape[0] == 4 and x.shape[-1] == 3",
           "x.dim() == 3 and x.ndim == 3",
           "x.numel() == 24",
           "x.size() == (4, 2, 3) and x.size(1) == 2 and x.size(-1) == 3",
           "min(x.shape) == 2 and max(x.shape) == 4",
           "v[0].item() == 5 and v[-1].item() == 7",
           "v[1] == 6 and v[1] + 1 == 7",
           "v[0] < v[1] < v[2]",
           "v[0].dim() == 0 and v[0].shape == ()",
           "s.item() == 42 and s.dim() == 0",
           "s",
           "f[0].item() == 0.5 and f[1].item() < 0",
           "x is not None and v is not None",
           "(x).shape[1] == 2",
       }) {
    EXPECT_TRUE(satisfied(expression, env)) << expression;
  }
  EXPECT_EQ(not_evaluable_detail("x", env),
            "the truth value of tensor 'x' with 24 elements is ambiguous");
  EXPECT_EQ(not_evaluable_detail("x == 1", env),
            "comparing tensor 'x' elementwise is not supported");
  EXPECT_EQ(not_evaluable_detail("x[0] == 1", env),
            "indexing tensor 'x' of rank 3 is not supported");
  EXPECT_EQ(not_evaluable_detail("v[3].item() == 1", env),
            "index 3 is out of range for tensor 'v' of length 3");
  EXPECT_EQ(not_evaluable_detail("x.shape[3] == 1", env),
            "index 3 is out of range for a tuple of length 3");
  EXPECT_EQ(not_evaluable_detail("v.item() == 1", env),
            "item() of tensor 'v' with 3 elements: only one element can become a Python scalar");
  EXPECT_EQ(not_evaluable_detail("x.dtype == 1", env), "unsupported attribute 'dtype'");
  EXPECT_EQ(not_evaluable_detail("x.foo()", env), "unsupported method 'foo'");
  EXPECT_EQ(not_evaluable_detail("n.item()", Env().axis("n", 3)),
            "'int' object has no attribute 'item'");
  EXPECT_EQ(not_evaluable_detail("n.shape", Env().axis("n", 3)),
            "'int' object has no attribute 'shape'");
}

TEST(Constraint, TensorDataThatDoesNotFitItsShapeIsNotEvaluable) {
  EXPECT_EQ(not_evaluable_detail("v[0].item() == 1", Env().tensor("v", with_data({3}, {1, 2}))),
            "the data of tensor 'v' has 2 values, its shape (3,) needs 3");
  EXPECT_EQ(not_evaluable_detail("v[0].item() == 1", Env().tensor("v", with_data({1}, {0.5}))),
            "element 0 of tensor 'v' is not a 64-bit integer (0.5)");
}

// --- Not evaluable ---

TEST(Constraint, UnknownName) {
  EXPECT_EQ(not_evaluable_detail("x > 0"), "unknown name 'x'");
  EXPECT_EQ(not_evaluable_detail("len"), "builtin 'len' used as a value");
}

TEST(Constraint, DivisionByZero) {
  for (const std::string_view expression :
       {"1 // 0", "1 % 0", "1 / 0", "1.0 / 0.0", "1.5 // 0", "2.0 % 0.0", "0 ** -1"}) {
    EXPECT_EQ(not_evaluable_detail(expression).rfind("division by zero", 0), 0u) << expression;
  }
  EXPECT_EQ(not_evaluable_detail("x / y == 1", Env().axis("x", 1).axis("y", 0)),
            "division by zero");
}

TEST(Constraint, IntegerOverflow) {
  const std::string overflow = "integer overflow: the result does not fit in 64 bits";
  EXPECT_EQ(not_evaluable_detail("9223372036854775807 + 1 > 0"), overflow);
  EXPECT_EQ(not_evaluable_detail("2 ** 64 > 0"), overflow);
  EXPECT_EQ(not_evaluable_detail("2 ** 63 > 0"), overflow);
  EXPECT_EQ(not_evaluable_detail("-(-9223372036854775807 - 1)"), overflow);
  EXPECT_EQ(not_evaluable_detail("(-9223372036854775807 - 1) // -1"), overflow);
  EXPECT_EQ(not_evaluable_detail("x * x > 0", Env().axis("x", std::int64_t{1} << 40)), overflow);
  EXPECT_EQ(not_evaluable_detail("99999999999999999999 > 0"),
            "integer literal '99999999999999999999' does not fit in 64 bits");
  EXPECT_TRUE(satisfied("(-9223372036854775807 - 1) % -1 == 0"));
  EXPECT_TRUE(satisfied("(-2) ** 63 < 0"));
  EXPECT_EQ(not_evaluable_detail("10.0 ** 400"), "float overflow in '**'");
}

TEST(Constraint, UnsupportedSyntaxIsNamed) {
  const Env env = Env().tensor("x", shape_only({4})).axis("a", 1).axis("b", 2);
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"x.foo()", "unsupported method 'foo'"},
      {"[i for i in x]", "unsupported syntax: comprehension"},
      {"min(i for i in x)", "unsupported syntax: comprehension"},
      {"a = 1", "unsupported syntax: assignment"},
      {"a += 1", "unsupported syntax: assignment"},
      {"(a := 1)", "unsupported syntax: assignment expression ':='"},
      {"lambda: 1", "unsupported syntax: lambda"},
      {"a if b else 0", "unsupported syntax: conditional expression"},
      {"a & b", "unsupported operator '&'"},
      {"a | b", "unsupported operator '|'"},
      {"a ^ b", "unsupported operator '^'"},
      {"a << b", "unsupported operator '<<'"},
      {"~a", "unsupported operator '~'"},
      {"a @ b", "unsupported operator '@'"},
      {"x[1:2]", "unsupported syntax: slice"},
      {"x[:2]", "unsupported syntax: slice"},
      {"x[0, 1]", "unsupported syntax: multi-dimensional index"},
      {"{1: 2}", "unsupported syntax: dict or set display"},
      {"f(1)", "unsupported function 'f'"},
      {"a(1)", "unsupported function 'a'"},
      {"(a)(1)", "unsupported function 'a'"},
      {"(1)(2)", "unsupported call"},
      {"x.shape.foo", "unsupported attribute 'foo'"},
      {"min(a, key=abs)", "unsupported syntax: keyword argument"},
      {"max(*x)", "unsupported syntax: starred argument"},
      {"(a).b.c", "unsupported attribute 'b'"},
      {"y.foo()", "unsupported method 'foo'"},
      {"f'{a}'", "unsupported syntax: string prefix 'f'"},
      {"'''a'''", "unsupported syntax: triple-quoted string"},
      {"1j", "unsupported syntax: complex number literal"},
      {"a is 1", "'is' is only supported with None, True or False"},
      {"'a' < 1", "'<' not supported between instances of 'str' and 'int'"},
      {"'a' + 1", "unsupported operand types for +: 'str' and 'int'"},
      {"-'a'", "bad operand type for unary -: 'str'"},
      {"1 in 2", "argument of type 'int' is not iterable"},
      {"(1, 2)[5]", "index 5 is out of range for a tuple of length 2"},
      {"min(())", "min() arg is an empty sequence"},
      {"(-8.0) ** 0.5", "unsupported result: a negative number to a fractional power is complex"},
      {"a > 0 \\\n and b > 0", "unsupported syntax: line continuation"},
  };
  for (const auto& [expression, detail] : cases) {
    EXPECT_EQ(not_evaluable_detail(expression, env), detail) << expression;
  }
}

TEST(Constraint, GarbageIsASyntaxError) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"", "empty expression"},
      {"   ", "empty expression"},
      {"# only a comment", "empty expression"},
      {")", "syntax error: unexpected ')' at column 1"},
      {"1 +", "syntax error: unexpected end of expression"},
      {"'abc", "syntax error: unterminated string literal at column 1"},
      {"\"abc", "syntax error: unterminated string literal at column 1"},
      {"'ab\\'", "syntax error: unterminated string literal at column 1"},
      {"(1", "syntax error: unexpected end of expression"},
      {"(1]", "syntax error: unexpected ']' at column 3"},
      {"1 2", "syntax error: unexpected number '2' at column 3"},
      {"a b", "syntax error: unexpected name 'b' at column 3"},
      {"1 +* 2", "syntax error: unexpected '*' at column 4"},
      {"1 $ 2", "syntax error: unexpected character '$' at column 3"},
      {"a ! b", "syntax error: unexpected '!' at column 3"},
      {"a.1", "syntax error: unexpected number '.1' at column 2"},
      {"x.", "syntax error: unexpected end of expression"},
      {"not", "syntax error: unexpected end of expression"},
      {"a not b", "syntax error: unexpected keyword 'not' at column 3"},
      {"class", "syntax error: unexpected keyword 'class' at column 1"},
      {"012", "syntax error: leading zeros in decimal integer literals are not permitted"},
      {"1__0", "syntax error: invalid number literal '1__0'"},
      {"0x", "syntax error: invalid number literal '0x'"},
      {"1e", "syntax error: invalid number literal '1e'"},
      {"a > 0\nb > 0", "syntax error: line break outside brackets"},
      {"\xff", "syntax error: unexpected character byte 0xFF at column 1"},
  };
  for (const auto& [expression, detail] : cases) {
    EXPECT_EQ(not_evaluable_detail(expression, Env().axis("a", 1).axis("b", 1)), detail)
        << expression;
  }
  // What Python accepts around the expression is accepted here too.
  EXPECT_TRUE(satisfied("(a > 0 and\n b > 0)", Env().axis("a", 1).axis("b", 1)));
  EXPECT_TRUE(satisfied("a > 0  # trailing comment\n", Env().axis("a", 1)));
  EXPECT_TRUE(satisfied("'x' 'y' == 'xy' and \"it's\" == 'it\\'s'"));
}

TEST(Constraint, DeepNestingIsBounded) {
  const std::string too_deep = "expression too deeply nested";
  EXPECT_EQ(not_evaluable_detail(std::string(10000, '(')), too_deep);
  EXPECT_EQ(not_evaluable_detail(std::string(100, '(') + "1" + std::string(100, ')')), too_deep);
  EXPECT_EQ(not_evaluable_detail(std::string(100, '[') + std::string(100, ']')), too_deep);
  EXPECT_EQ(not_evaluable_detail(std::string(200, '-') + "1"), too_deep);
  std::string nots;
  for (int i = 0; i < 200; ++i) {
    nots += "not ";
  }
  EXPECT_EQ(not_evaluable_detail(nots + "0"), too_deep);
  std::string powers = "1";
  for (int i = 0; i < 200; ++i) {
    powers += " ** 1";
  }
  EXPECT_EQ(not_evaluable_detail(powers), too_deep);
  std::string sum = "1";
  for (int i = 0; i < 1000; ++i) {
    sum += " + 1";
  }
  EXPECT_EQ(not_evaluable_detail(sum), too_deep);
  // Moderate nesting still evaluates.
  EXPECT_TRUE(satisfied(std::string(40, '(') + "1" + std::string(40, ')')));
  std::string short_sum = "1";
  for (int i = 0; i < 100; ++i) {
    short_sum += " + 1";
  }
  EXPECT_TRUE(satisfied(short_sum + " == 101"));
}

TEST(Constraint, OverlongExpressionIsRejected) {
  EXPECT_EQ(not_evaluable_detail(std::string(k_constraint_max_length + 1, ' ')),
            "expression longer than 16384 characters");
}

// Every prefix of every real constraint, and random token soup, gives an outcome with a detail
// (the evaluator is total).
TEST(Constraint, EveryInputGetsAResult) {
  const Env env = Env()
                      .axis("a", 3)
                      .axis("b", -2)
                      .scalar("s", std::string("dense"))
                      .tensor("t", with_data({3}, {1, 2, 3}))
                      .tensor("u", shape_only({2, 2}))
                      .absent("n");
  const std::vector<std::string> pieces = {
      "a",    "b",     "s",    "t",    "u",     "n",      "1",   "0",      "-1",    "2.5", "'x'",
      "None", "True",  "(",    ")",    "[",     "]",      ",",   ".",      "+",     "-",   "*",
      "/",    "//",    "%",    "**",   "==",    "!=",     "<",   "<=",     ">",     ">=",  " and ",
      " or ", " not ", " in ", " is ", "shape", "item()", "min", "max",    "abs",   "len", ":",
      "=",    "&",     "'",    "\"",   "#",     "\n",     "\\",  "lambda", " for ", "\xc3"};
  std::mt19937 random(12345);
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(0, 12);
  int outcomes[3] = {0, 0, 0};
  for (int i = 0; i < 20000; ++i) {
    std::string expression;
    for (int n = length(random); n > 0; --n) {
      expression += pieces[pick(random)];
    }
    const ConstraintResult result = evaluate_constraint(expression, env);
    ++outcomes[static_cast<int>(result.outcome)];
    if (result.outcome != ConstraintOutcome::satisfied) {
      EXPECT_FALSE(result.detail.empty()) << expression;
    }
  }
  // The soup exercises every outcome.
  EXPECT_GT(outcomes[0], 0);
  EXPECT_GT(outcomes[1], 0);
  EXPECT_GT(outcomes[2], 0);

  const std::string real = "kv_block_size in (8, 16, 32) or (kv_block_size > 0 and "
                           "kv_block_size % 64 == 0) and x[-1].item() == 'a' is not None";
  for (std::size_t n = 0; n <= real.size(); ++n) {
    const ConstraintResult result = evaluate_constraint(real.substr(0, n), env);
    EXPECT_TRUE(result.outcome == ConstraintOutcome::satisfied || !result.detail.empty())
        << real.substr(0, n);
  }
}

TEST(Constraint, OutcomeNames) {
  EXPECT_EQ(to_string(ConstraintOutcome::satisfied), "satisfied");
  EXPECT_EQ(to_string(ConstraintOutcome::violated), "violated");
  EXPECT_EQ(to_string(ConstraintOutcome::not_evaluable), "not evaluable");
}

} // namespace
} // namespace fib
