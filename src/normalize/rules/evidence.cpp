// Rules R2, R3 and R1: repairs proved by a Level-10 dump of the same pass (--evidence): head
// counts of GQA definitions the dumper misread, scalars it declared as 0-D tensors, and dtypes it
// could not see.

#include "normalize/context.hpp"
#include "normalize/rules/rules.hpp"

#include <fib/base/codes.hpp>
#include <fib/collect/evidence.hpp>

#include <fmt/format.h>

#include <map>
#include <set>

namespace fib {
namespace {

// The head counts a capture shows: q's second-to-last dimension, and the KV heads of the cache
// (paged: [pages, page_size, kv_heads, head_dim]) or of k (ragged: [tokens, kv_heads, head_dim]).
std::optional<std::pair<std::int64_t, std::int64_t>> captured_heads(const CapturedCall& call,
                                                                    bool paged) {
  const auto q = call.inputs.find("q");
  const auto k = call.inputs.find(paged ? "k_cache" : "k");
  if (q == call.inputs.end() || k == call.inputs.end() || q->second.shape.size() != 3) {
    return std::nullopt;
  }
  const std::vector<std::int64_t>& cache = k->second.shape;
  if (cache.size() != (paged ? 4u : 3u)) {
    return std::nullopt;
  }
  return std::pair{q->second.shape[1], cache[cache.size() - 2]};
}

// `name` with `_<prefix><from>` (followed by `_` or the end) replaced by `_<prefix><to>`.
std::string replace_token(std::string name, std::string_view prefix, std::int64_t from,
                          std::int64_t to) {
  const std::string old_token = fmt::format("_{}{}", prefix, from);
  for (std::size_t at = name.find(old_token); at != std::string::npos;
       at = name.find(old_token, at + 1)) {
    const std::size_t end = at + old_token.size();
    if (end == name.size() || name[end] == '_') {
      return name.replace(at, old_token.size(), fmt::format("_{}{}", prefix, to));
    }
  }
  return name;
}

} // namespace

void apply_r2_captured_head_counts(NormalizeContext& context) {
  const std::string op_type = detail::string_member(context.doc, "op_type");
  if (context.options.evidence == nullptr || (op_type != "gqa_paged" && op_type != "gqa_ragged")) {
    return;
  }
  const auto q = context.const_value("num_qo_heads");
  const auto kv = context.const_value("num_kv_heads");
  if (!q || !kv || (*kv > 0 && *kv <= *q && *q % *kv == 0)) {
    return; // plausible: nothing to repair
  }
  std::set<std::pair<std::int64_t, std::int64_t>> seen;
  std::string example;
  for (const CapturedCall& call :
       captured_calls(*context.options.evidence, context.doc, {"num_qo_heads", "num_kv_heads"})) {
    if (const auto heads = captured_heads(call, op_type == "gqa_paged")) {
      seen.insert(*heads);
      example = call.call;
    }
  }
  if (seen.size() != 1) {
    if (seen.size() > 1) {
      context.add(codes::k_normalize_r2, FindingKind::advice, "/axes/num_kv_heads",
                  fmt::format("the captured calls disagree on the head counts ({} pairs): not "
                              "repaired",
                              seen.size()));
    }
    return;
  }
  const auto [heads, kv_heads] = *seen.begin();
  if (kv_heads <= 0 || heads % kv_heads != 0) {
    return;
  }
  const std::string old_name = context.name();
  std::string new_name = replace_token(old_name, "h", *q, heads);
  new_name = replace_token(new_name, "kv", *kv, kv_heads);
  context.doc["axes"]["num_qo_heads"]["value"] = heads;
  context.doc["axes"]["num_kv_heads"]["value"] = kv_heads;
  if (new_name != old_name) {
    context.doc["name"] = new_name;
  }
  if (context.doc.contains("tags") && context.doc["tags"].is_array()) {
    for (Json& tag : context.doc["tags"]) {
      if (tag == "status:verified") {
        tag = "status:unverified"; // the dump's claim did not hold for these axes
      }
    }
  }
  const std::string record =
      fmt::format("Head counts repaired by fib normalize from captured shapes (q and the KV "
                  "cache of {}): num_qo_heads {} -> {}, num_kv_heads {} -> {}{}.",
                  example, *q, heads, *kv, kv_heads,
                  new_name != old_name ? fmt::format("; renamed from {}", old_name) : "");
  const std::string description = detail::string_member(context.doc, "description");
  context.doc["description"] = description.empty() ? record : description + " " + record;
  context.applied(codes::k_normalize_r2, "/axes/num_kv_heads",
                  fmt::format("num_qo_heads {} and num_kv_heads {} do not fit together; the "
                              "captured calls show {} and {}: set{}",
                              *q, *kv, heads, kv_heads,
                              new_name != old_name
                                  ? fmt::format(", and renamed {} -> {}", old_name, new_name)
                                  : ""));
}

namespace {

// The dtype a definition gives a scalar that the calls passed as these Python values: float32
// when any is a float (N8's choice for float scalars), bool when all are bools, else int32, or
// int64 when a value does not fit in 32 bits.
std::string_view scalar_dtype(const std::vector<Json>& values) {
  bool all_bool = true;
  bool fits_int32 = true;
  for (const Json& value : values) {
    if (value.is_number_float()) {
      return "float32";
    }
    all_bool = all_bool && value.is_boolean();
    if (value.is_number_integer()) {
      const double v = value.get<double>();
      fits_int32 = fits_int32 && v >= -2147483648.0 && v <= 2147483647.0;
    }
  }
  if (all_bool) {
    return "bool";
  }
  return fits_int32 ? "int32" : "int64";
}

} // namespace

void apply_r3_captured_scalars(NormalizeContext& context) {
  if (context.options.evidence == nullptr || !context.inputs().is_object()) {
    return;
  }
  std::vector<std::string> zero_dimensional;
  for (const auto& [name, spec] : context.inputs().items()) {
    if (spec.is_object() && spec.contains("shape") && spec["shape"].is_array() &&
        spec["shape"].empty()) {
      zero_dimensional.push_back(name);
    }
  }
  if (zero_dimensional.empty()) {
    return;
  }
  const std::vector<CapturedCall> calls =
      captured_calls(*context.options.evidence, context.doc, {});
  for (const std::string& input : zero_dimensional) {
    std::vector<Json> numbers;
    const CapturedCall* example = nullptr; // the first call that passed a number
    const CapturedCall* other = nullptr;   // the first call that passed a tensor or another value
    std::size_t others = 0;
    for (const CapturedCall& call : calls) {
      if (const auto it = call.values.find(input);
          it != call.values.end() && (it->second.is_number() || it->second.is_boolean())) {
        numbers.push_back(it->second);
        example = example != nullptr ? example : &call;
      } else if (it != call.values.end() || call.inputs.contains(input)) {
        ++others;
        other = other != nullptr ? other : &call;
      }
    }
    const std::string pointer = pointer_append(pointer_append("/inputs", input), "shape");
    if (numbers.empty()) {
      continue; // passed as a tensor, or never seen: the declared shape stands
    }
    if (other != nullptr) {
      context.add(codes::k_normalize_r3, FindingKind::advice, pointer,
                  fmt::format("{} is declared with shape [] and the captured calls disagree: {} "
                              "passed a Python number (first {}), {} a tensor or another value "
                              "(first {}); the shape is left as it is: make it null by hand if "
                              "it is a scalar",
                              input, numbers.size(), example->call, others, other->call));
      continue;
    }
    Json& spec = context.inputs()[input];
    spec["shape"] = nullptr;
    std::string dtype_change;
    if (detail::string_member(spec, "dtype") == "unknown") {
      spec["dtype"] = scalar_dtype(numbers);
      dtype_change = fmt::format(", and its dtype unknown -> {}", scalar_dtype(numbers));
    }
    context.applied(codes::k_normalize_r3, pointer,
                    fmt::format("{}: shape [] -> null (a scalar){}: every captured call passed a "
                                "Python {} ({} passed {})",
                                input, dtype_change,
                                numbers.front().is_boolean() ? "bool" : "number", example->call,
                                numbers.front().dump()));
  }
}

void apply_r1_captured_dtypes(NormalizeContext& context) {
  if (context.options.evidence == nullptr || !context.inputs().is_object()) {
    return;
  }
  std::vector<std::string> unknown;
  for (const auto& [name, spec] : context.inputs().items()) {
    if (spec.is_object() && detail::string_member(spec, "dtype") == "unknown") {
      unknown.push_back(name);
    }
  }
  if (unknown.empty()) {
    return;
  }
  const std::vector<CapturedCall> calls =
      captured_calls(*context.options.evidence, context.doc, {});
  for (const std::string& input : unknown) {
    std::map<std::string, std::string> dtypes; // dtype → a call that shows it
    for (const CapturedCall& call : calls) {
      if (const auto it = call.inputs.find(input); it != call.inputs.end()) {
        dtypes.emplace(it->second.dtype, call.call);
      }
    }
    const std::string pointer = pointer_append(pointer_append("/inputs", input), "dtype");
    if (dtypes.size() > 1) {
      context.add(codes::k_normalize_r1, FindingKind::advice, pointer,
                  fmt::format("the captured calls disagree on the dtype of {} ({} and {}): left "
                              "to the other rules",
                              input, dtypes.begin()->first, dtypes.rbegin()->first));
      continue;
    }
    if (dtypes.empty() || !parse_dtype(dtypes.begin()->first)) {
      continue;
    }
    context.inputs()[input]["dtype"] = dtypes.begin()->first;
    context.applied(codes::k_normalize_r1, pointer,
                    fmt::format("{}: unknown -> {}, the dtype of the tensor the call {} passed",
                                input, dtypes.begin()->first, dtypes.begin()->second));
  }
}

} // namespace fib
