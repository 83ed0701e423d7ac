#include "fib/collect/axes.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>

#include <fmt/format.h>

namespace fib {
namespace {

// Where a var axis's value came from first.
struct Seen {
  std::int64_t value = 0;
  std::string input;
  std::size_t dimension = 0;
};

Diagnostic axis_problem(std::string_view code, std::string_view axis, std::string message) {
  Diagnostic d = make_diagnostic(code, std::move(message));
  d.pointer = pointer_append("/axes", axis);
  return d;
}

} // namespace

Expected<std::map<std::string, std::int64_t>> infer_axes(const Definition& definition,
                                                         const std::vector<BoundShape>& bound) {
  std::map<std::string, Seen> seen;
  for (const BoundShape& tensor : bound) {
    const TensorSpec* spec = find_entry(definition.inputs, tensor.input);
    if (spec == nullptr || !spec->shape) {
      continue;
    }
    const std::vector<std::string>& declared = *spec->shape;
    if (declared.size() != tensor.shape.size()) {
      Diagnostic d = make_diagnostic(
          codes::k_collect_axis_mismatch,
          fmt::format("input \"{}\" has {} dimensions in the call, {} in the definition",
                      tensor.input, tensor.shape.size(), declared.size()));
      d.pointer = pointer_append(pointer_append("/inputs", tensor.input), "shape");
      return unexpected(std::move(d));
    }
    for (std::size_t i = 0; i < declared.size(); ++i) {
      const std::string& axis_name = declared[i];
      const std::int64_t actual = tensor.shape[i];
      const Axis* axis = find_entry(definition.axes, axis_name);
      if (axis == nullptr) {
        continue; // an undefined axis: validation reports the definition itself
      }
      if (axis->kind == AxisKind::const_axis) {
        if (actual != axis->value) {
          return unexpected(axis_problem(
              codes::k_collect_axis_mismatch, axis_name,
              fmt::format("const axis \"{}\" is {} in the definition, {} in the call (input "
                          "\"{}\", dimension {})",
                          axis_name, axis->value, actual, tensor.input, i)));
        }
        continue;
      }
      const auto [it, first] = seen.try_emplace(axis_name, Seen{actual, tensor.input, i});
      if (!first && it->second.value != actual) {
        return unexpected(axis_problem(
            codes::k_collect_axis_mismatch, axis_name,
            fmt::format("var axis \"{}\" is {} in input \"{}\" (dimension {}) and {} in input "
                        "\"{}\" (dimension {})",
                        axis_name, it->second.value, it->second.input, it->second.dimension, actual,
                        tensor.input, i)));
      }
    }
  }
  std::map<std::string, std::int64_t> out;
  for (const std::string& axis_name : definition.var_axes()) {
    const auto it = seen.find(axis_name);
    if (it == seen.end()) {
      return unexpected(
          axis_problem(codes::k_collect_axis_unbound, axis_name,
                       fmt::format("var axis \"{}\": no tensor of the call gives it", axis_name)));
    }
    out[axis_name] = it->second.value;
  }
  return out;
}

} // namespace fib
