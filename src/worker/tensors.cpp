#include <Python.h> // first, as Python.h asks

#include "tensors.hpp"

#include "torch_bridge.hpp"

#include <fib/io/safetensors.hpp>

#include <fmt/format.h>

namespace fib::worker {
namespace {

// The bridge's element type of a dtype; nullopt (with the reason) when fib makes no tensors of it.
std::optional<torch_bridge::ElementType> element_type(DType dtype, std::string& reason) {
  using torch_bridge::ElementType;
  switch (dtype) {
  case DType::float32:
    return ElementType::float32;
  case DType::float16:
    return ElementType::float16;
  case DType::bfloat16:
    return ElementType::bfloat16;
  case DType::float8_e4m3fn:
  case DType::float8_e5m2: {
    const torch_bridge::Capabilities torch = torch_bridge::capabilities();
    if (!torch.float8) {
      reason = fmt::format("torch {} has no {} (float8 needs torch 2.1 or later)", torch.version,
                           to_string(dtype));
      return std::nullopt;
    }
    return dtype == DType::float8_e4m3fn ? ElementType::float8_e4m3fn : ElementType::float8_e5m2;
  }
  case DType::int64:
    return ElementType::int64;
  case DType::int32:
    return ElementType::int32;
  case DType::int16:
    return ElementType::int16;
  case DType::int8:
    return ElementType::int8;
  case DType::boolean:
    return ElementType::boolean;
  case DType::float4_e2m1:
    reason = "fib does not synthesize packed float4_e2m1 inputs";
    return std::nullopt;
  }
  reason = "unknown dtype";
  return std::nullopt;
}

torch_bridge::Fill bridge_fill(InputFill fill) {
  using torch_bridge::Fill;
  switch (fill) {
  case InputFill::random_normal:
    return Fill::random_normal;
  case InputFill::probabilities:
    return Fill::probabilities;
  case InputFill::random_bool:
    return Fill::random_bool;
  case InputFill::index_pointer:
    return Fill::index_pointer;
  case InputFill::indices:
    return Fill::indices;
  case InputFill::lengths:
    return Fill::lengths;
  case InputFill::safetensors:
    return Fill::values;
  case InputFill::zeros:
  case InputFill::scalar:
    return Fill::zeros;
  }
  return Fill::zeros;
}

// A safetensors input's values, as many as the declared shape needs; "" reason when it worked.
std::optional<std::vector<double>> read_blob(const PlannedInput& input, std::string& reason) {
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
  return std::move(*values);
}

PyObject* scalar_object(const PlannedInput& input) {
  if (input.dtype == DType::boolean) {
    return PyBool_FromLong(input.scalar_value != 0 ? 1 : 0);
  }
  if (input.dtype == DType::int64 || input.dtype == DType::int32 || input.dtype == DType::int16 ||
      input.dtype == DType::int8) {
    return PyLong_FromLongLong(static_cast<long long>(input.scalar_value));
  }
  return PyFloat_FromDouble(input.scalar_value);
}

} // namespace

TorchCapabilities torch_capabilities() {
  const torch_bridge::Capabilities capabilities = torch_bridge::capabilities();
  return {capabilities.version, capabilities.cuda, capabilities.float8};
}

std::vector<PyObject*> make_inputs(const SmokePlan& plan, bool cuda, std::uint64_t seed,
                                   std::string& skip_reason) {
  if (cuda && !torch_bridge::capabilities().cuda) {
    skip_reason = "no CUDA device, or this libtorch was built without CUDA";
    return {};
  }
  std::vector<torch_bridge::TensorRequest> requests;
  for (const auto& input : plan.inputs) {
    if (input.scalar) {
      continue;
    }
    std::string reason;
    const auto type = element_type(input.dtype, reason);
    std::optional<std::vector<double>> values;
    if (type && input.fill == InputFill::safetensors) {
      values = read_blob(input, reason);
    }
    if (!type || (input.fill == InputFill::safetensors && !values)) {
      skip_reason = fmt::format("input '{}': {}", input.name, reason);
      return {};
    }
    requests.push_back({input.shape, *type, std::string(to_string(input.dtype)),
                        bridge_fill(input.fill), input.total, input.bound,
                        values ? std::move(*values) : std::vector<double>{}});
  }
  std::string reason;
  std::vector<PyObject*> tensors = torch_bridge::make_tensors(requests, cuda, seed, reason);
  if (tensors.size() != requests.size()) {
    skip_reason = reason;
    return {};
  }
  std::vector<PyObject*> objects;
  std::size_t next_tensor = 0;
  for (const auto& input : plan.inputs) {
    objects.push_back(input.scalar ? scalar_object(input) : tensors[next_tensor++]);
  }
  return objects;
}

} // namespace fib::worker
