#include "tensors.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/version.h>

#include <fib/io/safetensors.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace fib::worker {
namespace {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
constexpr bool k_has_float8 = true;
#else
constexpr bool k_has_float8 = false;
#endif

// The ATen type of a dtype; nullopt (with the reason) when this torch has none.
std::optional<at::ScalarType> scalar_type(DType dtype, std::string& reason) {
  switch (dtype) {
  case DType::float32:
    return at::kFloat;
  case DType::float16:
    return at::kHalf;
  case DType::bfloat16:
    return at::kBFloat16;
  case DType::int64:
    return at::kLong;
  case DType::int32:
    return at::kInt;
  case DType::int16:
    return at::kShort;
  case DType::int8:
    return at::kChar;
  case DType::boolean:
    return at::kBool;
  case DType::float8_e4m3fn:
  case DType::float8_e5m2:
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
    return dtype == DType::float8_e4m3fn ? at::ScalarType::Float8_e4m3fn
                                         : at::ScalarType::Float8_e5m2;
#else
    reason = fmt::format("torch {} has no {} (float8 needs torch 2.1 or later)", TORCH_VERSION,
                         to_string(dtype));
    return std::nullopt;
#endif
  case DType::float4_e2m1:
    reason = "fib does not synthesize packed float4_e2m1 inputs";
    return std::nullopt;
  }
  reason = "unknown dtype";
  return std::nullopt;
}

at::Tensor fill(const PlannedInput& input, at::ScalarType type, const at::TensorOptions& options,
                at::Generator& generator) {
  const at::IntArrayRef shape(input.shape);
  switch (input.fill) {
  case InputFill::random_normal: {
    // Generate in float32 (randn exists for every float type from it), then convert.
    return at::randn(shape, generator, options.dtype(at::kFloat)).to(type);
  }
  case InputFill::probabilities:
    return at::softmax(at::randn(shape, generator, options.dtype(at::kFloat)), -1).to(type);
  case InputFill::random_bool:
    return at::randint(0, 2, shape, generator, options.dtype(at::kLong)).to(at::kBool);
  case InputFill::index_pointer: {
    const std::int64_t n = input.shape.empty() ? 0 : input.shape[0];
    std::vector<std::int64_t> values(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
    const std::int64_t segments = std::max<std::int64_t>(n - 1, 1);
    for (std::int64_t i = 0; i < n; ++i) {
      values[static_cast<std::size_t>(i)] = (input.total * i) / segments;
    }
    return at::tensor(values, options.dtype(at::kLong)).to(type);
  }
  case InputFill::indices:
    return at::randint(0, std::max<std::int64_t>(input.bound, 1), shape, generator,
                       options.dtype(at::kLong))
        .to(type);
  case InputFill::lengths:
    return at::ones(shape, options.dtype(type));
  case InputFill::zeros:
  case InputFill::scalar:
  case InputFill::safetensors: // read in make_inputs
    return at::zeros(shape, options.dtype(type));
  }
  return at::zeros(shape, options.dtype(type));
}

// A safetensors input: its values as the declared dtype and shape; "" reason when it worked.
std::optional<at::Tensor> read_blob(const PlannedInput& input, at::ScalarType type,
                                    std::string& reason) {
  auto header = read_safetensors_header(input.file);
  if (!header) {
    reason = header.error().message;
    return std::nullopt;
  }
  auto values = read_tensor_values(input.file, *header, input.key, std::size_t{1} << 31);
  if (!values) {
    reason = values.error().message;
    return std::nullopt;
  }
  std::int64_t expected = 1;
  for (const auto dim : input.shape) {
    expected *= dim;
  }
  if (static_cast<std::int64_t>(values->size()) != expected) {
    reason = fmt::format("tensor '{}' of {} has {} elements, the definition's shape needs {}",
                         input.key, input.file, values->size(), expected);
    return std::nullopt;
  }
  return at::tensor(*values, at::TensorOptions().dtype(at::kDouble))
      .reshape(at::IntArrayRef(input.shape))
      .to(type);
}

} // namespace

TorchCapabilities torch_capabilities() {
  TorchCapabilities out;
  out.version = TORCH_VERSION;
  out.cuda = at::hasCUDA();
  out.float8 = k_has_float8;
  return out;
}

std::vector<PyObject*> make_inputs(const SmokePlan& plan, bool cuda, std::uint64_t seed,
                                   std::string& skip_reason) {
  if (cuda && !at::hasCUDA()) {
    skip_reason = "no CUDA device, or this libtorch was built without CUDA";
    return {};
  }
  const auto options = at::TensorOptions().device(cuda ? at::kCUDA : at::kCPU);
  // The generator lives on the CPU; tensors for CUDA are moved after filling.
  at::Generator generator = at::detail::createCPUGenerator(seed);
  std::vector<PyObject*> objects;
  const auto release = [&] {
    for (PyObject* object : objects) {
      Py_XDECREF(object);
    }
    objects.clear();
  };
  for (const auto& input : plan.inputs) {
    if (input.scalar) {
      PyObject* value = nullptr;
      if (input.dtype == DType::boolean) {
        value = PyBool_FromLong(input.scalar_value != 0 ? 1 : 0);
      } else if (input.dtype == DType::int64 || input.dtype == DType::int32 ||
                 input.dtype == DType::int16 || input.dtype == DType::int8) {
        value = PyLong_FromLongLong(static_cast<long long>(input.scalar_value));
      } else {
        value = PyFloat_FromDouble(input.scalar_value);
      }
      objects.push_back(value);
      continue;
    }
    std::string reason;
    const auto type = scalar_type(input.dtype, reason);
    if (!type) {
      skip_reason = fmt::format("input '{}': {}", input.name, reason);
      release();
      return {};
    }
    at::Tensor tensor;
    if (input.fill == InputFill::safetensors) {
      auto blob = read_blob(input, *type, reason);
      if (!blob) {
        skip_reason = fmt::format("input '{}': {}", input.name, reason);
        release();
        return {};
      }
      tensor = std::move(*blob);
    } else {
      tensor = fill(input, *type, at::TensorOptions().device(at::kCPU), generator);
    }
    if (cuda) {
      tensor = tensor.to(options.device());
    }
    objects.push_back(THPVariable_Wrap(tensor));
  }
  return objects;
}

} // namespace fib::worker
