#pragma once
// The tag vocabulary of definitions: the known namespaces, the values each takes, which of them
// hold one value per definition, and the checks of tags against them (docs/tag.md has the table).
// It lives in the model layer because both `fib validate` and `fib tag` judge tags by it. Nothing
// here reads or writes files.

#include <fib/base/diagnostic.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// How a namespace judges its values.
enum class TagValueRule {
  any,        // any non-empty value (descriptive namespaces: backend, arch, …)
  form,       // the value must have a shape (tp: an integer, model: a slug); else tag.malformed
  vocabulary, // the known values of the table; another value is a warning (tag.unknown-value)
};

// How many values of the namespace one definition may carry.
enum class TagCardinality {
  several, // tp:2 beside tp:4: a model served in two configurations
  single,  // status:verified beside status:unverified contradicts itself (tag.conflict)
};

// One known namespace: the text before the first ':' of a tag, and what its value must be.
struct TagNamespace {
  std::string_view name;  // "model", "tp", …
  std::string_view value; // the rule, for docs and messages ("a positive decimal integer …")
  TagValueRule rule = TagValueRule::any;
  bool (*accepts)(std::string_view value) = nullptr; // the form or the vocabulary
  TagCardinality cardinality = TagCardinality::several;
};

// The known namespaces, sorted by name: arch, backend, ep, fi_api, gpu, kv-cache, layout, model,
// moe, quant, quantization, quantize, sparse, stage, status, tp.
std::span<const TagNamespace> tag_namespaces();

// The namespace entry called `name`, or nullptr.
const TagNamespace* find_tag_namespace(std::string_view name);

// The namespace of a tag (the text before its first ':'); "" for a bare flag (no ':').
std::string_view tag_namespace_of(std::string_view tag);

// Checks one tag on its own. nullopt when it is well formed, its namespace is known (or it is a
// bare flag such as `fused`) and its value is one the namespace takes. Otherwise a diagnostic
// without file or pointer:
// - `tag.malformed` (error): an empty tag, whitespace or control characters, invalid UTF-8, an
//   empty namespace or value, a `NS:*` pattern, or a value a `form` namespace rejects (tp:02);
// - `tag.unknown-value` (warning): a well-formed value a `vocabulary` namespace does not list
//   (stage:train), naming the values it lists;
// - `tag.unknown-namespace` (warning): a well-formed `ns:value` whose namespace is not known.
std::optional<Diagnostic> check_tag(std::string_view tag);

// `tag.conflict` warnings (no file) for the tags of one definition: for each single-valued
// namespace carrying two or more different values, one diagnostic per value after the first,
// with the pointer /tags/<i> of that later value (i its index in `tags`), naming the earlier one.
// A value repeated exactly is no conflict.
std::vector<Diagnostic> single_valued_conflicts(const std::vector<std::string>& tags);

} // namespace fib
