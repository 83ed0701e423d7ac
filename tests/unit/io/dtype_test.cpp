// DType spellings: JSON names (exact, case-sensitive) and safetensors header names.

#include <fib/io/dtype.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace fib {
namespace {

TEST(DType, EveryDtypeHasADistinctJsonNameThatParsesBack) {
  std::set<std::string> names;
  for (const DType dtype : k_all_dtypes) {
    const std::string name(to_string(dtype));
    EXPECT_TRUE(names.insert(name).second) << "two dtypes spelled " << name;
    EXPECT_EQ(parse_dtype(name), dtype);
  }
  EXPECT_EQ(names.size(), EnumNames<DType>::k_table.size());
}

TEST(DType, ParsingIsExact) {
  EXPECT_EQ(parse_dtype("bool"), DType::boolean);
  EXPECT_EQ(parse_dtype("boolean"), std::nullopt);
  EXPECT_EQ(parse_dtype("Float32"), std::nullopt);
  EXPECT_EQ(parse_dtype(" float32"), std::nullopt);
  EXPECT_EQ(parse_dtype("unknown"), std::nullopt);
  EXPECT_EQ(parse_dtype("uint8"), std::nullopt);
}

TEST(DType, SafetensorsNames) {
  EXPECT_EQ(safetensors_dtype_name(DType::float32), "F32");
  EXPECT_EQ(safetensors_dtype_name(DType::bfloat16), "BF16");
  EXPECT_EQ(safetensors_dtype_name(DType::float8_e4m3fn), "F8_E4M3");
  EXPECT_EQ(safetensors_dtype_name(DType::float8_e5m2), "F8_E5M2");
  EXPECT_EQ(safetensors_dtype_name(DType::int64), "I64");
  EXPECT_EQ(safetensors_dtype_name(DType::boolean), "BOOL");
  // Packed fp4 is stored as U8 bytes: no dtype name of its own.
  EXPECT_EQ(safetensors_dtype_name(DType::float4_e2m1), "");
}

} // namespace
} // namespace fib
