// The dtype rules: N8 (float64 scalars); the pass over `unknown` inputs (A3b-2, N4, N5, N6, N7);
// N9 (non-numeric optional scalars); the pass over dtypes flashinfer-bench lacks (N10, N11).

#include "normalize/context.hpp"
#include "normalize/rules/rules.hpp"
#include "util/strings.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/dtype.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace fib {
namespace {

using detail::contains;
using detail::is_index_like;
using detail::is_optional;
using detail::is_scalar;
using detail::string_member;

constexpr std::string_view k_unknown = "unknown";

constexpr std::array<std::string_view, 6> k_plan_time_index_names = {
    "kv_indptr",       "kv_indices",       "qo_indptr",
    "paged_kv_indptr", "paged_kv_indices", "kv_last_page_len"};

// An `unknown` input of the pass below, and where its dtype is.
struct UnknownInput {
  const std::string& name;
  Json& spec;
  std::string pointer; // its /dtype
};

// --- A3b-2, N4, N5, N6, N7: each returns whether it settled the input ---

bool plan_time_index_dtype(NormalizeContext& context, UnknownInput input) {
  if (std::find(k_plan_time_index_names.begin(), k_plan_time_index_names.end(), input.name) ==
      k_plan_time_index_names.end()) {
    return false;
  }
  input.spec["dtype"] = "int32";
  context.applied(codes::k_normalize_a3b_2, input.pointer,
                  fmt::format("'{}': unknown → int32 (a plan-time index tensor)", input.name));
  return true;
}

bool dtype_from_same_named_output(NormalizeContext& context, UnknownInput input) {
  if (!context.outputs().contains(input.name)) {
    return false;
  }
  const std::string output_dtype = string_member(context.outputs()[input.name], "dtype");
  if (!parse_dtype(output_dtype)) {
    return false;
  }
  input.spec["dtype"] = output_dtype;
  context.applied(codes::k_normalize_n4, input.pointer,
                  fmt::format("'{}': unknown → {} (the dtype of the same-named output)", input.name,
                              output_dtype));
  return true;
}

bool index_like_dtype(NormalizeContext& context, UnknownInput input) {
  if (!is_index_like(input.name) || !context.enabled("N5")) {
    return false;
  }
  input.spec["dtype"] = "int32";
  context.add(codes::k_normalize_n5, FindingKind::applied, input.pointer,
              fmt::format("'{}': unknown → int32 (an index-like name; FlashInfer may also accept "
                          "int64)",
                          input.name));
  return true;
}

// Optional inputs to drop are collected in `to_drop` (dropped after the pass).
bool unknown_optional_input(NormalizeContext& context, UnknownInput input,
                            std::vector<std::string>& to_drop) {
  if (!is_optional(input.spec)) {
    return false;
  }
  if (context.existing_run != nullptr) {
    context.question(
        codes::k_normalize_n6, input.pointer,
        fmt::format("optional input '{}' has dtype unknown (absent at trace time), and the "
                    "reference's own `run` takes it by position",
                    input.name),
        context.decision_hint("input_dtypes", fmt::format("{{\"{}\": \"<dtype>\"}}", input.name)));
    return true;
  }
  if (context.enabled("N6")) {
    to_drop.push_back(input.name);
    return true;
  }
  context.question(
      codes::k_normalize_n6, input.pointer,
      fmt::format("optional input '{}' has dtype unknown (rule N6 is off)", input.name),
      context.decision_hint("drop_inputs", fmt::format("[\"{}\"]", input.name)));
  return true;
}

void unknown_required_input(NormalizeContext& context, UnknownInput input) {
  context.question(
      codes::k_normalize_n7, input.pointer,
      fmt::format("required input '{}' has dtype unknown; the dump cannot tell it", input.name),
      context.decision_hint("input_dtypes", fmt::format("{{\"{}\": \"<dtype>\"}}", input.name)));
}

void drop_unknown_optional_inputs(NormalizeContext& context,
                                  const std::vector<std::string>& to_drop) {
  for (const auto& input : to_drop) {
    context.inputs().erase(input);
    context.absent_inputs.insert(input);
    context.add(
        codes::k_normalize_n6, FindingKind::applied, pointer_append("/inputs", input),
        fmt::format("dropped optional input '{}' (dtype unknown: it was absent at trace time); "
                    "`run` passes {} to the entry",
                    input,
                    context.entry_requires(input) ? "None" : "nothing (its default applies)"));
  }
}

// --- N10, N11 ---

// A tensor of the pass over dtypes flashinfer-bench lacks.
struct UnsupportedTensor {
  std::string_view section; // "inputs" or "outputs"
  const std::string& name;
  Json& spec;
  std::string dtype;
  std::string pointer;     // its /dtype
  std::string name_lower;  // its name in lower case
  bool scale_like = false; // its name or description says it holds scales
};

bool packed_fp4(NormalizeContext& context, const UnsupportedTensor& tensor) {
  const std::string description = detail::ascii_lower(string_member(tensor.spec, "description"));
  if (tensor.dtype != "uint8" || tensor.scale_like ||
      (!contains(description, "fp4") && !contains(description, "e2m1")) ||
      !context.enabled("N10")) {
    return false;
  }
  tensor.spec["dtype"] = "float4_e2m1";
  context.add(codes::k_normalize_n10, FindingKind::applied, tensor.pointer,
              fmt::format("'{}': uint8 → float4_e2m1 (packed FP4 data, two values per byte; "
                          "the shape stays packed)",
                          tensor.name));
  return true;
}

bool index_like_uint32(NormalizeContext& context, const UnsupportedTensor& tensor) {
  if (tensor.dtype != "uint32" || !is_index_like(tensor.name) || !context.enabled("N11")) {
    return false;
  }
  tensor.spec["dtype"] = "int32";
  context.add(codes::k_normalize_n11, FindingKind::applied, tensor.pointer,
              fmt::format("'{}': uint32 → int32 (an index-like name)", tensor.name));
  return true;
}

void unsupported_dtype_question(NormalizeContext& context, const UnsupportedTensor& tensor) {
  std::string what;
  if (contains(tensor.name_lower, "workspace") || contains(tensor.name_lower, "semaphore")) {
    what = fmt::format("'{}' is kernel scratch ({}); dropping it is usually right", tensor.name,
                       tensor.dtype);
  } else if (tensor.dtype == "uint8" && tensor.scale_like) {
    what = fmt::format("'{}' holds scale bytes as uint8 (UE8M0 has no flashinfer-bench "
                       "dtype; E4M3 scales could be float8_e4m3fn)",
                       tensor.name);
  } else {
    what = fmt::format("'{}' has dtype {}, which flashinfer-bench does not accept", tensor.name,
                       tensor.dtype);
  }
  const bool input = tensor.section == "inputs";
  std::string hint = context.decision_hint(input ? "input_dtypes" : "output_dtypes",
                                           fmt::format("{{\"{}\": \"<dtype>\"}}", tensor.name));
  if (input) {
    hint += fmt::format(", or \"drop_inputs\": [\"{}\"]", tensor.name);
  }
  context.question(codes::k_normalize_n11, tensor.pointer, what, hint);
}

bool is_scale_like(const std::string& name_lower, const Json& spec) {
  const std::string description = detail::ascii_lower(string_member(spec, "description"));
  return contains(name_lower, "scale") || name_lower == "sf" || name_lower.ends_with("_sf") ||
         name_lower.starts_with("sf_") || contains(description, "scale");
}

} // namespace

// --- N8 ---

void apply_n8_float64_scalars(NormalizeContext& context) {
  for (auto& [input, spec] : context.inputs().items()) {
    if (is_scalar(spec) && string_member(spec, "dtype") == "float64") {
      spec["dtype"] = "float32";
      context.applied(codes::k_normalize_n8,
                      pointer_append(pointer_append("/inputs", input), "dtype"),
                      fmt::format("scalar '{}': float64 → float32", input));
    }
  }
}

// --- A3b-2, N4, N5, N6, N7 ---

// One pass, so that each input is settled by the first rule that fits it, in input order.
void apply_a3b_2_unknown_dtypes(NormalizeContext& context) {
  std::vector<std::string> to_drop;
  for (auto& [name, spec] : context.inputs().items()) {
    if (string_member(spec, "dtype") != k_unknown) {
      continue;
    }
    const UnknownInput input{name, spec, pointer_append(pointer_append("/inputs", name), "dtype")};
    if (plan_time_index_dtype(context, input) || dtype_from_same_named_output(context, input) ||
        index_like_dtype(context, input) || unknown_optional_input(context, input, to_drop)) {
      continue;
    }
    unknown_required_input(context, input);
  }
  drop_unknown_optional_inputs(context, to_drop);
}

// --- N9 ---

void apply_n9_non_numeric_scalars(NormalizeContext& context) {
  std::vector<std::string> to_drop;
  const PythonFunction* entry = context.entry;
  for (auto& [input, spec] : context.inputs().items()) {
    const std::string dtype = string_member(spec, "dtype");
    if (!is_scalar(spec) || (dtype != "string" && dtype != "dtype")) {
      continue;
    }
    const std::string pointer = pointer_append(pointer_append("/inputs", input), "dtype");
    const PythonParameter* parameter = context.entry_parameter(input);
    const bool droppable = is_optional(spec) && context.existing_run == nullptr &&
                           entry != nullptr &&
                           (parameter == nullptr ? !entry->has_var_keyword
                                                 : parameter->has_default == HasDefault::yes);
    if (droppable && context.enabled("N9")) {
      to_drop.push_back(input);
      continue;
    }
    context.question(
        codes::k_normalize_n9, pointer,
        fmt::format("scalar '{}' has dtype {}, which flashinfer-bench has no dtype for", input,
                    dtype),
        context.decision_hint("drop_inputs", fmt::format("[\"{}\"]", input)));
  }
  for (const auto& input : to_drop) {
    context.inputs().erase(input);
    context.add(codes::k_normalize_n9, FindingKind::applied, pointer_append("/inputs", input),
                fmt::format("dropped optional scalar '{}' (no flashinfer-bench dtype; the "
                            "reference's default applies)",
                            input));
  }
}

// --- N10, N11 ---

// One pass, so that each tensor is settled by N10 or N11, in tensor order.
void apply_n10_unsupported_dtypes(NormalizeContext& context) {
  for (const std::string_view section_name : {"inputs", "outputs"}) {
    Json& section = context.doc[std::string(section_name)];
    for (auto& [name, spec] : section.items()) {
      const std::string dtype = string_member(spec, "dtype");
      if (!spec.is_object() || parse_dtype(dtype) || dtype == k_unknown) {
        continue;
      }
      if (is_scalar(spec) && (dtype == "string" || dtype == "dtype") && section_name == "inputs") {
        continue; // N9's
      }
      UnsupportedTensor tensor{
          section_name,
          name,
          spec,
          dtype,
          pointer_append(pointer_append(std::string("/").append(section_name), name), "dtype"),
          detail::ascii_lower(name)};
      tensor.scale_like = is_scale_like(tensor.name_lower, spec);
      if (packed_fp4(context, tensor) || index_like_uint32(context, tensor)) {
        continue;
      }
      unsupported_dtype_question(context, tensor);
    }
  }
}

} // namespace fib
