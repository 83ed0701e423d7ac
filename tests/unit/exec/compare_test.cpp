// fib's own judging of a solution's outputs (exec/compare.hpp): safetensors files written here by
// hand, compared for count, shape, dtype and values, with the old tool's messages and tolerances.

#include "test_support.hpp"

#include <fib/exec/compare.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace fib {
namespace {

using testing::TempDir;

struct Tensor {
  std::string key;
  std::string dtype; // "F32", "BF16" or "I32" here
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

void append_le(std::string& out, std::uint64_t value, int width) {
  for (int i = 0; i < width; ++i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

// A safetensors file of `tensors` (F32 stored as is, BF16 as the top half of the float, I32 as
// the integer).
std::string safetensors(const std::vector<Tensor>& tensors) {
  std::string header = "{";
  std::string data;
  for (const Tensor& t : tensors) {
    const std::size_t begin = data.size();
    for (const float v : t.values) {
      const auto bits = std::bit_cast<std::uint32_t>(v);
      if (t.dtype == "BF16") {
        append_le(data, bits >> 16, 2);
      } else if (t.dtype == "I32") {
        append_le(data, static_cast<std::uint32_t>(static_cast<std::int32_t>(v)), 4);
      } else {
        append_le(data, bits, 4);
      }
    }
    std::string shape;
    for (const auto n : t.shape) {
      if (!shape.empty()) {
        shape += ',';
      }
      shape += std::to_string(n);
    }
    if (header.size() > 1) {
      header += ',';
    }
    header += fmt::format(R"("{}":{{"dtype":"{}","shape":[{}],"data_offsets":[{},{}]}})", t.key,
                          t.dtype, shape, begin, data.size());
  }
  header += "}";
  std::string out;
  append_le(out, header.size(), 8);
  return out + header + data;
}

class CompareOutputs : public ::testing::Test {
protected:
  OutputComparison compare(const std::vector<Tensor>& expected, const std::vector<Tensor>& got,
                           std::vector<std::string> kinds, double atol = 1e-2, double rtol = 1e-2,
                           ToleranceTable table = ToleranceTable::off,
                           std::optional<double> ratio = std::nullopt) {
    std::vector<std::string> names;
    for (const Tensor& t : expected) {
      names.push_back(t.key);
    }
    const auto expected_file = dir.write("expected.safetensors", safetensors(expected));
    const auto got_file = dir.write("got.safetensors", safetensors(got));
    return compare_outputs(expected_file, names, got_file, kinds,
                           ComparePolicy{atol, rtol, table, ratio});
  }
  TempDir dir;
};

TEST_F(CompareOutputs, EqualValuesPassWithZeroErrors) {
  const auto result =
      compare({{"y", "F32", {2}, {1.0f, 2.0f}}}, {{"0", "F32", {2}, {1.0f, 2.0f}}}, {"tensor"});
  EXPECT_EQ(result.status, "");
  EXPECT_FALSE(result.unreadable);
  EXPECT_EQ(result.max_absolute_error, 0.0);
  EXPECT_EQ(result.max_relative_error, 0.0);
}

TEST_F(CompareOutputs, CountShapeAndDtypeMismatchesUseTheOldToolsWords) {
  const Tensor y{"y", "F32", {2, 3}, std::vector<float>(6, 0.0f)};
  auto r = compare({y}, {}, {});
  EXPECT_EQ(r.status, "INCORRECT_SHAPE");
  EXPECT_EQ(r.log, "returned 0 outputs, expected 1");
  r = compare({y}, {{"0", "F32", {3, 2}, std::vector<float>(6, 0.0f)}}, {"tensor"});
  EXPECT_EQ(r.status, "INCORRECT_SHAPE");
  EXPECT_EQ(r.log, "output 0: shape (3, 2), expected (2, 3)");
  r = compare({y}, {}, {"int"});
  EXPECT_EQ(r.status, "INCORRECT_SHAPE");
  EXPECT_EQ(r.log, "output 0: shape (), expected (2, 3)");
  r = compare({{"y", "F32", {2}, {1.0f, 1.0f}}}, {{"0", "BF16", {2}, {1.0f, 1.0f}}}, {"tensor"});
  EXPECT_EQ(r.status, "INCORRECT_DTYPE");
  EXPECT_EQ(r.log, "output 0: dtype torch.bfloat16, expected torch.float32");
}

TEST_F(CompareOutputs, ValuesOutsideTheToleranceAreNumericalErrorsWithTheirSizes) {
  const Tensor expected{"y", "F32", {4}, {1.0f, 1.0f, 1.0f, 1.0f}};
  const Tensor got{"0", "F32", {4}, {1.0f, 1.0f, 1.0f, 1.5f}};
  auto r = compare({expected}, {got}, {"tensor"});
  EXPECT_EQ(r.status, "INCORRECT_NUMERICAL");
  EXPECT_EQ(r.log, "output 0: 75.0% of the values within atol=0.01, rtol=0.01");
  EXPECT_DOUBLE_EQ(r.max_absolute_error, 0.5);
  EXPECT_DOUBLE_EQ(r.max_relative_error, 0.5);
  EXPECT_EQ(compare({expected}, {got}, {"tensor"}, 1.0, 0.0).status, "");
}

TEST_F(CompareOutputs, NanIsNeverCloseAndInfinityOnlyToItself) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(compare({{"y", "F32", {1}, {inf}}}, {{"0", "F32", {1}, {inf}}}, {"tensor"}).status, "");
  EXPECT_EQ(compare({{"y", "F32", {1}, {inf}}}, {{"0", "F32", {1}, {-inf}}}, {"tensor"}).status,
            "INCORRECT_NUMERICAL");
  const auto r =
      compare({{"y", "F32", {2}, {1.0f, nan}}}, {{"0", "F32", {2}, {1.0f, nan}}}, {"tensor"});
  EXPECT_EQ(r.status, "INCORRECT_NUMERICAL");
  EXPECT_EQ(r.log, "output 0: 50.0% of the values within atol=0.01, rtol=0.01");
}

TEST_F(CompareOutputs, TheTableAppliesTheDtypesTolerance) {
  // One bfloat16 step above 1 (1.0078125): within 8e-3 + 1e-2 * 1, not within 0/0.
  const Tensor expected{"y", "BF16", {4}, {1.0f, 1.0f, 1.0f, 1.0f}};
  const Tensor got{"0", "BF16", {4}, {1.0078125f, 1.0078125f, 1.0078125f, 1.0078125f}};
  EXPECT_EQ(compare({expected}, {got}, {"tensor"}, 0.0, 0.0, ToleranceTable::on).status, "");
  EXPECT_EQ(compare({expected}, {got}, {"tensor"}, 0.0, 0.0, ToleranceTable::off).status,
            "INCORRECT_NUMERICAL");
}

TEST_F(CompareOutputs, IntegersMustBeEqualWhateverTheTolerance) {
  // An index of 504 against 500 is within rtol 1e-2, but an index is right or wrong.
  auto ints = [](std::string key, std::vector<std::int32_t> values) {
    std::string data;
    for (const auto v : values) {
      append_le(data, static_cast<std::uint32_t>(v), 4);
    }
    return std::pair{key, data};
  };
  const auto [ekey, edata] = ints("y", {500, 7});
  const auto [gkey, gdata] = ints("0", {504, 7});
  const auto header = [](const std::string& key) {
    return fmt::format(R"({{"{}":{{"dtype":"I32","shape":[2],"data_offsets":[0,8]}}}})", key);
  };
  auto file = [&](const std::string& name, const std::string& key, const std::string& data) {
    std::string out;
    append_le(out, header(key).size(), 8);
    return dir.write(name, out + header(key) + data);
  };
  const auto r = compare_outputs(file("e.safetensors", ekey, edata), {"y"},
                                 file("g.safetensors", gkey, gdata), {"tensor"}, ComparePolicy{});
  EXPECT_EQ(r.status, "INCORRECT_NUMERICAL");
  EXPECT_EQ(r.log, "output 0: 50.0% of the values within atol=0, rtol=0");
}

TEST_F(CompareOutputs, ARequiredMatchedRatioLetsAShareOfFloatValuesBeOffButNotIntegers) {
  // 19 of 20 float values close: 95% matched.
  std::vector<float> expected(20, 1.0f);
  std::vector<float> got = expected;
  got[7] = 5.0f;
  const auto strict =
      compare({{"y", "F32", {20}, expected}}, {{"0", "F32", {20}, got}}, {"tensor"});
  EXPECT_EQ(strict.status, "INCORRECT_NUMERICAL");
  EXPECT_DOUBLE_EQ(strict.matched_ratio, 0.95);
  const auto enough = compare({{"y", "F32", {20}, expected}}, {{"0", "F32", {20}, got}}, {"tensor"},
                              1e-2, 1e-2, ToleranceTable::off, 0.95);
  EXPECT_EQ(enough.status, "") << enough.log;
  EXPECT_DOUBLE_EQ(enough.matched_ratio, 0.95);
  EXPECT_DOUBLE_EQ(enough.max_absolute_error, 4.0);
  const auto short_of_it = compare({{"y", "F32", {20}, expected}}, {{"0", "F32", {20}, got}},
                                   {"tensor"}, 1e-2, 1e-2, ToleranceTable::off, 0.96);
  EXPECT_EQ(short_of_it.status, "INCORRECT_NUMERICAL");
  // Integer outputs stay exact whatever the ratio.
  const auto ints = compare({{"y", "I32", {2}, {1.0f, 2.0f}}}, {{"0", "I32", {2}, {1.0f, 3.0f}}},
                            {"tensor"}, 1e-2, 1e-2, ToleranceTable::off, 0.5);
  EXPECT_EQ(ints.status, "INCORRECT_NUMERICAL");
  EXPECT_DOUBLE_EQ(ints.matched_ratio, 1.0); // no floating-point output
}

TEST(Tolerance, TheTableIsPerDtypeAndOtherDtypesKeepTheGivenOnes) {
  EXPECT_EQ(tolerance_for("BF16", 0.5, 0.25, ToleranceTable::off).atol, 0.5);
  const Tolerance f32 = tolerance_for("F32", 0.5, 0.25, ToleranceTable::on);
  EXPECT_EQ(f32.atol, 1e-5);
  EXPECT_EQ(f32.rtol, 1e-5);
  const Tolerance f16 = tolerance_for("F16", 0.5, 0.25, ToleranceTable::on);
  EXPECT_EQ(f16.atol, 1e-3);
  const Tolerance bf16 = tolerance_for("BF16", 0.5, 0.25, ToleranceTable::on);
  EXPECT_EQ(bf16.atol, 8e-3);
  EXPECT_EQ(bf16.rtol, 1e-2);
  const Tolerance fp8 = tolerance_for("F8_E4M3", 0.5, 0.25, ToleranceTable::on);
  EXPECT_EQ(fp8.atol, 1e-1);
  EXPECT_EQ(fp8.rtol, 2e-1);
  EXPECT_EQ(fp8.required_ratio, 0.85);
  const Tolerance i32 = tolerance_for("I32", 0.5, 0.25, ToleranceTable::on);
  EXPECT_EQ(i32.atol, 0.5);
  EXPECT_EQ(i32.required_ratio, 1.0);
}

TEST_F(CompareOutputs, AFileThatIsNotSafetensorsIsUnreadableNotAPass) {
  const auto expected = dir.write("expected.safetensors", safetensors({{"y", "F32", {1}, {1.0f}}}));
  const auto got = dir.write("got.safetensors", "not a safetensors file");
  const auto r = compare_outputs(expected, {"y"}, got, {"tensor"}, ComparePolicy{});
  ASSERT_TRUE(r.unreadable);
  EXPECT_NE(r.unreadable->find("the solution's outputs"), std::string::npos) << *r.unreadable;
  const auto missing = compare_outputs(expected, {"y"}, dir.path() / "absent.safetensors",
                                       {"tensor"}, ComparePolicy{});
  EXPECT_TRUE(missing.unreadable);
}

} // namespace
} // namespace fib
