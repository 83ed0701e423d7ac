#include "fib/exec/smoke.hpp"

#include <fib/base/codes.hpp>
#include <fib/constraint/constraint.hpp>

#include "smoke_inputs.hpp"
#include "util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <variant>

namespace fib {
namespace {

constexpr int k_max_repairs = 24;
constexpr std::int64_t k_max_axis_value = std::int64_t{1} << 24;

bool is_identifier(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Splits "a == b" at its only top-level "==" (not part of "<=", ">=", "!="); nullopt otherwise.
std::optional<std::pair<std::string, std::string>> split_equality(std::string_view text) {
  std::size_t found = std::string_view::npos;
  int depth = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (depth == 0 && c == '=' && text[i + 1] == '=' &&
               (i == 0 || (text[i - 1] != '<' && text[i - 1] != '>' && text[i - 1] != '!' &&
                           text[i - 1] != '='))) {
      if (found != std::string_view::npos) {
        return std::nullopt;
      }
      found = i;
      ++i;
    }
  }
  if (found == std::string_view::npos) {
    return std::nullopt;
  }
  return std::make_pair(std::string(detail::trim(text.substr(0, found))),
                        std::string(detail::trim(text.substr(found + 2))));
}

// `name[-1].item()` (the last element of a 1-D tensor) → name.
std::optional<std::string> last_item_of(std::string_view text) {
  static const std::regex pattern(
      R"(^([A-Za-z_][A-Za-z0-9_]*)\s*\[\s*-1\s*\]\s*\.\s*item\s*\(\s*\)$)");
  std::cmatch match;
  const std::string owned(text);
  if (std::regex_match(owned.c_str(), match, pattern)) {
    return match[1].str();
  }
  return std::nullopt;
}

// Identifiers that appear in `text` (outside string literals, which constraints do not use).
std::set<std::string> identifiers(std::string_view text) {
  std::set<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (std::isalpha(c) || c == '_') {
      const std::size_t start = i;
      while (i < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
        ++i;
      }
      const bool attribute = start > 0 && text[start - 1] == '.';
      if (!attribute) {
        out.insert(std::string(text.substr(start, i - start)));
      }
    } else if (std::isdigit(c)) {
      while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) ||
                                 text[i] == '.' || text[i] == '_')) {
        ++i;
      }
    } else {
      ++i;
    }
  }
  return out;
}

bool is_float_dtype(DType dtype) {
  return !detail::is_integer_dtype(dtype) && dtype != DType::boolean;
}

// `side == other` solved for a var axis on `side`: `axis` itself, `axis * k` / `k * axis`
// (axis = other // k), `axis + k`, `axis - k`. nullopt when `side` is none of these.
std::optional<std::pair<std::string, std::string>>
solve_for_axis(const std::string& side, const std::string& other,
               const std::set<std::string>& var) {
  if (is_identifier(side)) {
    return var.count(side) > 0 ? std::optional(std::make_pair(side, other)) : std::nullopt;
  }
  static const std::regex product(R"(^([A-Za-z_][A-Za-z0-9_]*)\s*\*\s*([0-9]+)$)");
  static const std::regex product_first(R"(^([0-9]+)\s*\*\s*([A-Za-z_][A-Za-z0-9_]*)$)");
  static const std::regex sum(R"(^([A-Za-z_][A-Za-z0-9_]*)\s*([+-])\s*([0-9]+)$)");
  std::smatch match;
  std::optional<std::pair<std::string, std::string>> solved;
  if (std::regex_match(side, match, product)) {
    solved = std::make_pair(match[1].str(), fmt::format("({}) // {}", other, match[2].str()));
  } else if (std::regex_match(side, match, product_first)) {
    solved = std::make_pair(match[2].str(), fmt::format("({}) // {}", other, match[1].str()));
  } else if (std::regex_match(side, match, sum)) {
    solved = std::make_pair(
        match[1].str(),
        fmt::format("({}) {} {}", other, match[2].str() == "+" ? "-" : "+", match[3].str()));
  }
  return solved && var.count(solved->first) > 0 ? solved : std::nullopt;
}

struct AxisEquations {
  // (var axis, expression over other axes) that set it, in constraint order.
  std::vector<std::pair<std::string, std::string>> definitions;
  // Constraints checked after the definitions applied (solved ones too, when solving divided).
  std::vector<std::string> checks;
};

// The constraints over axes only: equalities that define a var axis (either side, solved when
// the axis is multiplied by or offset by a constant), then `<x>_plus_1` var axes without one
// (x + 1), and the rest to check. Constraints that read inputs are left to the tensor plan.
AxisEquations axis_equations(const Definition& definition, const std::set<std::string>& inputs,
                             const std::set<std::string>& var) {
  AxisEquations out;
  const auto defined = [&](const std::string& axis) {
    return std::any_of(out.definitions.begin(), out.definitions.end(),
                       [&](const auto& d) { return d.first == axis; });
  };
  for (const auto& constraint : definition.constraints) {
    const auto names = identifiers(constraint);
    if (std::any_of(names.begin(), names.end(),
                    [&](const std::string& n) { return inputs.count(n) > 0; })) {
      continue; // decided when the tensors are planned
    }
    if (auto sides = split_equality(constraint)) {
      auto solved = solve_for_axis(sides->first, sides->second, var);
      if (!solved) {
        solved = solve_for_axis(sides->second, sides->first, var);
      }
      if (solved && !defined(solved->first)) {
        if (!is_identifier(sides->first) || !is_identifier(sides->second)) {
          out.checks.push_back(constraint);
        }
        out.definitions.push_back(std::move(*solved));
        continue;
      }
    }
    out.checks.push_back(constraint);
  }
  for (const auto& axis : var) {
    constexpr std::string_view k_suffix = "_plus_1";
    if (axis.size() > k_suffix.size() && axis.ends_with(k_suffix) && !defined(axis)) {
      const auto base = axis.substr(0, axis.size() - k_suffix.size());
      if (find_entry(definition.axes, base) != nullptr) {
        out.definitions.emplace_back(axis, base + " + 1");
      }
    }
  }
  return out;
}

// Values for the var axes that satisfy the axis-only constraints, or the failing constraint.
Expected<std::map<std::string, std::int64_t>> choose_axes(const Definition& definition,
                                                          const std::set<std::string>& inputs) {
  std::map<std::string, std::int64_t> axes = definition.const_axes();
  std::set<std::string> var;
  for (const auto& name : definition.var_axes()) {
    axes[name] = k_smoke_base_axis_value;
    var.insert(name);
  }
  const AxisEquations equations = axis_equations(definition, inputs, var);
  const auto& definitions = equations.definitions;
  const auto& checks = equations.checks;
  const auto apply_definitions = [&] {
    for (int round = 0; round < 4; ++round) {
      for (const auto& [axis, expression] : definitions) {
        ConstraintEnvironment env;
        env.axes = axes;
        if (auto value = evaluate_integer(expression, env); value && *value > 0) {
          axes[axis] = *value;
        }
      }
    }
  };
  apply_definitions();
  for (int attempt = 0; attempt <= k_max_repairs; ++attempt) {
    const std::string* failing = nullptr;
    for (const auto& check : checks) {
      ConstraintEnvironment env;
      env.axes = axes;
      if (evaluate_constraint(check, env).outcome == ConstraintOutcome::violated) {
        failing = &check;
        break;
      }
    }
    if (failing == nullptr) {
      for (const auto& [axis, expression] : definitions) {
        ConstraintEnvironment env;
        env.axes = axes;
        const auto value = evaluate_integer(expression, env);
        if (!value || *value <= 0) {
          Diagnostic d = make_diagnostic(
              codes::k_smoke_skipped,
              fmt::format("smoke run skipped: '{} == {}' gives no positive value for the axis",
                          axis, expression));
          return unexpected(std::move(d));
        }
      }
      return axes;
    }
    // Double the var axes the failing constraint reads (not the ones defined by equalities).
    bool grew = false;
    for (const auto& name : identifiers(*failing)) {
      const bool defined = std::any_of(definitions.begin(), definitions.end(),
                                       [&](const auto& d) { return d.first == name; });
      if (var.count(name) > 0 && !defined && axes[name] < k_max_axis_value) {
        axes[name] *= 2;
        grew = true;
      }
    }
    apply_definitions();
    if (!grew || attempt == k_max_repairs) {
      Diagnostic d = make_diagnostic(
          codes::k_smoke_skipped,
          fmt::format("smoke run skipped: no small axis values satisfy the constraint '{}'",
                      *failing));
      return unexpected(std::move(d));
    }
  }
  return axes;
}

} // namespace

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
  case DType::float32:
  case DType::int32:
    return 4;
  case DType::float16:
  case DType::bfloat16:
  case DType::int16:
    return 2;
  case DType::int64:
    return 8;
  case DType::float8_e4m3fn:
  case DType::float8_e5m2:
  case DType::float4_e2m1:
  case DType::int8:
  case DType::boolean:
    return 1;
  }
  return 4;
}

namespace {

// Data constraints: `axis == t[-1].item()` decides the last value of the index pointer t. The
// other constraints that read inputs go to `plan.unchecked_constraints`.
std::map<std::string, std::int64_t> pointer_totals(const Definition& definition,
                                                   const std::set<std::string>& input_names,
                                                   SmokePlan& plan) {
  std::map<std::string, std::int64_t> totals;
  for (const auto& constraint : definition.constraints) {
    const auto names = identifiers(constraint);
    if (std::none_of(names.begin(), names.end(),
                     [&](const std::string& n) { return input_names.count(n) > 0; })) {
      continue;
    }
    bool modelled = false;
    if (auto sides = split_equality(constraint)) {
      for (const auto& [axis_side, tensor_side] :
           {std::pair{sides->first, sides->second}, std::pair{sides->second, sides->first}}) {
        const auto tensor = last_item_of(tensor_side);
        if (tensor && is_identifier(axis_side) && plan.axes.count(axis_side) > 0) {
          totals[*tensor] = plan.axes[axis_side];
          modelled = true;
        }
      }
    }
    if (!modelled) {
      plan.unchecked_constraints.push_back(constraint);
    }
  }
  return totals;
}

// How an input is filled, from its dtype and name (the workload's own values come later): index
// tensors within the axis they index, index pointers up to the length of the array they span.
void choose_fill(PlannedInput& input, const Definition& definition,
                 const std::map<std::string, std::int64_t>& totals,
                 const std::map<std::string, std::int64_t>& axes) {
  if (input.scalar) {
    input.fill = InputFill::scalar;
    input.scalar_value = detail::scalar_value(definition, input.name, input.dtype, axes);
  } else if (input.dtype == DType::boolean) {
    input.fill = InputFill::random_bool;
  } else if (is_float_dtype(input.dtype)) {
    input.fill =
        detail::ascii_lower(input.name).find("prob") != std::string::npos && !input.shape.empty()
            ? InputFill::probabilities
            : InputFill::random_normal;
  } else {
    input.fill = detail::integer_fill(input.name);
    if (input.fill == InputFill::index_pointer && input.shape.size() != 1) {
      input.fill = InputFill::zeros;
    }
    if (input.fill == InputFill::index_pointer) {
      const auto it = totals.find(input.name);
      const std::int64_t segments = std::max<std::int64_t>(input.shape[0] - 1, 0);
      input.total = it != totals.end()
                        ? it->second
                        : detail::spanned_length(definition, input.name, axes).value_or(segments);
    }
    if (input.fill == InputFill::indices) {
      input.bound = detail::index_bound(input.name, axes);
    }
  }
}

// A scalar value or a safetensors blob the workload gives for the input.
void apply_workload_value(PlannedInput& input, const Workload& workload,
                          const std::filesystem::path& root) {
  const InputSpec* given = find_entry(workload.inputs, input.name);
  if (given == nullptr) {
    return;
  }
  if (const auto* scalar = std::get_if<ScalarInput>(given)) {
    input.fill = InputFill::scalar;
    std::visit([&](const auto& value) { input.scalar_value = static_cast<double>(value); },
               scalar->value);
  } else if (const auto* blob = std::get_if<SafetensorsInput>(given)) {
    input.fill = InputFill::safetensors;
    const std::filesystem::path path(blob->path);
    input.file = (path.is_absolute() ? path : root / path).string();
    input.key = blob->tensor_key;
  }
}

// An output with the shape its axes have where an input or a const axis determines them.
PlannedOutput plan_output(const Definition& definition, const std::string& name,
                          const TensorSpec& spec, SmokePlan& plan) {
  PlannedOutput output;
  output.name = name;
  output.dtype = spec.dtype;
  output.scalar = spec.is_scalar();
  std::uintmax_t elements = 1;
  bool known = true;
  if (spec.shape) {
    for (const auto& axis : *spec.shape) {
      output.axis_names.push_back(axis);
      const bool bound =
          std::any_of(definition.inputs.begin(), definition.inputs.end(), [&](const auto& input) {
            const auto& shape = input.second.shape;
            return shape && std::find(shape->begin(), shape->end(), axis) != shape->end();
          });
      const auto* declared = find_entry(definition.axes, axis);
      const bool is_const = declared != nullptr && declared->kind == AxisKind::const_axis;
      if ((bound || is_const) && plan.axes.count(axis) > 0) {
        output.shape.push_back(plan.axes.at(axis));
        elements *= static_cast<std::uintmax_t>(std::max<std::int64_t>(plan.axes.at(axis), 0));
      } else {
        output.shape.push_back(std::nullopt);
        known = false;
      }
    }
  }
  if (known && !output.scalar) {
    plan.output_bytes += elements * dtype_size(spec.dtype);
  }
  return output;
}

// The plan for given axis values; `workload` (may be null) supplies scalars and blobs.
SmokePlan plan_with_axes(const Definition& definition, std::map<std::string, std::int64_t> axes,
                         const Workload* workload, const std::filesystem::path& root) {
  std::set<std::string> input_names;
  for (const auto& [name, spec] : definition.inputs) {
    input_names.insert(name);
  }
  SmokePlan plan;
  plan.axes = std::move(axes);
  const auto totals = pointer_totals(definition, input_names, plan);
  for (const auto& [name, spec] : definition.inputs) {
    PlannedInput input;
    input.name = name;
    input.dtype = spec.dtype;
    input.scalar = spec.is_scalar();
    std::uintmax_t elements = 1;
    if (spec.shape) {
      for (const auto& axis : *spec.shape) {
        const auto value = plan.axes.count(axis) ? plan.axes.at(axis) : k_smoke_base_axis_value;
        input.shape.push_back(value);
        input.axis_names.push_back(axis);
        elements *= static_cast<std::uintmax_t>(std::max<std::int64_t>(value, 0));
      }
    }
    choose_fill(input, definition, totals, plan.axes);
    if (workload != nullptr) {
      apply_workload_value(input, *workload, root);
    }
    plan.input_bytes += input.scalar ? 0 : elements * dtype_size(spec.dtype);
    plan.inputs.push_back(std::move(input));
  }
  for (const auto& [name, spec] : definition.outputs) {
    plan.outputs.push_back(plan_output(definition, name, spec, plan));
  }
  return plan;
}

} // namespace

Expected<SmokePlan> plan_smoke_run(const Definition& definition) {
  std::set<std::string> input_names;
  for (const auto& [name, spec] : definition.inputs) {
    input_names.insert(name);
  }
  FIB_TRY_ASSIGN(auto axes, choose_axes(definition, input_names));
  return plan_with_axes(definition, std::move(axes), nullptr, {});
}

Expected<SmokePlan> plan_workload_run(const Definition& definition, const Workload& workload,
                                      const std::filesystem::path& dataset_root) {
  std::map<std::string, std::int64_t> axes = definition.const_axes();
  std::vector<std::string> missing;
  for (const auto& name : definition.var_axes()) {
    const auto* value = find_entry(workload.axes, name);
    if (value == nullptr) {
      missing.push_back(name);
    } else {
      axes[name] = *value;
    }
  }
  if (!missing.empty()) {
    std::string names;
    for (const auto& name : missing) {
      names += (names.empty() ? "" : ", ") + name;
    }
    return unexpected(make_diagnostic(
        codes::k_shape_missing_axes,
        fmt::format("workload {} gives no value for the var axes {}", workload.uuid, names)));
  }
  return plan_with_axes(definition, std::move(axes), &workload, dataset_root);
}

Json to_json(const SmokePlan& plan) {
  Json axes = Json::object();
  for (const auto& [name, value] : plan.axes) {
    axes[name] = value;
  }
  Json inputs = Json::array();
  for (const auto& input : plan.inputs) {
    inputs.push_back(Json{{"name", input.name},
                          {"shape", input.shape},
                          {"axis_names", input.axis_names},
                          {"scalar", input.scalar},
                          {"dtype", std::string(to_string(input.dtype))},
                          {"fill", std::string(to_string(input.fill))},
                          {"total", input.total},
                          {"bound", input.bound},
                          {"value", input.scalar_value},
                          {"file", input.file},
                          {"key", input.key}});
  }
  Json outputs = Json::array();
  for (const auto& output : plan.outputs) {
    Json shape = Json::array();
    for (const auto& dim : output.shape) {
      shape.push_back(dim ? Json(*dim) : Json(nullptr));
    }
    outputs.push_back(Json{{"name", output.name},
                           {"shape", shape},
                           {"axis_names", output.axis_names},
                           {"scalar", output.scalar},
                           {"dtype", std::string(to_string(output.dtype))}});
  }
  return Json{{"axes", axes},
              {"inputs", inputs},
              {"outputs", outputs},
              {"input_bytes", plan.input_bytes},
              {"output_bytes", plan.output_bytes}};
}

Expected<SmokePlan> smoke_plan_from_json(const Json& json) {
  const auto bad = [](std::string what) {
    return unexpected(
        make_diagnostic(codes::k_worker_protocol, fmt::format("malformed smoke plan: {}", what)));
  };
  try {
    SmokePlan plan;
    for (const auto& [name, value] : json.at("axes").items()) {
      plan.axes[name] = value.get<std::int64_t>();
    }
    for (const auto& item : json.at("inputs")) {
      PlannedInput input;
      input.name = item.at("name").get<std::string>();
      input.shape = item.at("shape").get<std::vector<std::int64_t>>();
      input.axis_names = item.at("axis_names").get<std::vector<std::string>>();
      input.scalar = item.at("scalar").get<bool>();
      const auto dtype = parse_dtype(item.at("dtype").get<std::string>());
      if (!dtype) {
        return bad("unknown dtype");
      }
      input.dtype = *dtype;
      const auto fill = parse_enum<InputFill>(item.at("fill").get<std::string>());
      if (!fill) {
        return bad("unknown fill");
      }
      input.fill = *fill;
      input.total = item.at("total").get<std::int64_t>();
      input.bound = item.at("bound").get<std::int64_t>();
      input.scalar_value = item.at("value").get<double>();
      input.file = item.value("file", "");
      input.key = item.value("key", "");
      plan.inputs.push_back(std::move(input));
    }
    for (const auto& item : json.at("outputs")) {
      PlannedOutput output;
      output.name = item.at("name").get<std::string>();
      for (const auto& dim : item.at("shape")) {
        output.shape.push_back(
            dim.is_null() ? std::nullopt : std::optional<std::int64_t>(dim.get<std::int64_t>()));
      }
      output.axis_names = item.at("axis_names").get<std::vector<std::string>>();
      output.scalar = item.at("scalar").get<bool>();
      const auto dtype = parse_dtype(item.at("dtype").get<std::string>());
      if (!dtype) {
        return bad("unknown dtype");
      }
      output.dtype = *dtype;
      plan.outputs.push_back(std::move(output));
    }
    plan.input_bytes = json.at("input_bytes").get<std::uintmax_t>();
    plan.output_bytes = json.at("output_bytes").get<std::uintmax_t>();
    return plan;
  } catch (const Json::exception& e) {
    return bad(e.what());
  }
}

} // namespace fib
