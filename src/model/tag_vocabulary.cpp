// tag_vocabulary: the known tag namespaces, their values, and the checks of tags against them.

#include "fib/model/tag_vocabulary.hpp"

#include "util/strings.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/dtype.hpp>
#include <fib/io/json_io.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <string>

namespace fib {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || is_digit(c);
}

bool is_identifier_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool accepts_positive_integer(std::string_view value) {
  return !value.empty() && value.front() != '0' &&
         std::all_of(value.begin(), value.end(), is_digit);
}

// Quantization schemes, beside the dtypes fib knows. Where each comes from:
// - fp4, fp8, nvfp4, mxfp4, mxfp8, mxint4: FlashInfer's trace templates (gemm, moe, norm,
//   quantize, attention), in `quantization:` and `quantize:` tags;
// - float4_e2m1fn_mxfp4: the flashinfer-bench dataset (a MoE definition).
constexpr std::array<std::string_view, 7> k_quantization_schemes = {
    "float4_e2m1fn_mxfp4", "fp4", "fp8", "mxfp4", "mxfp8", "mxint4", "nvfp4"};

bool accepts_quantization(std::string_view value) {
  return parse_dtype(value).has_value() || listed(k_quantization_schemes, value);
}

// Stages: prefill, decode (templates and dataset), mtp (templates and dataset), indexer (the
// sparse-attention indexer: templates' msa module and the dataset), comm (templates' comm module)
// and pod (prefill and decode in one kernel: templates' attention module).
constexpr std::array<std::string_view, 6> k_stages = {"comm", "decode", "indexer",
                                                      "mtp",  "pod",    "prefill"};

bool accepts_stage(std::string_view value) {
  return listed(k_stages, value);
}

// Statuses: verified, experimental (FlashInfer's templates), unverified (the dataset), wip (a
// template whose reference is still to come), and draft, deprecated, reference (fib's own).
constexpr std::array<std::string_view, 7> k_statuses = {
    "deprecated", "draft", "experimental", "reference", "unverified", "verified", "wip"};

bool accepts_status(std::string_view value) {
  return listed(k_statuses, value);
}

// `[a-z0-9]+` parts joined by single '-', '.' or '_'.
bool accepts_model(std::string_view value) {
  bool part_open = false;
  for (const char c : value) {
    if (is_lower_alnum(c)) {
      part_open = true;
    } else if ((c == '-' || c == '.' || c == '_') && part_open) {
      part_open = false;
    } else {
      return false;
    }
  }
  return part_open;
}

// ASCII Python identifiers joined by single dots.
bool accepts_dotted_name(std::string_view value) {
  bool at_start = true;
  for (const char c : value) {
    if (at_start) {
      if (!is_identifier_start(c)) {
        return false;
      }
      at_start = false;
    } else if (c == '.') {
      at_start = true;
    } else if (!is_identifier_start(c) && !is_digit(c)) {
      return false;
    }
  }
  return !at_start;
}

// Whitespace and control characters are rejected for every tag before the namespace rules run.
bool accepts_any(std::string_view value) {
  return !value.empty();
}

using enum TagValueRule;
using enum TagCardinality;

constexpr std::string_view k_any_value = "any non-empty value";
constexpr std::string_view k_positive_integer =
    "a positive decimal integer without sign or leading zeros";
constexpr std::string_view k_quantization_rule =
    "a dtype fib knows (float8_e4m3fn, bfloat16, …) or a scheme: fp4, fp8, nvfp4, mxfp4, mxfp8, "
    "mxint4, float4_e2m1fn_mxfp4";

// Sorted by name. The descriptive namespaces (`any`) come from FlashInfer's trace templates
// (arch:sm90a, backend:trtllm, kv-cache:paged, layout:folded_scale, moe:sm90, sparse:topk) and
// from the flashinfer-bench dataset (gpu:sm100, layout:k-last); `quant:` is the dataset's shorter
// spelling of `quantization:`, and `quantize:` the templates' tag of kernels that quantize their
// output.
constexpr std::array k_namespaces = {
    TagNamespace{"arch", k_any_value, any, accepts_any, several},
    TagNamespace{"backend", k_any_value, any, accepts_any, several},
    TagNamespace{"ep", k_positive_integer, form, accepts_positive_integer, several},
    TagNamespace{"fi_api", "a dotted Python name (identifiers joined by '.')", form,
                 accepts_dotted_name, several},
    TagNamespace{"gpu", k_any_value, any, accepts_any, several},
    TagNamespace{"kv-cache", k_any_value, any, accepts_any, several},
    TagNamespace{"layout", k_any_value, any, accepts_any, several},
    TagNamespace{"model", "a lower-case slug: [a-z0-9]+ parts joined by single '-', '.' or '_'",
                 form, accepts_model, several},
    TagNamespace{"moe", k_any_value, any, accepts_any, several},
    TagNamespace{"quant", k_quantization_rule, vocabulary, accepts_quantization, several},
    TagNamespace{"quantization", k_quantization_rule, vocabulary, accepts_quantization, several},
    TagNamespace{"quantize", k_quantization_rule, vocabulary, accepts_quantization, several},
    TagNamespace{"sparse", k_any_value, any, accepts_any, several},
    TagNamespace{"stage", "one of comm, decode, indexer, mtp, pod, prefill", vocabulary,
                 accepts_stage, single},
    TagNamespace{"status",
                 "one of deprecated, draft, experimental, reference, unverified, verified, wip",
                 vocabulary, accepts_status, single},
    TagNamespace{"tp", k_positive_integer, form, accepts_positive_integer, several},
};

Diagnostic malformed(std::string_view tag, std::string reason) {
  return make_diagnostic(codes::k_tag_malformed,
                         fmt::format("tag '{}': {}", text_excerpt(tag), std::move(reason)));
}

// The syntax every tag must have, whatever its namespace; nullopt when it has it.
std::optional<Diagnostic> check_tag_syntax(std::string_view tag) {
  if (tag.empty()) {
    return malformed(tag, "a tag cannot be empty");
  }
  for (std::size_t i = 0; i < tag.size();) {
    const std::size_t length = detail::utf8_sequence_length(tag, i);
    if (length == 0) {
      return malformed(tag, "not valid UTF-8");
    }
    const auto c = static_cast<unsigned char>(tag[i]);
    if (length == 1 && (c <= 0x20 || c == 0x7F)) {
      return malformed(tag, "contains whitespace or a control character");
    }
    i += length;
  }
  const std::size_t colon = tag.find(':');
  if (colon == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view space = tag.substr(0, colon);
  const std::string_view value = tag.substr(colon + 1);
  if (space.empty()) {
    return malformed(tag, "the namespace before ':' is empty");
  }
  if (value.empty()) {
    return malformed(tag, fmt::format("the value after '{}:' is empty", space));
  }
  if (value == "*") {
    return malformed(tag,
                     fmt::format("'{}:*' is a pattern: only `fib tag remove` takes it", space));
  }
  return std::nullopt;
}

} // namespace

std::span<const TagNamespace> tag_namespaces() {
  return k_namespaces;
}

const TagNamespace* find_tag_namespace(std::string_view name) {
  for (const auto& entry : k_namespaces) {
    if (entry.name == name) {
      return &entry;
    }
  }
  return nullptr;
}

std::string_view tag_namespace_of(std::string_view tag) {
  const std::size_t colon = tag.find(':');
  return colon == std::string_view::npos ? std::string_view() : tag.substr(0, colon);
}

std::optional<Diagnostic> check_tag(std::string_view tag) {
  if (auto problem = check_tag_syntax(tag)) {
    return problem;
  }
  const std::size_t colon = tag.find(':');
  if (colon == std::string_view::npos) {
    return std::nullopt; // a bare flag such as `fused`
  }
  const std::string_view space = tag.substr(0, colon);
  const std::string_view value = tag.substr(colon + 1);
  if (const TagNamespace* known = find_tag_namespace(space)) {
    if (known->accepts(value)) {
      return std::nullopt;
    }
    if (known->rule == TagValueRule::form) {
      return malformed(tag, fmt::format("{}: takes {}", space, known->value));
    }
    Diagnostic d =
        make_diagnostic(codes::k_tag_unknown_value,
                        fmt::format("tag '{}': '{}' is not a known {}: value ({})",
                                    text_excerpt(tag), text_excerpt(value), space, known->value));
    d.hint = "kept as written; check the spelling (docs/tag.md lists the known values)";
    return d;
  }
  std::string names;
  for (const auto& entry : k_namespaces) {
    names += names.empty() ? "" : ", ";
    names += entry.name;
  }
  return make_diagnostic(
      codes::k_tag_unknown_namespace,
      fmt::format("tag '{}': namespace '{}' is not a controlled one ({}, or a bare flag)",
                  text_excerpt(tag), text_excerpt(space), names));
}

std::vector<Diagnostic> single_valued_conflicts(const std::vector<std::string>& tags) {
  std::vector<Diagnostic> out;
  std::map<std::string_view, std::size_t> first_of; // namespace → index of its first value
  for (std::size_t i = 0; i < tags.size(); ++i) {
    const std::string_view space = tag_namespace_of(tags[i]);
    const TagNamespace* known = find_tag_namespace(space);
    if (known == nullptr || known->cardinality != TagCardinality::single) {
      continue;
    }
    const auto [it, first] = first_of.emplace(space, i);
    if (first || tags[it->second] == tags[i]) {
      continue;
    }
    const std::string& earlier = tags[it->second];
    Diagnostic d = make_diagnostic(
        codes::k_tag_conflict,
        fmt::format("tag '{}' contradicts '{}' (/tags/{}): a definition has one {}: value",
                    text_excerpt(tags[i]), text_excerpt(earlier), it->second, space));
    d.pointer = pointer_append("/tags", i);
    d.hint = fmt::format("keep the one that is true: `fib tag add {}:VALUE` replaces every other "
                         "{}: value",
                         space, space);
    out.push_back(std::move(d));
  }
  return out;
}

} // namespace fib
