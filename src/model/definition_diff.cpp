// Comparing two definitions the way people and `fib stage` care about: see definition_diff.hpp.

#include "fib/model/definition_diff.hpp"

#include "util/strings.hpp"

#include <fib/util/text_diff.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace fib {
namespace {

bool is_python_text_key(std::string_view key) {
  return key == "reference" || key == "init" || key == "check";
}

// `tags` as a set of strings; std::nullopt when it is not a list of strings.
std::optional<std::set<std::string>> tag_set_of(const Json& tags) {
  if (!tags.is_array()) {
    return std::nullopt;
  }
  std::set<std::string> out;
  for (const auto& tag : tags) {
    if (!tag.is_string()) {
      return std::nullopt;
    }
    out.insert(tag.get<std::string>());
  }
  return out;
}

bool ordered_keys(std::string_view pointer) {
  return pointer == "/inputs" || pointer == "/outputs";
}

std::vector<std::string> keys_of(const Json& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object.items()) {
    keys.push_back(key);
  }
  return keys;
}

bool equal_at(const Json& a, const Json& b, const std::string& pointer) {
  if (pointer == "/tags") {
    const auto sa = tag_set_of(a);
    const auto sb = tag_set_of(b);
    if (sa && sb) {
      return *sa == *sb;
    }
  }
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) {
      return false;
    }
    if (ordered_keys(pointer) && keys_of(a) != keys_of(b)) {
      return false;
    }
    for (const auto& [key, value] : a.items()) {
      const auto it = b.find(key);
      if (it == b.end() || !equal_at(value, *it, pointer_append(pointer, key))) {
        return false;
      }
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) {
      return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!equal_at(a[i], b[i], pointer_append(pointer, i))) {
        return false;
      }
    }
    return true;
  }
  return a == b;
}

// A copy of `definition` without the keys `drop` selects (top level only).
template <typename Predicate> Json without_keys(const Json& definition, Predicate drop) {
  if (!definition.is_object()) {
    return definition;
  }
  Json out = Json::object();
  for (const auto& [key, value] : definition.items()) {
    if (!drop(key)) {
      out[key] = value;
    }
  }
  return out;
}

std::size_t count_lines(std::string_view text) {
  if (text.empty()) {
    return 0;
  }
  const auto newlines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  return text.back() == '\n' ? newlines : newlines + 1;
}

bool is_long_text(const Json& value) {
  if (!value.is_string()) {
    return false;
  }
  const auto& text = value.get_ref<const std::string&>();
  return text.size() > 80 || text.find('\n') != std::string::npos;
}

std::string short_value(const Json& value) {
  if (is_long_text(value)) {
    const auto lines = count_lines(value.get_ref<const std::string&>());
    return fmt::format("{} line{}", lines, lines == 1 ? "" : "s");
  }
  return json_excerpt(value);
}

// "3 lines removed, 5 added" between two texts, from their unified diff.
std::string text_change_summary(const std::string& before, const std::string& after) {
  const std::string diff = unified_diff(before, after, "a", "b", 0);
  std::size_t removed = 0;
  std::size_t added = 0;
  std::size_t start = 0;
  while (start < diff.size()) {
    auto end = diff.find('\n', start);
    if (end == std::string::npos) {
      end = diff.size();
    }
    const std::string_view line(diff.data() + start, end - start);
    if (line.starts_with("-") && !line.starts_with("--- ")) {
      ++removed;
    } else if (line.starts_with("+") && !line.starts_with("+++ ")) {
      ++added;
    }
    start = end + 1;
  }
  return fmt::format("{} line{} removed, {} added", removed, removed == 1 ? "" : "s", added);
}

void diff_at(const Json& a, const Json& b, const std::string& pointer,
             std::vector<FieldDifference>& out) {
  if (pointer == "/tags") {
    const auto sa = tag_set_of(a);
    const auto sb = tag_set_of(b);
    if (sa && sb) {
      std::vector<std::string> only_a;
      std::vector<std::string> only_b;
      std::set_difference(sa->begin(), sa->end(), sb->begin(), sb->end(),
                          std::back_inserter(only_a));
      std::set_difference(sb->begin(), sb->end(), sa->begin(), sa->end(),
                          std::back_inserter(only_b));
      if (!only_a.empty() || !only_b.empty()) {
        out.push_back({pointer, "only " + detail::join_or_none(only_a),
                       "only " + detail::join_or_none(only_b), ""});
      }
      return;
    }
  }
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      const auto child = pointer_append(pointer, key);
      const auto it = b.find(key);
      if (it == b.end()) {
        out.push_back({child, short_value(value), "(absent)", ""});
      } else {
        diff_at(value, *it, child, out);
      }
    }
    for (const auto& [key, value] : b.items()) {
      if (!a.contains(key)) {
        out.push_back({pointer_append(pointer, key), "(absent)", short_value(value), ""});
      }
    }
    if (ordered_keys(pointer)) {
      const auto ka = keys_of(a);
      const auto kb = keys_of(b);
      if (ka != kb && std::set<std::string>(ka.begin(), ka.end()) ==
                          std::set<std::string>(kb.begin(), kb.end())) {
        out.push_back({pointer, "order " + detail::join_or_none(ka),
                       "order " + detail::join_or_none(kb), ""});
      }
    }
    return;
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      diff_at(a[i], b[i], pointer_append(pointer, i), out);
    }
    return;
  }
  if (a == b) {
    return;
  }
  if (a.is_string() && b.is_string() && (is_long_text(a) || is_long_text(b))) {
    const auto& ta = a.get_ref<const std::string&>();
    const auto& tb = b.get_ref<const std::string&>();
    out.push_back({pointer, short_value(a), short_value(b), text_change_summary(ta, tb)});
    return;
  }
  out.push_back({pointer, short_value(a), short_value(b), ""});
}

} // namespace

std::vector<FieldDifference> diff_definitions(const Json& staged, const Json& incoming) {
  std::vector<FieldDifference> out;
  diff_at(staged, incoming, "", out);
  return out;
}

bool same_definition_content(const Json& a, const Json& b) {
  return equal_at(a, b, "");
}

bool same_definition_content_except_python_text(const Json& a, const Json& b) {
  return equal_at(without_keys(a, is_python_text_key), without_keys(b, is_python_text_key), "");
}

bool same_definition_content_except_tags(const Json& a, const Json& b) {
  const auto is_tags = [](std::string_view key) { return key == "tags"; };
  return equal_at(without_keys(a, is_tags), without_keys(b, is_tags), "");
}

std::optional<std::set<std::string>> tags_as_set(const Json& tags) {
  return tag_set_of(tags);
}

} // namespace fib
