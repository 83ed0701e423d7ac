// operands: the check of the tags `fib tag add` (or `fib dump --stage --tag`) is given.

#include "fib/tag/namespaces.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>

#include <fmt/format.h>

#include <map>

namespace fib {

bool replaces_namespace_values(std::string_view tag) {
  const TagNamespace* known = find_tag_namespace(tag_namespace_of(tag));
  return known != nullptr && known->cardinality == TagCardinality::single;
}

std::vector<Diagnostic> check_tag_operands(const std::vector<std::string>& tags) {
  std::vector<Diagnostic> out;
  std::map<std::string_view, std::string_view> given; // single-valued namespace → first value
  for (const std::string& tag : tags) {
    if (auto problem = check_tag(tag)) {
      out.push_back(std::move(*problem));
      continue;
    }
    if (!replaces_namespace_values(tag)) {
      continue;
    }
    const std::string_view space = tag_namespace_of(tag);
    const auto [it, first] = given.emplace(space, tag);
    if (first || it->second == tag) {
      continue;
    }
    Diagnostic d = make_diagnostic(
        codes::k_tag_conflict, fmt::format("tags '{}' and '{}' both given: a definition has one "
                                           "{}: value",
                                           text_excerpt(it->second), text_excerpt(tag), space));
    d.severity = Severity::error;
    d.hint = fmt::format("give one {}: tag; adding it replaces the value a file has", space);
    out.push_back(std::move(d));
  }
  return out;
}

} // namespace fib
