#pragma once
// The tag namespaces as `fib tag add` (and the paths that add tags: `fib stage`, `fib dump
// --stage --tag`) apply them. The vocabulary itself (the namespace table, check_tag,
// single_valued_conflicts) is in fib/model/tag_vocabulary.hpp, where `fib validate` reads it too.
// Nothing here reads or writes files.

#include <fib/base/diagnostic.hpp>
#include <fib/model/tag_vocabulary.hpp>

#include <string>
#include <vector>

namespace fib {

// --- Interface ---

// Checks the tags given to add: check_tag for each, in order, then for each single-valued
// namespace given two different values, one `tag.conflict` *error* naming both (an edit cannot
// carry out "status:verified and status:unverified"). No file or pointer. A caller writes nothing
// while any of these is an error.
std::vector<Diagnostic> check_tag_operands(const std::vector<std::string>& tags);

// Whether adding `tag` replaces the other values of its namespace (a single-valued one).
bool replaces_namespace_values(std::string_view tag);

} // namespace fib
