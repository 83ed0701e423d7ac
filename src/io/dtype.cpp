#include "fib/io/dtype.hpp"

namespace fib {

std::string_view safetensors_dtype_name(DType dtype) {
  switch (dtype) {
  case DType::float32:
    return "F32";
  case DType::float16:
    return "F16";
  case DType::bfloat16:
    return "BF16";
  case DType::float8_e4m3fn:
    return "F8_E4M3";
  case DType::float8_e5m2:
    return "F8_E5M2";
  case DType::float4_e2m1:
    return "";
  case DType::int64:
    return "I64";
  case DType::int32:
    return "I32";
  case DType::int16:
    return "I16";
  case DType::int8:
    return "I8";
  case DType::boolean:
    return "BOOL";
  }
  return "";
}

} // namespace fib
