#include "fib/collect/candidate.hpp"

#include <fib/base/codes.hpp>
#include <fib/collect/axes.hpp>
#include <fib/io/safetensors.hpp>
#include <fib/util/sha256.hpp>

#include <fmt/format.h>

#include <cmath>

namespace fib {
namespace {

bool is_random_dtype(DType dtype) {
  switch (dtype) {
  case DType::float32:
  case DType::float16:
  case DType::bfloat16:
  case DType::float8_e4m3fn:
  case DType::float8_e5m2:
  case DType::float4_e2m1:
    return true;
  case DType::int64:
  case DType::int32:
  case DType::int16:
  case DType::int8:
  case DType::boolean:
    return false;
  }
  return false;
}

Diagnostic input_problem(std::string_view code, const DumpedCall& run, std::string_view input,
                         std::string message) {
  // The pointer is the definition's: refuse() (collect.cpp) names the call and the file.
  (void)run;
  Diagnostic d = make_diagnostic(code, std::move(message));
  d.pointer = pointer_append("/inputs", input);
  return d;
}

std::string role_name(CallRole role) {
  return role == CallRole::run ? "call" : "plan";
}

// The JSON a scalar input holds (as a workload line writes it).
Json scalar_json(const ScalarInput& scalar) {
  return std::visit([](const auto& v) { return Json(v); }, scalar.value);
}

// A recorded value as the scalar of an input of `dtype`: numbers and bools only.
std::optional<ScalarInput> as_scalar(const Json& recorded, DType dtype) {
  const Json* value = &recorded;
  if (recorded.is_object()) {
    // {"type": "enum", "name": …, "value": 1}: the value is what the kernel receives.
    const auto type = recorded.find("type");
    const auto inner = recorded.find("value");
    if (type == recorded.end() || *type != "enum" || inner == recorded.end()) {
      return std::nullopt;
    }
    value = &*inner;
  }
  if (value->is_boolean()) {
    return ScalarInput{value->get<bool>()};
  }
  if (!value->is_number()) {
    return std::nullopt;
  }
  const bool wants_float = is_random_dtype(dtype);
  if (value->is_number_float() || wants_float) {
    return ScalarInput{value->get<double>()};
  }
  if (value->is_number_unsigned() && value->get<std::uint64_t>() > INT64_MAX) {
    return std::nullopt;
  }
  return ScalarInput{value->get<std::int64_t>()};
}

const ScalarAnswer* answer_for(const CandidateOptions& options, const Definition& definition,
                               std::string_view input) {
  for (const ScalarAnswer& answer : options.scalars) {
    if ((answer.definition.empty() || answer.definition == definition.name) &&
        answer.input == input) {
      return &answer;
    }
  }
  return nullptr;
}

// A scalar input from a one-element tensor the call passed for it.
Expected<ScalarInput> scalar_from_tensor(const DumpedCall& run, const BoundTensor& tensor,
                                         DType dtype) {
  if (tensor.entry.element_count() != 1) {
    return unexpected(
        input_problem(codes::k_collect_scalar_invalid, run, tensor.input,
                      fmt::format("scalar \"{}\" is a tensor of shape {} in the {}", tensor.input,
                                  Json(tensor.entry.shape).dump(), role_name(tensor.role))));
  }
  auto header = read_safetensors_header(tensor.file);
  if (!header) {
    return unexpected(
        input_problem(codes::k_collect_tensor_file, run, tensor.input, header.error().message));
  }
  auto values = read_tensor_values(tensor.file, *header, tensor.key, 1);
  if (!values) {
    return unexpected(
        input_problem(codes::k_collect_tensor_file, run, tensor.input, values.error().message));
  }
  const double value = values->front();
  if (!std::isfinite(value)) {
    return unexpected(input_problem(
        codes::k_collect_scalar_invalid, run, tensor.input,
        fmt::format("scalar \"{}\" is {} in the {}", tensor.input, value, role_name(tensor.role))));
  }
  if (is_random_dtype(dtype)) {
    return ScalarInput{value};
  }
  if (value != std::trunc(value) || std::abs(value) >= 9.2e18) {
    return unexpected(
        input_problem(codes::k_collect_scalar_invalid, run, tensor.input,
                      fmt::format("scalar \"{}\" is {} in the {}, not a value of {}", tensor.input,
                                  value, role_name(tensor.role), to_string(dtype))));
  }
  if (dtype == DType::boolean) {
    return ScalarInput{value != 0};
  }
  return ScalarInput{static_cast<std::int64_t>(value)};
}

Expected<ScalarInput> scalar_input(const Definition& definition, const DumpedCall& run,
                                   const CallBinding& binding, std::string_view input,
                                   const TensorSpec& spec, const CandidateOptions& options) {
  if (const BoundValue* value = binding.value(input)) {
    if (auto scalar = as_scalar(value->value, spec.dtype)) {
      return *scalar;
    }
    return unexpected(input_problem(
        codes::k_collect_scalar_invalid, run, input,
        fmt::format("scalar \"{}\" is {} in the {} (`{}`), not a number or a bool", input,
                    text_excerpt(value->value.dump()), role_name(value->role), value->key)));
  }
  if (const BoundTensor* tensor = binding.tensor(input)) {
    return scalar_from_tensor(run, *tensor, spec.dtype);
  }
  if (const ScalarAnswer* answer = answer_for(options, definition, input)) {
    if (auto scalar = as_scalar(answer->value, spec.dtype)) {
      return *scalar;
    }
  }
  return unexpected(input_problem(
      codes::k_collect_scalar_missing, run, input,
      fmt::format("scalar \"{}\" was not passed to the call{}, so its value is not in the dump: "
                  "give it with --scalar {}=VALUE (or --scalar {}:{}=VALUE for this definition "
                  "only)",
                  input, run.function_name.ends_with(".run") ? " or its plan" : "", input,
                  definition.name, input)));
}

std::string dtype_text(const std::string& safetensors_dtype) {
  const auto dtype = dtype_from_safetensors(safetensors_dtype);
  return dtype ? std::string(to_string(*dtype)) : safetensors_dtype;
}

// The blob source of a bound tensor: its bytes read and digested.
Expected<BlobTensorSource> blob_source(const DumpedCall& run, const BoundTensor& tensor,
                                       const CandidateOptions& options) {
  BlobTensorSource blob{tensor.input, tensor.file, tensor.key, tensor.entry.dtype,
                        tensor.shape, 0,           {}};
  const std::uint64_t total = tensor.entry.data_end - tensor.entry.data_begin;
  blob.bytes = total;
  if (tensor.used_elements) {
    const std::uint64_t count = tensor.entry.element_count();
    blob.bytes = count == 0 ? 0 : total / count * static_cast<std::uint64_t>(*tensor.used_elements);
  }
  if (blob.bytes > options.max_blob_tensor_bytes) {
    return unexpected(input_problem(codes::k_collect_blob_too_large, run, tensor.input, {}));
  }
  auto header = read_safetensors_header(tensor.file);
  if (!header) {
    return unexpected(
        input_problem(codes::k_collect_tensor_file, run, tensor.input, header.error().message));
  }
  auto bytes = read_tensor_bytes(tensor.file, *header, tensor.key, blob.bytes,
                                 options.max_blob_tensor_bytes);
  if (!bytes) {
    return unexpected(
        input_problem(codes::k_collect_tensor_file, run, tensor.input, bytes.error().message));
  }
  blob.sha256 = to_hex(sha256(*bytes));
  return blob;
}

std::string blob_content(const BlobTensorSource& blob) {
  return fmt::format("blob:{}:{}:{}", blob.dtype, Json(blob.shape).dump(), blob.sha256);
}

} // namespace

Expected<ScalarAnswer> parse_scalar_answer(const std::string& text) {
  const auto equals = text.find('=');
  const auto refuse = [&](std::string why) {
    return unexpected(make_diagnostic(
        codes::k_usage, fmt::format("--scalar {}: {} (the form is NAME=VALUE or "
                                    "DEFINITION:NAME=VALUE, VALUE a number, true or false)",
                                    text, why)));
  };
  if (equals == std::string::npos || equals == 0) {
    return refuse("no NAME=");
  }
  ScalarAnswer answer;
  std::string name = text.substr(0, equals);
  if (const auto colon = name.find(':'); colon != std::string::npos) {
    answer.definition = name.substr(0, colon);
    name = name.substr(colon + 1);
  }
  answer.input = name;
  const std::string value = text.substr(equals + 1);
  answer.value = Json::parse(value, nullptr, false);
  if (answer.input.empty() || !(answer.value.is_number() || answer.value.is_boolean())) {
    return refuse(answer.input.empty() ? "no input name" : "the value is not a number or a bool");
  }
  return answer;
}

std::string workload_fingerprint(const OrderedMap<std::int64_t>& axes,
                                 const std::vector<InputContent>& inputs) {
  Sha256 digest;
  for (const auto& [name, value] : axes) {
    digest.update(fmt::format("axis {}={}\n", name, value));
  }
  for (const InputContent& input : inputs) {
    digest.update(fmt::format("input {}={}\n", input.input, input.text));
  }
  return to_hex(digest.finish());
}

Expected<Candidate> build_candidate(const Definition& definition, const DumpedCall& run,
                                    const DumpedCall* plan, const CandidateOptions& options) {
  FIB_TRY_ASSIGN(const CallBinding binding, bind_call(definition, run, plan));
  Candidate candidate;
  candidate.call = run.name;
  candidate.plan = plan != nullptr ? plan->name : std::string();
  const bool keeps_every_tensor = definition.op_type == "sampling";
  std::vector<InputContent> contents;
  std::vector<BoundShape> shapes;
  for (const auto& [input, spec] : definition.inputs) {
    if (spec.is_scalar()) {
      FIB_TRY_ASSIGN(ScalarInput scalar,
                     scalar_input(definition, run, binding, input, spec, options));
      contents.push_back({input, "scalar:" + scalar_json(scalar).dump()});
      candidate.inputs.emplace_back(input, std::move(scalar));
      continue;
    }
    const BoundTensor* tensor = binding.tensor(input);
    if (tensor != nullptr) {
      const auto actual = dtype_from_safetensors(tensor->entry.dtype);
      // float4 travels packed two to a byte (torch's float4_e2m1fn_x2, saved as U8).
      const bool packed_fp4 = spec.dtype == DType::float4_e2m1 && tensor->entry.dtype == "U8";
      if (!packed_fp4 && (!actual || *actual != spec.dtype)) {
        return unexpected(input_problem(
            codes::k_collect_dtype_mismatch, run, input,
            fmt::format("input \"{}\" is {} in the {} (`{}`), {} in the definition", input,
                        dtype_text(tensor->entry.dtype), role_name(tensor->role), tensor->key,
                        to_string(spec.dtype))));
      }
      shapes.push_back(BoundShape{input, tensor->shape});
    }
    if (is_random_dtype(spec.dtype) && !keeps_every_tensor) {
      contents.push_back({input, "random"});
      candidate.inputs.emplace_back(input, RandomInput{});
      continue;
    }
    if (tensor == nullptr) {
      const bool wrapper_run = run.function_name.ends_with(".run") || run.function_name == "run";
      return unexpected(input_problem(
          codes::k_collect_input_missing, run, input,
          fmt::format("input \"{}\" ({}) must be stored from the call, but neither the call{} "
                      "holds it{}",
                      input, to_string(spec.dtype), plan != nullptr ? " nor its plan" : "",
                      wrapper_run && plan == nullptr
                          ? ": no plan of the same object was dumped before this run (dump "
                            "the wrapper's plan calls too)"
                          : "")));
    }
    auto blob = blob_source(run, *tensor, options);
    if (!blob && blob.error().code == codes::k_collect_blob_too_large) {
      Diagnostic note = blob.error();
      note.message = fmt::format("input \"{}\" ({} bytes) is larger than the blob limit ({} "
                                 "bytes): the workload generates it (`random`) instead",
                                 input, tensor->entry.data_end - tensor->entry.data_begin,
                                 options.max_blob_tensor_bytes);
      candidate.notes.push_back(std::move(note));
      contents.push_back({input, "random"});
      candidate.inputs.emplace_back(input, RandomInput{});
      continue;
    }
    if (!blob) {
      return unexpected(std::move(blob.error()));
    }
    contents.push_back({input, blob_content(*blob)});
    candidate.inputs.emplace_back(input, SafetensorsInput{std::string(), input});
    candidate.blobs.push_back(std::move(*blob));
  }
  FIB_TRY_ASSIGN(const auto axes, infer_axes(definition, shapes));
  for (const std::string& axis : definition.var_axes()) {
    candidate.axes.emplace_back(axis, axes.at(axis));
  }
  candidate.fingerprint = workload_fingerprint(candidate.axes, contents);
  return candidate;
}

} // namespace fib
