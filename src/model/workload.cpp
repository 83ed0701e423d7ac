#include "fib/model/workload.hpp"

#include "io/keys.hpp"
#include "io/schema_reader.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

namespace fib {
namespace {

using namespace detail;

std::optional<ScalarInput> parse_scalar_value(Reader& r, const Json& value,
                                              const std::string& pointer) {
  if (value.is_boolean()) {
    return ScalarInput{value.get<bool>()};
  }
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    return ScalarInput{value.get<std::int64_t>()};
  }
  if (value.is_number()) {
    return ScalarInput{value.get<double>()};
  }
  if (value.is_string()) {
    // Lax mode tries int, then float, then bool on a string, as the old tool's union does.
    if (auto as_int = [&]() -> std::optional<std::int64_t> {
          DiagnosticList probe_sink;
          Reader probe(r.document(), probe_sink);
          auto v = probe.integer(value, pointer, std::nullopt);
          return probe.error_count() == 0 ? v : std::nullopt;
        }()) {
      r.report(codes::k_schema_coerced, pointer,
               fmt::format("{} accepted as the integer {}", json_excerpt(value), *as_int),
               "write a plain number");
      return ScalarInput{*as_int};
    }
    DiagnosticList probe_sink;
    Reader probe(r.document(), probe_sink);
    if (auto as_double = probe.number(value, pointer)) {
      r.report(codes::k_schema_coerced, pointer,
               fmt::format("{} accepted as a number", json_excerpt(value)), "write a plain number");
      return ScalarInput{*as_double};
    }
    if (auto as_bool = probe.boolean(value, pointer)) {
      r.report(codes::k_schema_coerced, pointer,
               fmt::format("{} accepted as a boolean", json_excerpt(value)), "write true or false");
      return ScalarInput{*as_bool};
    }
  }
  return std::nullopt;
}

// An axis value Reader::integer takes as it is (with nothing to report): an integer >= 0 that
// fits in 64 signed bits.
std::optional<std::int64_t> plain_extent(const Json& value) {
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    return u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
               ? std::optional<std::int64_t>(static_cast<std::int64_t>(u))
               : std::nullopt;
  }
  if (value.is_number_integer()) {
    const auto i = value.get<std::int64_t>();
    return i >= 0 ? std::optional<std::int64_t>(i) : std::nullopt;
  }
  return std::nullopt;
}

// {"type": "random"} and nothing else: parse_input's answer is RandomInput, with nothing to report.
bool is_plain_random(const Json& value) {
  if (!value.is_object() || value.size() != 1) {
    return false;
  }
  const auto& [key, type] = *value.get_ref<const Json::object_t&>().begin();
  return key == k_key_type && type.is_string() && type.get_ref<const std::string&>() == "random";
}

InputSpec parse_input(Reader& r, const Json& value, const std::string& pointer) {
  if (!value.is_object()) {
    r.report(codes::k_schema_type, pointer,
             fmt::format("Input should be a valid dictionary or instance of an input spec "
                         "(random, scalar or safetensors), got {}",
                         json_type_name(value)));
    return RandomInput{};
  }
  const Json* type = r.member(value, pointer, k_key_type, Presence::optional);
  const auto read_scalar = [&](Reader& reader) -> std::optional<ScalarInput> {
    const Json* raw = reader.member(value, pointer, k_key_value, Presence::required);
    if (raw == nullptr) {
      return std::nullopt;
    }
    const std::string value_pointer = pointer_append(pointer, k_key_value);
    auto scalar = parse_scalar_value(reader, *raw, value_pointer);
    if (!scalar) {
      reader.report(codes::k_schema_type, value_pointer,
                    fmt::format("Input should be a valid integer, number or boolean, got {}",
                                json_excerpt(*raw)));
    }
    return scalar;
  };
  const auto read_safetensors = [&](Reader& reader) -> std::optional<SafetensorsInput> {
    SafetensorsInput input;
    const int before = reader.error_count();
    if (const Json* p = reader.member(value, pointer, k_key_path, Presence::required)) {
      input.path = reader.string(*p, pointer_append(pointer, k_key_path), EmptyString::forbidden)
                       .value_or("");
    }
    if (const Json* k = reader.member(value, pointer, k_key_tensor_key, Presence::required)) {
      input.tensor_key =
          reader.string(*k, pointer_append(pointer, k_key_tensor_key), EmptyString::forbidden)
              .value_or("");
    }
    if (reader.error_count() != before) {
      return std::nullopt;
    }
    return input;
  };

  if (type != nullptr) {
    const std::string name = type->is_string() ? type->get<std::string>() : std::string{};
    if (name == "random") {
      r.note_unknown_keys(value, pointer, {k_key_type});
      return RandomInput{};
    }
    if (name == "scalar") {
      r.note_unknown_keys(value, pointer, {k_key_type, k_key_value});
      auto scalar = read_scalar(r);
      return scalar ? InputSpec{*scalar} : InputSpec{ScalarInput{std::int64_t{0}}};
    }
    if (name == "safetensors") {
      r.note_unknown_keys(value, pointer, {k_key_type, k_key_path, k_key_tensor_key});
      auto input = read_safetensors(r);
      return input ? InputSpec{*input} : InputSpec{SafetensorsInput{}};
    }
    r.report(codes::k_schema_choice, pointer_append(pointer, k_key_type),
             fmt::format("Input should be 'random', 'scalar' or 'safetensors', got {}",
                         json_excerpt(*type)));
    return RandomInput{};
  }
  // No "type": the old tool's smart union picks the member that validates.
  if (value.contains(k_key_value)) {
    DiagnosticList probe_sink;
    Reader probe(r.document(), probe_sink);
    if (auto scalar = read_scalar(probe); scalar && probe.error_count() == 0) {
      for (const Diagnostic& d : probe_sink.items()) {
        r.report(d.code, d.pointer, d.message, d.hint);
      }
      r.note_unknown_keys(value, pointer, {k_key_value});
      return *scalar;
    }
  }
  if (value.contains(k_key_path) || value.contains(k_key_tensor_key)) {
    DiagnosticList probe_sink;
    Reader probe(r.document(), probe_sink);
    if (auto input = read_safetensors(probe)) {
      r.note_unknown_keys(value, pointer, {k_key_path, k_key_tensor_key});
      return *input;
    }
  }
  for (const auto& [key, item] : value.items()) {
    r.report(codes::k_schema_unknown_key, pointer_append(pointer, key),
             fmt::format("key '{}' is ignored: without \"type\" this input is read as random", key),
             "add \"type\" (random, scalar or safetensors) to say what is meant");
  }
  return RandomInput{};
}

} // namespace

std::string_view input_type_name(const InputSpec& input) {
  switch (input.index()) {
  case 0:
    return "random";
  case 1:
    return "scalar";
  default:
    return "safetensors";
  }
}

Workload parse_workload(const JsonDocument& document, const Json& object,
                        const std::string& pointer, DiagnosticSink& sink) {
  Reader r(document, sink);
  Workload workload;
  if (!r.expect_object(object, pointer)) {
    return workload;
  }
  // Pointers are built only where something is reported: the plain values (most of them) are
  // taken as they are.
  if (const Json* axes = r.member(object, pointer, k_key_axes, Presence::required)) {
    if (!axes->is_object()) {
      r.expect_object(*axes, pointer_append(pointer, k_key_axes));
    } else {
      for (const auto& [name, value] : axes->items()) {
        const auto v = plain_extent(value);
        workload.axes.emplace_back(
            name, v ? *v
                    : r.integer(value, pointer_append(pointer_append(pointer, k_key_axes), name), 0)
                          .value_or(0));
      }
    }
  }
  if (const Json* inputs = r.member(object, pointer, k_key_inputs, Presence::required)) {
    if (!inputs->is_object()) {
      r.expect_object(*inputs, pointer_append(pointer, k_key_inputs));
    } else {
      for (const auto& [name, value] : inputs->items()) {
        workload.inputs.emplace_back(
            name, is_plain_random(value)
                      ? InputSpec{RandomInput{}}
                      : parse_input(r, value,
                                    pointer_append(pointer_append(pointer, k_key_inputs), name)));
      }
    }
  }
  if (const Json* uuid = r.member(object, pointer, k_key_uuid, Presence::required)) {
    workload.uuid =
        r.string(*uuid, pointer_append(pointer, k_key_uuid), EmptyString::forbidden).value_or("");
  }
  r.note_unknown_keys(object, pointer, {k_key_axes, k_key_inputs, k_key_uuid});
  return workload;
}

Json to_json(const Workload& workload) {
  Json out = Json::object();
  Json axes = Json::object();
  for (const auto& [name, value] : workload.axes) {
    axes[name] = value;
  }
  out["axes"] = std::move(axes);
  Json inputs = Json::object();
  for (const auto& [name, input] : workload.inputs) {
    Json spec = Json::object();
    spec["type"] = std::string(input_type_name(input));
    if (const auto* scalar = std::get_if<ScalarInput>(&input)) {
      std::visit([&](const auto& v) { spec["value"] = v; }, scalar->value);
    } else if (const auto* blob = std::get_if<SafetensorsInput>(&input)) {
      spec["path"] = blob->path;
      spec["tensor_key"] = blob->tensor_key;
    }
    inputs[name] = std::move(spec);
  }
  out["inputs"] = std::move(inputs);
  out["uuid"] = workload.uuid;
  return out;
}

} // namespace fib
