#pragma once
// Comparing two definitions by content, as `fib stage` and `fib report merge` need it: key order
// does not matter except for `inputs`/`outputs` (argument order), and `tags` compare as sets.

#include <fib/io/json_io.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

// One difference between two definitions, for people: the JSON pointer where they differ and the
// two sides, rendered short (`(absent)` when a side lacks the value; long or multi-line text is
// summarized by their line counts, with a `detail`).
struct FieldDifference {
  std::string pointer;
  std::string staged;   // the existing (or first) side
  std::string incoming; // the side being staged
  std::string detail;   // for texts: "N lines removed, M added"; "" otherwise
};

// Every difference between `staged` and `incoming`, in document order: keys only on one side,
// changed values, the order of `inputs`/`outputs` keys, and `tags` as sets (tags only on one side).
std::vector<FieldDifference> diff_definitions(const Json& staged, const Json& incoming);

// Whether the two definitions have the same content by the rule above.
bool same_definition_content(const Json& a, const Json& b);

// The same, ignoring the Python text (`reference`, `init`, `check`) at the top level.
bool same_definition_content_except_python_text(const Json& a, const Json& b);

// The same, ignoring `tags` at the top level.
bool same_definition_content_except_tags(const Json& a, const Json& b);

// `tags` as a set of strings; nullopt when it is not a list of strings.
std::optional<std::set<std::string>> tags_as_set(const Json& tags);

} // namespace fib
