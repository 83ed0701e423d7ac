#include "fib/collect/evidence.hpp"

#include <fib/collect/api_target.hpp>
#include <fib/collect/binding.hpp>
#include <fib/io/safetensors.hpp>
#include <fib/model/definition.hpp>

#include <optional>

namespace fib {
namespace {

// The parts of a raw document binding needs: names, op_type, axes with their values, input
// shapes (dtypes are not read: they may be `unknown`).
std::optional<Definition> binding_view(const Json& document) {
  if (!document.is_object()) {
    return std::nullopt;
  }
  const auto text = [&](const char* key) {
    const auto it = document.find(key);
    return it != document.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  Definition out;
  out.name = text("name");
  out.op_type = text("op_type");
  if (const auto tags = document.find("tags"); tags != document.end() && tags->is_array()) {
    for (const Json& tag : *tags) {
      if (tag.is_string()) {
        out.tags.push_back(tag.get<std::string>());
      }
    }
  }
  if (const auto axes = document.find("axes"); axes != document.end() && axes->is_object()) {
    for (const auto& [name, axis] : axes->items()) {
      Axis a;
      const bool is_const = axis.is_object() && axis.contains("type") && axis["type"] == "const";
      const bool has_value =
          is_const && axis.contains("value") && axis["value"].is_number_integer();
      a.kind = has_value ? AxisKind::const_axis : AxisKind::var_axis;
      a.value = has_value ? axis["value"].get<std::int64_t>() : 0;
      out.axes.emplace_back(name, a);
    }
  }
  const auto inputs = document.find("inputs");
  if (inputs == document.end() || !inputs->is_object()) {
    return std::nullopt;
  }
  for (const auto& [name, spec] : inputs->items()) {
    TensorSpec t;
    if (spec.is_object() && spec.contains("shape") && spec["shape"].is_array()) {
      std::vector<std::string> shape;
      for (const Json& dim : spec["shape"]) {
        shape.push_back(dim.is_string() ? dim.get<std::string>() : std::string());
      }
      t.shape = std::move(shape);
    }
    out.inputs.emplace_back(name, std::move(t));
  }
  return out;
}

// Whether every bound tensor has its declared rank and matches the checked const axes.
bool agrees(const Definition& definition, const CallBinding& binding,
            const std::set<std::string>& unchecked_axes) {
  for (const BoundTensor& tensor : binding.tensors) {
    const TensorSpec* spec = find_entry(definition.inputs, tensor.input);
    if (spec == nullptr || !spec->shape) {
      continue;
    }
    if (spec->shape->size() != tensor.shape.size()) {
      return false;
    }
    for (std::size_t i = 0; i < tensor.shape.size(); ++i) {
      const std::string& axis_name = (*spec->shape)[i];
      const Axis* axis = find_entry(definition.axes, axis_name);
      if (axis != nullptr && axis->kind == AxisKind::const_axis &&
          !unchecked_axes.contains(axis_name) && axis->value != tensor.shape[i]) {
        return false;
      }
    }
  }
  return true;
}

} // namespace

std::vector<CapturedCall> captured_calls(const Level10Dump& dump, const Json& document,
                                         const std::set<std::string>& unchecked_axes) {
  std::vector<CapturedCall> out;
  const std::optional<Definition> definition = binding_view(document);
  if (!definition) {
    return out;
  }
  const std::vector<ApiTarget> targets = api_targets_of(definition->tags);
  for (const DumpedCall& call : dump.calls) {
    for (const ApiTarget& target : targets) {
      if (!is_workload_call(target, call)) {
        continue;
      }
      auto binding = bind_call(*definition, call, paired_plan(target, dump.calls, call));
      if (binding && agrees(*definition, *binding, unchecked_axes)) {
        CapturedCall captured{call.name, {}, {}};
        for (const BoundTensor& tensor : binding->tensors) {
          const auto dtype = dtype_from_safetensors(tensor.entry.dtype);
          captured.inputs[tensor.input] = CapturedTensor{
              dtype ? std::string(to_string(*dtype)) : tensor.entry.dtype, tensor.shape};
        }
        for (const BoundValue& value : binding->values) {
          captured.values[value.input] = value.value;
        }
        out.push_back(std::move(captured));
      }
      break;
    }
  }
  return out;
}

} // namespace fib
