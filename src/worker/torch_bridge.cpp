#include "torch_bridge.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/version.h>

#include <algorithm>
#include <optional>

namespace fib::worker::torch_bridge {
namespace {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
constexpr bool k_has_float8 = true;
#else
constexpr bool k_has_float8 = false;
#endif

// The ATen type of an element type; nullopt (with the reason) when this torch has none.
std::optional<at::ScalarType> scalar_type(const TensorRequest& request, std::string& reason) {
  switch (request.type) {
  case ElementType::float32:
    return at::kFloat;
  case ElementType::float16:
    return at::kHalf;
  case ElementType::bfloat16:
    return at::kBFloat16;
  case ElementType::int64:
    return at::kLong;
  case ElementType::int32:
    return at::kInt;
  case ElementType::int16:
    return at::kShort;
  case ElementType::int8:
    return at::kChar;
  case ElementType::boolean:
    return at::kBool;
  case ElementType::float8_e4m3fn:
  case ElementType::float8_e5m2:
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
    return request.type == ElementType::float8_e4m3fn ? at::ScalarType::Float8_e4m3fn
                                                      : at::ScalarType::Float8_e5m2;
#else
    reason = std::string("torch ") + TORCH_VERSION + " has no " + request.type_name +
             " (float8 needs torch 2.1 or later)";
    return std::nullopt;
#endif
  }
  reason = "unknown dtype";
  return std::nullopt;
}

at::Tensor fill(const TensorRequest& request, at::ScalarType type, at::Generator& generator) {
  const at::IntArrayRef shape(request.shape);
  const auto options = at::TensorOptions().device(at::kCPU);
  switch (request.fill) {
  case Fill::random_normal:
    // Generated in float32 (randn exists for every float type from it), then converted.
    return at::randn(shape, generator, options.dtype(at::kFloat)).to(type);
  case Fill::probabilities:
    return at::softmax(at::randn(shape, generator, options.dtype(at::kFloat)), -1).to(type);
  case Fill::random_bool:
    return at::randint(0, 2, shape, generator, options.dtype(at::kLong)).to(at::kBool);
  case Fill::index_pointer: {
    const std::int64_t n = request.shape.empty() ? 0 : request.shape[0];
    std::vector<std::int64_t> values(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
    const std::int64_t segments = std::max<std::int64_t>(n - 1, 1);
    for (std::int64_t i = 0; i < n; ++i) {
      values[static_cast<std::size_t>(i)] = (request.total * i) / segments;
    }
    return at::tensor(values, options.dtype(at::kLong)).to(type);
  }
  case Fill::indices:
    return at::randint(0, std::max<std::int64_t>(request.bound, 1), shape, generator,
                       options.dtype(at::kLong))
        .to(type);
  case Fill::lengths:
    return at::ones(shape, options.dtype(type));
  case Fill::values:
    return at::tensor(request.values, options.dtype(at::kDouble)).reshape(shape).to(type);
  case Fill::zeros:
    return at::zeros(shape, options.dtype(type));
  }
  return at::zeros(shape, options.dtype(type));
}

} // namespace

Capabilities capabilities() {
  Capabilities out;
  out.version = TORCH_VERSION;
  out.cuda = at::hasCUDA();
  out.float8 = k_has_float8;
  return out;
}

std::vector<PyObject*> make_tensors(const std::vector<TensorRequest>& requests, bool cuda,
                                    std::uint64_t seed, std::string& reason) {
  if (cuda && !at::hasCUDA()) {
    reason = "no CUDA device, or this libtorch was built without CUDA";
    return {};
  }
  // The generator lives on the CPU; tensors for CUDA are moved after filling.
  at::Generator generator = at::detail::createCPUGenerator(seed);
  std::vector<PyObject*> objects;
  for (const TensorRequest& request : requests) {
    const auto type = scalar_type(request, reason);
    if (!type) {
      for (PyObject* object : objects) {
        Py_XDECREF(object);
      }
      return {};
    }
    at::Tensor tensor = fill(request, *type, generator);
    if (cuda) {
      tensor = tensor.to(at::kCUDA);
    }
    objects.push_back(THPVariable_Wrap(tensor));
  }
  return objects;
}

} // namespace fib::worker::torch_bridge
