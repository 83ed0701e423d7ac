#include "smoke_inputs.hpp"

#include "util/strings.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>
#include <utility>

namespace fib::detail {
namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The first of `names` that is an axis with a positive value.
std::optional<std::int64_t> first_axis(const AxisValues& axes,
                                       std::initializer_list<std::string_view> names) {
  for (const auto name : names) {
    if (const auto it = axes.find(std::string(name)); it != axes.end() && it->second > 0) {
      return it->second;
    }
  }
  return std::nullopt;
}

// The value of axis `shape[0]` of input `name`, when it is a tensor with a known first axis.
std::optional<std::int64_t> first_axis_of(const Definition& definition, std::string_view name,
                                          const AxisValues& axes) {
  const auto* spec = find_entry(definition.inputs, name);
  if (spec == nullptr || !spec->shape || spec->shape->empty()) {
    return std::nullopt;
  }
  const auto it = axes.find(spec->shape->front());
  return it != axes.end() ? std::optional(it->second) : std::nullopt;
}

// The digits right after `name` in the definition's name ("block_size" in
// "gemm_fp4_N2048_K7168_block_size16" → 16).
std::optional<std::int64_t> value_in_definition_name(const std::string& definition_name,
                                                     const std::string& name) {
  const auto at = definition_name.find(name);
  if (name.empty() || at == std::string::npos) {
    return std::nullopt;
  }
  std::size_t end = at + name.size();
  std::int64_t value = 0;
  std::size_t digits = 0;
  while (end < definition_name.size() && digits < 9 &&
         std::isdigit(static_cast<unsigned char>(definition_name[end]))) {
    value = value * 10 + (definition_name[end] - '0');
    ++end;
    ++digits;
  }
  return digits > 0 && value > 0 ? std::optional(value) : std::nullopt;
}

} // namespace

bool is_integer_dtype(DType dtype) {
  return dtype == DType::int64 || dtype == DType::int32 || dtype == DType::int16 ||
         dtype == DType::int8;
}

InputFill integer_fill(const std::string& name) {
  const auto n = ascii_lower(name);
  if (contains(n, "indptr") || contains(n, "cu_seqlens")) {
    return InputFill::index_pointer;
  }
  if (contains(n, "indices") || contains(n, "index") || contains(n, "ids") ||
      contains(n, "table")) {
    return InputFill::indices;
  }
  if (contains(n, "len") || contains(n, "count")) {
    return InputFill::lengths;
  }
  return InputFill::zeros;
}

std::int64_t index_bound(const std::string& name, const AxisValues& axes) {
  const auto n = ascii_lower(name);
  std::optional<std::int64_t> bound;
  if (contains(n, "batch")) {
    bound = first_axis(axes, {"batch_size", "num_seqs", "num_requests"});
  } else if (contains(n, "expert")) {
    bound = first_axis(axes, {"num_experts", "num_local_experts", "local_num_experts"});
  } else if (contains(n, "token_id") || contains(n, "input_id")) {
    bound = first_axis(axes, {"vocab_size"});
  } else if (contains(n, "pos")) {
    bound = first_axis(axes, {"max_seq_len", "max_position_embeddings", "max_position"});
  } else if (contains(n, "state")) {
    bound = first_axis(axes, {"state_cache_size", "num_states"});
  }
  if (!bound) {
    bound = first_axis(axes, {"num_pages", "max_num_pages", "num_blocks", "total_num_pages"});
  }
  return bound.value_or(1);
}

std::optional<std::int64_t> spanned_length(const Definition& definition, const std::string& name,
                                           const AxisValues& axes) {
  const auto at = name.rfind("indptr");
  if (at != std::string::npos) {
    std::string prefix = name.substr(0, at); // "kv_" of "kv_indptr", "" of "indptr"
    if (auto length = first_axis_of(definition, prefix + "indices", axes)) {
      return length;
    }
    if (!prefix.empty() && prefix.back() == '_') {
      prefix.pop_back();
    }
    const std::vector<std::string_view> spans =
        prefix == "qo"   ? std::vector<std::string_view>{"q", "query"}
        : prefix == "kv" ? std::vector<std::string_view>{"k", "v", "key", "value"}
                         : std::vector<std::string_view>{};
    for (const auto span : spans) {
      if (auto length = first_axis_of(definition, span, axes)) {
        return length;
      }
    }
  }
  const auto* pointer = find_entry(definition.inputs, name);
  const std::string own_axis = pointer != nullptr && pointer->shape && !pointer->shape->empty()
                                   ? pointer->shape->front()
                                   : "";
  const auto var_axes = definition.var_axes();
  for (const auto& [input, spec] : definition.inputs) {
    if (is_integer_dtype(spec.dtype) || spec.dtype == DType::boolean || !spec.shape ||
        spec.shape->empty()) {
      continue;
    }
    const auto& axis = spec.shape->front();
    const bool var = std::find(var_axes.begin(), var_axes.end(), axis) != var_axes.end();
    if (var && axis != own_axis) {
      return first_axis_of(definition, input, axes);
    }
  }
  return std::nullopt;
}

double scalar_value(const Definition& definition, const std::string& name, DType dtype,
                    const AxisValues& axes) {
  if (dtype == DType::boolean) {
    return 0;
  }
  const auto n = ascii_lower(name);
  if (is_integer_dtype(dtype)) {
    if (const auto it = axes.find(name); it != axes.end() && it->second > 0) {
      return static_cast<double>(it->second);
    }
    if (n == "rotary_dim" || n == "rope_dim") {
      if (const auto head = first_axis(axes, {"rotary_dim", "rope_dim", "head_dim"})) {
        return static_cast<double>(*head);
      }
    }
    if (const auto named = value_in_definition_name(definition.name, name)) {
      return static_cast<double>(*named);
    }
    return contains(n, "offset") ? 0 : 1;
  }
  if (contains(n, "eps")) {
    return 1e-6;
  }
  if (contains(n, "theta")) {
    return 10000.0;
  }
  if (contains(n, "scale") || contains(n, "factor") || contains(n, "temperature")) {
    return 1.0;
  }
  if (n == "top_p" || n == "p") {
    return 0.9;
  }
  return 0.5;
}

} // namespace fib::detail
