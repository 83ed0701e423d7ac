#pragma once
// DType: the element types a Definition may name. Case-sensitive, closed set.

#include <fib/base/enum_names.hpp>

#include <array>
#include <optional>
#include <string_view>

namespace fib {

// --- Interface ---

enum class DType {
  float32,
  float16,
  bfloat16,
  float8_e4m3fn,
  float8_e5m2,
  float4_e2m1,
  int64,
  int32,
  int16,
  int8,
  boolean, // spelled "bool" in JSON
};

// All dtypes in the order the schema lists them.
inline constexpr std::array k_all_dtypes = {
    DType::float32,     DType::float16,     DType::bfloat16, DType::float8_e4m3fn,
    DType::float8_e5m2, DType::float4_e2m1, DType::int64,    DType::int32,
    DType::int16,       DType::int8,        DType::boolean};

// The JSON spellings, in the order the schema lists them.
template <> struct EnumNames<DType> {
  static constexpr std::array k_table = std::to_array<EnumName<DType>>({
      {DType::float32, "float32"},
      {DType::float16, "float16"},
      {DType::bfloat16, "bfloat16"},
      {DType::float8_e4m3fn, "float8_e4m3fn"},
      {DType::float8_e5m2, "float8_e5m2"},
      {DType::float4_e2m1, "float4_e2m1"},
      {DType::int64, "int64"},
      {DType::int32, "int32"},
      {DType::int16, "int16"},
      {DType::int8, "int8"},
      {DType::boolean, "bool"},
  });
};

// The JSON spelling: "float32" … "bool".
inline std::string_view to_string(DType dtype) {
  return enum_name(dtype);
}

// Exact, case-sensitive lookup; nullopt for anything else ("unknown", "uint8", "Float32").
inline std::optional<DType> parse_dtype(std::string_view name) {
  return parse_enum<DType>(name);
}

// The safetensors header spelling ("F32", "BF16", "F8_E4M3", "BOOL", …). float4_e2m1 has none
// (packed fp4 is stored as U8), so it gives "".
std::string_view safetensors_dtype_name(DType dtype);

} // namespace fib
