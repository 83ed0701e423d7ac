// namespaces: the controlled tag namespaces and the check of one tag against them.

#include "fib/tag/namespaces.hpp"

#include "util/strings.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/dtype.hpp>
#include <fib/io/json_io.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
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

bool accepts_positive_integer(std::string_view value) {
  return !value.empty() && value.front() != '0' &&
         std::all_of(value.begin(), value.end(), is_digit);
}

bool accepts_dtype(std::string_view value) {
  return parse_dtype(value).has_value();
}

bool accepts_stage(std::string_view value) {
  return value == "prefill" || value == "decode" || value == "mtp";
}

bool accepts_status(std::string_view value) {
  constexpr std::array<std::string_view, 6> k_statuses = {
      "verified", "unverified", "draft", "deprecated", "experimental", "reference"};
  return std::find(k_statuses.begin(), k_statuses.end(), value) != k_statuses.end();
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

constexpr std::array k_namespaces = {
    TagNamespace{"backend", "any non-empty value (the dumper's backend tags)", accepts_any},
    TagNamespace{"ep", "a positive decimal integer without sign or leading zeros",
                 accepts_positive_integer},
    TagNamespace{"fi_api", "a dotted Python name (identifiers joined by '.')", accepts_dotted_name},
    TagNamespace{"model", "a lower-case slug: [a-z0-9]+ parts joined by single '-', '.' or '_'",
                 accepts_model},
    TagNamespace{"quantization", "a dtype fib knows (float32, bfloat16, float8_e4m3fn, …)",
                 accepts_dtype},
    TagNamespace{"stage", "one of prefill, decode, mtp", accepts_stage},
    TagNamespace{"status",
                 "one of verified, unverified, draft, deprecated, experimental, reference",
                 accepts_status},
    TagNamespace{"tp", "a positive decimal integer without sign or leading zeros",
                 accepts_positive_integer},
};

Diagnostic malformed(std::string_view tag, std::string reason, std::string hint = {}) {
  Diagnostic d = make_diagnostic(codes::k_tag_malformed,
                                 fmt::format("tag '{}': {}", text_excerpt(tag), std::move(reason)));
  d.hint = std::move(hint);
  return d;
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
    return std::nullopt; // a bare flag such as `fused`
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
  if (const TagNamespace* known = find_tag_namespace(space)) {
    if (!known->accepts(value)) {
      return malformed(tag, fmt::format("{}: takes {}", space, known->value));
    }
    return std::nullopt;
  }
  std::string names;
  for (const auto& entry : k_namespaces) {
    names += names.empty() ? "" : ", ";
    names += entry.name;
  }
  Diagnostic d = make_diagnostic(
      codes::k_tag_unknown_namespace,
      fmt::format("tag '{}': namespace '{}' is not a controlled one ({}, or a bare flag)",
                  text_excerpt(tag), text_excerpt(space), names));
  return d;
}

} // namespace fib
