#pragma once
// The controlled tag namespaces of definitions and the check of one tag against them
// (docs/tag.md has the table). Nothing here reads or writes files.

#include <fib/base/diagnostic.hpp>

#include <optional>
#include <span>
#include <string_view>

namespace fib {

// --- Interface ---

// One controlled namespace: the text before the first ':' of a tag, and what its value must be.
struct TagNamespace {
  std::string_view name;  // "model", "tp", …
  std::string_view value; // the rule, for docs and messages ("a positive decimal integer …")
  bool (*accepts)(std::string_view value);
};

// The controlled namespaces, sorted by name: backend, ep, fi_api, model, quantization, stage,
// status, tp.
std::span<const TagNamespace> tag_namespaces();

// The namespace entry called `name`, or nullptr.
const TagNamespace* find_tag_namespace(std::string_view name);

// The namespace of a tag (the text before its first ':'); "" for a bare flag (no ':').
std::string_view tag_namespace_of(std::string_view tag);

// Checks one tag as `fib tag add` (and `fib stage`) accept it. nullopt when it is well formed and
// its namespace is known (or it is a bare flag such as `fused`). Otherwise a diagnostic without
// file or pointer: `tag.malformed` (error) for an empty tag, whitespace or control characters,
// invalid UTF-8, an empty namespace or value, or a value a controlled namespace rejects;
// `tag.unknown-namespace` (warning) for a well-formed `ns:value` whose namespace is not in the
// table.
std::optional<Diagnostic> check_tag(std::string_view tag);

} // namespace fib
