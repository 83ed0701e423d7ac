#include "fib/model/definition.hpp"

#include "io/keys.hpp"
#include "io/schema_reader.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/tag_vocabulary.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace fib {
namespace {

using namespace detail;

constexpr std::string_view k_allowed_dtypes_message =
    "Input should be 'float32', 'float16', 'bfloat16', 'float8_e4m3fn', 'float8_e5m2', "
    "'float4_e2m1', 'int64', 'int32', 'int16', 'int8' or 'bool'";

bool is_identifier(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front())) != 0) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
  });
}

Axis parse_axis(Reader& r, const Json& value, const std::string& pointer) {
  Axis axis;
  if (!r.expect_object(value, pointer)) {
    return axis;
  }
  if (const Json* description = r.member(value, pointer, k_key_description, Presence::optional)) {
    axis.description = r.nullable_string(*description, pointer_append(pointer, k_key_description));
  }
  const Json* type = r.member(value, pointer, k_key_type, Presence::optional);
  const Json* raw_value = r.member(value, pointer, k_key_value, Presence::optional);
  const std::string value_pointer = pointer_append(pointer, k_key_value);
  if (type == nullptr) {
    // Smart union: {"value": v} is a const axis if v is a valid value, otherwise the var member
    // (which ignores `value`) wins.
    if (raw_value != nullptr) {
      DiagnosticList probe_sink;
      Reader probe(r.document(), probe_sink);
      if (auto v = probe.integer(*raw_value, value_pointer, 0)) {
        axis.kind = AxisKind::const_axis;
        axis.value = *v;
        for (const Diagnostic& d : probe_sink.items()) {
          r.report(d.code, d.pointer, d.message, d.hint);
        }
      } else {
        r.report(codes::k_schema_unknown_key, value_pointer,
                 fmt::format("key 'value' is ignored: {} is not a valid axis value, so without "
                             "\"type\" the axis is read as a var axis",
                             json_excerpt(*raw_value)),
                 "add \"type\": \"const\" and a non-negative integer value");
      }
    }
    r.note_unknown_keys(value, pointer, {k_key_type, k_key_value, k_key_description});
    return axis;
  }
  const std::string type_pointer = pointer_append(pointer, k_key_type);
  if (!type->is_string() || (*type != "const" && *type != "var")) {
    r.report(codes::k_schema_choice, type_pointer,
             fmt::format("Input should be 'const' or 'var', got {}", json_excerpt(*type)));
    return axis;
  }
  if (*type == "const") {
    axis.kind = AxisKind::const_axis;
    if (raw_value == nullptr) {
      r.report(codes::k_schema_required, value_pointer, "Field required");
    } else if (auto v = r.integer(*raw_value, value_pointer, 0)) {
      axis.value = *v;
    }
    r.note_unknown_keys(value, pointer, {k_key_type, k_key_value, k_key_description});
  } else {
    r.note_unknown_keys(value, pointer, {k_key_type, k_key_description});
  }
  return axis;
}

std::string dtype_hint(std::string_view name) {
  if (name == "unknown") {
    return "the trace dumper writes \"unknown\" for tensors it did not see; `fib normalize` "
           "infers the dtype";
  }
  if (name == "uint8") {
    return "declare packed FP4 data as float4_e2m1 and other raw bytes as int8";
  }
  return "`fib normalize` maps common spellings (e.g. torch.float16) to these names";
}

TensorSpec parse_tensor(Reader& r, const Json& value, const std::string& pointer) {
  TensorSpec spec;
  if (!r.expect_object(value, pointer)) {
    return spec;
  }
  const std::string shape_pointer = pointer_append(pointer, k_key_shape);
  if (const Json* shape = r.member(value, pointer, k_key_shape, Presence::required)) {
    if (shape->is_null()) {
      spec.shape = std::nullopt;
    } else if (auto entries = r.string_list(*shape, shape_pointer, EmptyString::forbidden)) {
      spec.shape = std::move(*entries);
    } else {
      spec.shape = std::vector<std::string>{};
    }
  }
  if (const Json* dtype = r.member(value, pointer, k_key_dtype, Presence::required)) {
    const std::string dtype_pointer = pointer_append(pointer, k_key_dtype);
    if (!dtype->is_string()) {
      r.report(codes::k_dtype_invalid, dtype_pointer,
               fmt::format("{}, got {}", k_allowed_dtypes_message, json_excerpt(*dtype)));
    } else if (auto parsed = parse_dtype(dtype->get_ref<const std::string&>())) {
      spec.dtype = *parsed;
    } else {
      r.report(codes::k_dtype_invalid, dtype_pointer,
               fmt::format("{}, got '{}'", k_allowed_dtypes_message,
                           dtype->get_ref<const std::string&>()),
               dtype_hint(dtype->get_ref<const std::string&>()));
    }
  }
  if (const Json* description = r.member(value, pointer, k_key_description, Presence::optional)) {
    spec.description = r.nullable_string(*description, pointer_append(pointer, k_key_description));
  }
  r.note_unknown_keys(value, pointer, {k_key_shape, k_key_dtype, k_key_description});
  return spec;
}

template <class T, class ParseValue>
OrderedMap<T> parse_map(Reader& r, const Json& value, const std::string& pointer,
                        ParseValue parse_value) {
  OrderedMap<T> out;
  if (!r.expect_object(value, pointer)) {
    return out;
  }
  for (const auto& [key, item] : value.items()) {
    const std::string item_pointer = pointer_append(pointer, key);
    if (key.empty()) {
      r.report(codes::k_schema_empty, item_pointer, "String should have at least 1 character");
    }
    out.emplace_back(key, parse_value(item, item_pointer));
  }
  return out;
}

std::vector<std::string> parse_optional_list(Reader& r, const Json& object,
                                             const std::string& pointer, std::string_view key) {
  if (const Json* value = r.member(object, pointer, key, Presence::optional)) {
    if (auto items = r.string_list(*value, pointer_append(pointer, key), EmptyString::forbidden)) {
      return std::move(*items);
    }
  }
  return {};
}

void check_axis_references(Reader& r, const Definition& def, std::string_view section,
                           std::string_view label, const OrderedMap<TensorSpec>& tensors) {
  for (const auto& [name, spec] : tensors) {
    if (!spec.shape) {
      continue;
    }
    for (std::size_t i = 0; i < spec.shape->size(); ++i) {
      const std::string& entry = (*spec.shape)[i];
      if (entry.empty() || find_entry(def.axes, entry) != nullptr) {
        continue;
      }
      const std::string pointer = pointer_append(
          pointer_append(pointer_append(pointer_append("", section), name), k_key_shape), i);
      if (is_identifier(entry)) {
        r.report(codes::k_axis_undefined, pointer,
                 fmt::format("{} \"{}\" references undefined axis \"{}\"", label, name, entry),
                 "add it to `axes` as a const or var axis");
      } else {
        r.report(codes::k_shape_expression, pointer,
                 fmt::format("{} \"{}\" references undefined axis \"{}\": a shape entry must be "
                             "an axis name, not an expression",
                             label, name, entry),
                 "declare a new axis for this dimension and state the relation in `constraints`");
      }
    }
  }
}

bool shape_uses(const TensorSpec& spec, std::string_view axis) {
  return spec.shape && std::find(spec.shape->begin(), spec.shape->end(), axis) != spec.shape->end();
}

bool any_shape_uses(const OrderedMap<TensorSpec>& tensors, std::string_view axis) {
  return std::any_of(tensors.begin(), tensors.end(),
                     [&](const auto& entry) { return shape_uses(entry.second, axis); });
}

Expected<std::vector<ConcreteShape>> shapes_for(const Definition& def,
                                                const OrderedMap<TensorSpec>& tensors,
                                                const std::map<std::string, std::int64_t>& vars) {
  std::vector<ConcreteShape> shapes;
  shapes.reserve(tensors.size());
  for (const auto& [name, spec] : tensors) {
    if (!spec.shape) {
      shapes.emplace_back(std::nullopt);
      continue;
    }
    std::vector<std::int64_t> dims;
    for (const std::string& axis_name : *spec.shape) {
      const Axis* axis = find_entry(def.axes, axis_name);
      if (axis != nullptr && axis->kind == AxisKind::const_axis) {
        dims.push_back(axis->value);
        continue;
      }
      const auto it = vars.find(axis_name);
      if (it == vars.end()) {
        return unexpected(
            make_diagnostic(codes::k_shape_missing_axis_value,
                            fmt::format("Missing value for variable axis '{}'", axis_name)));
      }
      dims.push_back(it->second);
    }
    shapes.emplace_back(std::move(dims));
  }
  return shapes;
}

} // namespace

std::map<std::string, std::int64_t> Definition::const_axes() const {
  std::map<std::string, std::int64_t> out;
  for (const auto& [axis_name, axis] : axes) {
    if (axis.kind == AxisKind::const_axis) {
      out[axis_name] = axis.value;
    }
  }
  return out;
}

std::vector<std::string> Definition::var_axes() const {
  std::vector<std::string> out;
  for (const auto& [axis_name, axis] : axes) {
    if (axis.kind == AxisKind::var_axis) {
      out.push_back(axis_name);
    }
  }
  return out;
}

std::map<std::string, std::pair<std::string, std::size_t>> Definition::var_axes_bindings() const {
  std::map<std::string, std::pair<std::string, std::size_t>> out;
  for (const auto& [input, spec] : inputs) {
    if (!spec.shape) {
      continue;
    }
    for (std::size_t i = 0; i < spec.shape->size(); ++i) {
      const std::string& axis_name = (*spec.shape)[i];
      const Axis* axis = find_entry(axes, axis_name);
      if (axis != nullptr && axis->kind == AxisKind::var_axis && !out.contains(axis_name)) {
        out[axis_name] = {input, i};
      }
    }
  }
  return out;
}

Expected<std::vector<ConcreteShape>>
input_shapes(const Definition& definition, const std::map<std::string, std::int64_t>& var_values) {
  return shapes_for(definition, definition.inputs, var_values);
}

Expected<std::vector<ConcreteShape>>
output_shapes(const Definition& definition, const std::map<std::string, std::int64_t>& var_values) {
  return shapes_for(definition, definition.outputs, var_values);
}

Expected<std::map<std::string, std::int64_t>>
axes_values(const Definition& definition, const std::vector<ConcreteShape>& shapes) {
  std::map<std::string, std::int64_t> values;
  const std::size_t count = std::min(shapes.size(), definition.inputs.size());
  for (std::size_t i = 0; i < count; ++i) {
    const auto& [name, spec] = definition.inputs[i];
    if (!spec.shape || !shapes[i]) {
      continue;
    }
    const auto& actual = *shapes[i];
    if (actual.size() != spec.shape->size()) {
      return unexpected(make_diagnostic(
          codes::k_shape_rank_mismatch,
          fmt::format("Input '{}''s defined dimension is {} but the actual dimension is {}", name,
                      spec.shape->size(), actual.size())));
    }
    for (std::size_t d = 0; d < actual.size(); ++d) {
      const std::string& axis_name = (*spec.shape)[d];
      const Axis* axis = find_entry(definition.axes, axis_name);
      if (axis == nullptr || axis->kind != AxisKind::var_axis) {
        continue;
      }
      const auto [it, inserted] = values.emplace(axis_name, actual[d]);
      if (!inserted && it->second != actual[d]) {
        return unexpected(make_diagnostic(
            codes::k_shape_axis_conflict,
            fmt::format("Axis '{}' has different values for different input tensors: {} and {}",
                        axis_name, it->second, actual[d])));
      }
    }
  }
  std::vector<std::string> missing;
  for (const std::string& axis : definition.var_axes()) {
    if (!values.contains(axis)) {
      missing.push_back(fmt::format("'{}'", axis));
    }
  }
  if (!missing.empty()) {
    return unexpected(make_diagnostic(
        codes::k_shape_missing_axes,
        fmt::format("Missing values for variable axes: {{{}}}", fmt::join(missing, ", "))));
  }
  return values;
}

Expected<std::vector<Json>> merge_kwargs_to_args(const Definition& definition,
                                                 std::vector<Json> args,
                                                 const OrderedMap<Json>& kwargs) {
  std::vector<std::string> parameters;
  for (const auto& entry : definition.inputs) {
    parameters.push_back(entry.first);
  }
  for (const auto& entry : definition.outputs) {
    parameters.push_back(entry.first);
  }
  if (args.size() > parameters.size()) {
    return unexpected(
        make_diagnostic(codes::k_call_too_many_arguments,
                        fmt::format("Too many positional arguments: got {}, expected at most {}",
                                    args.size(), parameters.size())));
  }
  if (kwargs.empty()) {
    return args;
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (find_entry(kwargs, parameters[i]) != nullptr) {
      return unexpected(
          make_diagnostic(codes::k_call_duplicate_argument,
                          fmt::format("Got multiple values for argument '{}'", parameters[i])));
    }
  }
  for (std::size_t i = args.size(); i < parameters.size(); ++i) {
    const Json* value = find_entry(kwargs, parameters[i]);
    if (value == nullptr) {
      break;
    }
    args.push_back(*value);
  }
  return args;
}

Definition parse_definition(const JsonDocument& document, DiagnosticSink& sink) {
  Reader r(document, sink);
  Definition def;
  const Json& root = document.root;
  if (!root.is_object()) {
    r.report(codes::k_schema_type, "",
             fmt::format("Input should be a valid dictionary or instance of Definition, got {}",
                         json_type_name(root)));
    return def;
  }
  const std::string top;
  if (const Json* v = r.member(root, top, k_key_name, Presence::required)) {
    def.name = r.string(*v, "/name", EmptyString::forbidden).value_or("");
  }
  const Json* op_type = r.member(root, top, k_key_op_type, Presence::optional);
  if (op_type != nullptr) {
    def.op_type = r.string(*op_type, "/op_type", EmptyString::forbidden).value_or("");
  } else {
    const bool old_schema = root.contains(k_key_type);
    r.report(codes::k_schema_required, "/op_type", "Field required",
             old_schema ? "this file uses the old schema's \"type\"; rename it to \"op_type\""
                        : std::string{});
  }
  if (const Json* v = r.member(root, top, k_key_axes, Presence::required)) {
    def.axes = parse_map<Axis>(r, *v, "/axes", [&](const Json& item, const std::string& pointer) {
      return parse_axis(r, item, pointer);
    });
  }
  const auto tensor_parser = [&](const Json& item, const std::string& pointer) {
    return parse_tensor(r, item, pointer);
  };
  if (const Json* v = r.member(root, top, k_key_inputs, Presence::required)) {
    def.inputs = parse_map<TensorSpec>(r, *v, "/inputs", tensor_parser);
  }
  if (const Json* v = r.member(root, top, k_key_outputs, Presence::required)) {
    def.outputs = parse_map<TensorSpec>(r, *v, "/outputs", tensor_parser);
  }
  if (const Json* v = r.member(root, top, k_key_reference, Presence::required)) {
    def.reference = r.string(*v, "/reference", EmptyString::forbidden).value_or("");
  }
  def.tags = parse_optional_list(r, root, top, k_key_tags);
  if (const Json* v = r.member(root, top, k_key_description, Presence::optional)) {
    def.description = r.nullable_string(*v, "/description");
  }
  def.constraints = parse_optional_list(r, root, top, k_key_constraints);
  r.note_unknown_keys(root, top,
                      {k_key_name, k_key_op_type, k_key_axes, k_key_inputs, k_key_outputs,
                       k_key_reference, k_key_tags, k_key_description, k_key_constraints});

  // Model-level checks of the old tool that need no Python (names, then axis references).
  for (const auto& [name, spec] : def.outputs) {
    if (find_entry(def.inputs, name) != nullptr) {
      r.report(codes::k_io_overlap, pointer_append("/outputs", name),
               "Input and output names must not overlap",
               fmt::format("'{}' is both an input and an output; an in-place tensor is listed "
                           "once, as an input",
                           name));
    }
  }
  check_axis_references(r, def, k_key_inputs, "Input", def.inputs);
  check_axis_references(r, def, k_key_outputs, "Output", def.outputs);
  return def;
}

void lint_definition(const Definition& def, const JsonDocument& document, DiagnosticSink& sink) {
  Reader r(document, sink);
  if (!def.description || def.description->empty()) {
    r.report(codes::k_description_missing, "/description", "missing description");
  }
  for (const auto& [name, axis] : def.axes) {
    if (!axis.description || axis.description->empty()) {
      r.report(codes::k_description_missing,
               pointer_append(pointer_append("/axes", name), k_key_description),
               fmt::format("missing description: axes.{}", name));
    }
  }
  for (const auto& [section, tensors] :
       {std::pair{k_key_inputs, &def.inputs}, std::pair{k_key_outputs, &def.outputs}}) {
    for (const auto& [name, spec] : *tensors) {
      if (!spec.description || spec.description->empty()) {
        r.report(
            codes::k_description_missing,
            pointer_append(pointer_append(pointer_append("", section), name), k_key_description),
            fmt::format("missing description: {}.{}", section, name));
      }
    }
  }
  for (const auto& [name, axis] : def.axes) {
    const std::string pointer = pointer_append("/axes", name);
    const bool in_inputs = any_shape_uses(def.inputs, name);
    const bool in_outputs = any_shape_uses(def.outputs, name);
    if (!in_inputs && !in_outputs) {
      r.report(codes::k_axis_unused, pointer,
               fmt::format("axis '{}' is used by no input or output shape", name),
               "remove it, or use it in the shape it describes");
    } else if (axis.kind == AxisKind::var_axis && !in_inputs) {
      r.report(
          codes::k_axis_unbound, pointer,
          fmt::format("var axis '{}' appears in no input shape, so no input binds its value", name),
          "every workload must then give it explicitly; if it follows from other axes, make "
          "it const or state it in `constraints`");
    }
  }
  // What `fib tag add` would refuse (tag_vocabulary.hpp); bare flags (`fused`, `moe`) and
  // namespaces fib does not know (`kv-cache:paged` before the table had it) are the community's.
  for (std::size_t i = 0; i < def.tags.size(); ++i) {
    const auto problem = check_tag(def.tags[i]);
    if (problem && problem->code == codes::k_tag_malformed) {
      r.report(codes::k_tag_format, pointer_append("/tags", i), problem->message,
               "a tag is `namespace:value` or a bare flag, without whitespace (docs/tag.md has "
               "the namespaces and their values)");
    }
  }
  for (Diagnostic& conflict : single_valued_conflicts(def.tags)) {
    conflict.file = document.file;
    conflict.line = document.line_of(conflict.pointer);
    sink.report(std::move(conflict));
  }
}

Json to_json(const Definition& def) {
  Json out = Json::object();
  out["name"] = def.name;
  out["op_type"] = def.op_type;
  if (def.description) {
    out["description"] = *def.description;
  }
  if (!def.tags.empty()) {
    out["tags"] = def.tags;
  }
  Json axes = Json::object();
  for (const auto& [name, axis] : def.axes) {
    Json a = Json::object();
    if (axis.kind == AxisKind::const_axis) {
      a["type"] = "const";
      a["value"] = axis.value;
    } else {
      a["type"] = "var";
    }
    if (axis.description) {
      a["description"] = *axis.description;
    }
    axes[name] = std::move(a);
  }
  out["axes"] = std::move(axes);
  if (!def.constraints.empty()) {
    out["constraints"] = def.constraints;
  }
  for (const auto& [key, tensors] :
       {std::pair{"inputs", &def.inputs}, std::pair{"outputs", &def.outputs}}) {
    Json section = Json::object();
    for (const auto& [name, spec] : *tensors) {
      Json t = Json::object();
      t["shape"] = spec.shape ? Json(*spec.shape) : Json(nullptr);
      t["dtype"] = std::string(to_string(spec.dtype));
      if (spec.description) {
        t["description"] = *spec.description;
      }
      section[name] = std::move(t);
    }
    out[key] = std::move(section);
  }
  out["reference"] = def.reference;
  return out;
}

} // namespace fib
