// The axis rules: N12 (shape names that are not axes), N13 (const axes without value), N14
// (output-only var axes), N15 (head-count plausibility).

#include "normalize/context.hpp"
#include "normalize/rules/rules.hpp"

#include <fib/base/codes.hpp>
#include <fib/constraint/constraint.hpp>

#include <fmt/format.h>

#include <limits>

namespace fib {
namespace {

using detail::is_integer_literal;
using detail::string_member;

// --- N12 ---

// The value of `X_div_Y` / `X_mul_Y` / an integer literal, when X and Y are known constants.
std::optional<std::int64_t> derived_value(const NormalizeContext& context,
                                          const std::string& name) {
  if (is_integer_literal(name)) {
    return std::stoll(name);
  }
  for (const std::string_view op : {"_div_", "_mul_"}) {
    const std::size_t at = name.rfind(op);
    if (at == std::string::npos || at == 0) {
      continue;
    }
    const auto left = context.const_value(std::string_view(name).substr(0, at));
    const auto right = context.const_value(std::string_view(name).substr(at + op.size()));
    if (!left || !right) {
      continue;
    }
    if (op == "_div_") {
      if (*right == 0 || *left % *right != 0) {
        return std::nullopt;
      }
      return *left / *right;
    }
    if (*right != 0 && *left > std::numeric_limits<std::int64_t>::max() / *right) {
      return std::nullopt;
    }
    return *left * *right;
  }
  return std::nullopt;
}

std::string literal_axis_name(std::int64_t value) {
  switch (value) {
  case 1:
    return "one";
  case 2:
    return "two";
  default:
    return fmt::format("const_{}", value);
  }
}

// Repairs the shape entry `shape[i]` (at `pointer`), which names no axis. `asked`: the shape names
// already asked about, each asked once.
void repair_shape_name(NormalizeContext& context, Json& shape, std::size_t i,
                       const std::string& pointer, std::set<std::string>& asked) {
  const std::string axis = shape[i].get<std::string>();
  const auto value = derived_value(context, axis);
  if (!value || !context.enabled("N12")) {
    if (asked.insert(axis).second) {
      context.question(codes::k_normalize_n12, pointer,
                       fmt::format("shape name '{}' is not an axis and cannot be derived from "
                                   "const axes",
                                   axis),
                       "add the axis by hand (const with its value, or var)");
    }
    return;
  }
  std::string new_axis = axis;
  if (is_integer_literal(axis)) {
    new_axis = literal_axis_name(*value);
    shape[i] = new_axis;
  }
  Json& axes = context.doc["axes"];
  if (axes.contains(new_axis)) {
    const auto existing = context.const_value(new_axis);
    if (existing != value) {
      context.question(codes::k_normalize_n12, pointer,
                       fmt::format("shape name '{}' would become axis '{}' = {}, but that axis "
                                   "exists with another definition",
                                   axis, new_axis, *value));
    }
    return;
  }
  axes[new_axis] = Json{{"type", "const"}, {"value", *value}};
  context.add(codes::k_normalize_n12, FindingKind::applied, pointer_append("/axes", new_axis),
              new_axis == axis
                  ? fmt::format("added const axis '{}' = {} (derived from its name)", axis, *value)
                  : fmt::format("shape entry \"{}\" renamed '{}', added as const axis = {}", axis,
                                new_axis, *value));
}

// --- N14 ---

std::vector<std::string> constraint_strings(const Json& doc) {
  std::vector<std::string> out;
  const auto constraints = doc.find("constraints");
  if (constraints != doc.end() && constraints->is_array()) {
    for (const auto& c : *constraints) {
      if (c.is_string()) {
        out.push_back(c.get<std::string>());
      }
    }
  }
  return out;
}

// A value of `axis` that satisfies `constraint` given the const axes, when the constraint is an
// equation linear in `axis` (checked by evaluating it with the solution).
std::optional<std::int64_t> solve_for(const std::string& constraint, const std::string& axis,
                                      const ConstraintEnvironment& consts) {
  for (std::size_t at = constraint.find("=="); at != std::string::npos;
       at = constraint.find("==", at + 2)) {
    if (at > 0 && (constraint[at - 1] == '<' || constraint[at - 1] == '>' ||
                   constraint[at - 1] == '!' || constraint[at - 1] == '=')) {
      continue;
    }
    const std::string left = constraint.substr(0, at);
    const std::string right = constraint.substr(at + 2);
    ConstraintEnvironment one = consts;
    ConstraintEnvironment two = consts;
    one.axes[axis] = 1;
    two.axes[axis] = 2;
    const auto l1 = evaluate_integer(left, one);
    const auto r1 = evaluate_integer(right, one);
    const auto l2 = evaluate_integer(left, two);
    const auto r2 = evaluate_integer(right, two);
    if (!l1 || !r1 || !l2 || !r2) {
      continue;
    }
    const std::int64_t f1 = *l1 - *r1;
    const std::int64_t slope = (*l2 - *r2) - f1;
    if (slope == 0 || f1 % slope != 0) {
      continue;
    }
    const std::int64_t value = 1 - f1 / slope;
    if (value < 0) {
      continue;
    }
    ConstraintEnvironment check = consts;
    check.axes[axis] = value;
    if (evaluate_constraint(constraint, check).outcome == ConstraintOutcome::satisfied) {
      return value;
    }
  }
  return std::nullopt;
}

std::set<std::string> output_shape_names(NormalizeContext& context) {
  std::set<std::string> names;
  for (auto& [output, spec] : context.outputs().items()) {
    for (auto& axis : detail::shape_names(spec)) {
      names.insert(std::move(axis));
    }
  }
  return names;
}

ConstraintEnvironment const_axes(Json& axes) {
  ConstraintEnvironment consts;
  for (auto& [axis, spec] : axes.items()) {
    if (string_member(spec, "type") == "const" && spec.contains("value") &&
        spec["value"].is_number_integer()) {
      consts.axes[axis] = spec["value"].get<std::int64_t>();
    }
  }
  return consts;
}

} // namespace

// --- N12 ---

void apply_n12_shape_names_not_axes(NormalizeContext& context) {
  if (!context.has_axes()) {
    return;
  }
  std::set<std::string> asked;
  for (const std::string_view section_name : {"inputs", "outputs"}) {
    Json& section = context.doc[std::string(section_name)];
    for (auto& [tensor, spec] : section.items()) {
      if (!spec.is_object() || !spec.contains("shape") || !spec["shape"].is_array()) {
        continue;
      }
      Json& shape = spec["shape"];
      for (std::size_t i = 0; i < shape.size(); ++i) {
        if (!shape[i].is_string() || context.doc["axes"].contains(shape[i].get<std::string>())) {
          continue;
        }
        const std::string pointer = pointer_append(
            pointer_append(pointer_append(std::string("/").append(section_name), tensor), "shape"),
            i);
        repair_shape_name(context, shape, i, pointer, asked);
      }
    }
  }
}

// --- N13 ---

void apply_n13_const_axes_without_value(NormalizeContext& context) {
  if (!context.has_axes()) {
    return;
  }
  const auto bound = context.input_shape_names();
  for (auto& [axis, spec] : context.doc["axes"].items()) {
    if (!spec.is_object() || string_member(spec, "type") != "const" || spec.contains("value")) {
      continue;
    }
    const std::string pointer = pointer_append("/axes", axis);
    if (bound.contains(axis) && context.enabled("N13")) {
      spec["type"] = "var";
      context.add(codes::k_normalize_n13, FindingKind::applied, pointer,
                  fmt::format("const axis '{}' has no value (the dumper could not extract it): "
                              "now var, bound from the inputs at run time",
                              axis));
      continue;
    }
    context.question(
        codes::k_normalize_n13, pointer,
        fmt::format("const axis '{}' has no value and no input binds it", axis),
        context.decision_hint("axis_values", fmt::format("{{\"{}\": <value>}}", axis)));
  }
}

// --- N14 ---

void apply_n14_output_only_var_axes(NormalizeContext& context) {
  if (!context.has_axes()) {
    return;
  }
  const auto bound = context.input_shape_names();
  const auto in_outputs = output_shape_names(context);
  Json& axes = context.doc["axes"];
  ConstraintEnvironment consts = const_axes(axes);
  const auto constraints = constraint_strings(context.doc);
  for (auto& [axis, spec] : axes.items()) {
    if (string_member(spec, "type") != "var" || bound.contains(axis) ||
        !in_outputs.contains(axis)) {
      continue;
    }
    const std::string pointer = pointer_append("/axes", axis);
    std::optional<std::int64_t> value;
    std::string from;
    for (const auto& constraint : constraints) {
      value = solve_for(constraint, axis, consts);
      if (value) {
        from = constraint;
        break;
      }
    }
    if (value && context.enabled("N14")) {
      spec["type"] = "const";
      spec["value"] = *value;
      consts.axes[axis] = *value;
      context.add(codes::k_normalize_n14, FindingKind::applied, pointer,
                  fmt::format("var axis '{}' is bound by no input; the constraint \"{}\" fixes "
                              "it: now const {}",
                              axis, from, *value));
      continue;
    }
    context.question(
        codes::k_normalize_n14, pointer,
        fmt::format("var axis '{}' appears only in outputs: no input binds it, so "
                    "outputs cannot be allocated",
                    axis),
        context.decision_hint("axis_values", fmt::format("{{\"{}\": <value>}}", axis)));
  }
}

// --- N15 ---

void apply_n15_head_counts(NormalizeContext& context) {
  const auto kv = context.const_value("num_kv_heads");
  if (!kv) {
    return;
  }
  for (const std::string_view q_name : {"num_qo_heads", "num_q_heads", "num_heads"}) {
    const auto q = context.const_value(q_name);
    if (!q || (*kv > 0 && *q % *kv == 0)) {
      continue;
    }
    context.question(codes::k_normalize_n15, pointer_append("/axes", "num_kv_heads"),
                     fmt::format("{} = {} is not a multiple of num_kv_heads = {}: the dumper "
                                 "probably read the const axes from the wrong cache layout (NHD "
                                 "vs HND)",
                                 q_name, *q, *kv),
                     "check the traced call's layout and fix the axis values (and the name) by "
                     "hand");
  }
}

} // namespace fib
