#pragma once
// The worker's calls into libtorch, behind standard-library types only. torch_bridge.cpp is the
// one file with torch headers, and it is compiled as C++17: libtorch 1.13's headers do not compile
// as C++20 under clang 14 (an incomplete c10::IValue in a constexpr std::vector), and fib's own
// headers are C++20, so this header includes none of them.

#include <cstdint>
#include <string>
#include <vector>

typedef struct _object PyObject; // NOLINT: Python.h's own spelling

namespace fib::worker::torch_bridge {

struct Capabilities {
  std::string version; // TORCH_VERSION, e.g. "1.13.0"
  bool cuda = false;   // a CUDA build with a device present
  bool float8 = false; // float8_e4m3fn / float8_e5m2 exist
};
Capabilities capabilities();

// The element types fib makes tensors of (fib's dtypes less packed float4).
enum class ElementType {
  float32,
  float16,
  bfloat16,
  float8_e4m3fn,
  float8_e5m2,
  int64,
  int32,
  int16,
  int8,
  boolean
};

// How a tensor's values are made (fib/exec/smoke.hpp, InputFill, says what each means).
enum class Fill {
  random_normal,
  probabilities,
  random_bool,
  index_pointer,
  indices,
  lengths,
  zeros,
  values
};

struct TensorRequest {
  std::vector<std::int64_t> shape;
  ElementType type = ElementType::float32;
  std::string type_name; // fib's spelling, for messages
  Fill fill = Fill::zeros;
  std::int64_t total = 0;     // index_pointer: the last value
  std::int64_t bound = 1;     // indices: values are below this
  std::vector<double> values; // values: every element, in order (converted to `type`)
};

// New references to one torch.Tensor per request, in order, filled from one CPU generator seeded
// with `seed` (then moved to the CUDA device when `cuda`). `import torch` must have run. On
// failure: no objects (all released) and `reason` says why (an element type this torch lacks, no
// CUDA device); callers check Capabilities first, so that they can name the input.
std::vector<PyObject*> make_tensors(const std::vector<TensorRequest>& requests, bool cuda,
                                    std::uint64_t seed, std::string& reason);

} // namespace fib::worker::torch_bridge
