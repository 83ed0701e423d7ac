#pragma once
// The tag inventory behind `fib tag list`: how many selected definitions carry each namespace
// and each tag.

#include <fib/base/diagnostic.hpp>
#include <fib/io/json_io.hpp>
#include <fib/tag/selection.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// The namespace bare flags (tags without ':') are counted under.
inline constexpr std::string_view k_flag_namespace = "(flag)";

struct TagInventory {
  std::size_t files = 0; // files read as definitions
  // Number of files carrying at least one tag of the namespace (bare flags under "(flag)").
  std::map<std::string, std::size_t> namespaces;
  std::map<std::string, std::size_t> tags; // number of files carrying the tag
  std::size_t skipped = 0;
};

// Counts the tags of `files`. Unreadable and non-definition files are reported to `sink` (one
// error each, file set; `io.*` ones are environment failures) and skipped. Existing tags that
// check_tag calls malformed or an unknown value are reported as warnings (file, /tags/<i>), and
// so are two values of a single-valued namespace (`tag.conflict`, at the later one); an unknown
// namespace is not reported.
TagInventory inventory_tags(const std::vector<SelectedFile>& files, DiagnosticSink& sink);

// {"files": N, "namespaces": {ns: count}, "tags": {tag: count}}, keys sorted.
Json tag_inventory_json(const TagInventory& inventory);

} // namespace fib
