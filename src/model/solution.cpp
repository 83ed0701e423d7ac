#include "fib/model/solution.hpp"

#include "io/keys.hpp"
#include "io/schema_reader.hpp"
#include "util/sha1.hpp"
#include "util/strings.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/path_safety.hpp>

#include <fmt/format.h>

#include <array>
#include <set>

namespace fib {
namespace {

using namespace detail;

std::size_t count_non_overlapping(std::string_view text, std::string_view needle) {
  std::size_t count = 0;
  for (std::size_t pos = text.find(needle); pos != std::string_view::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++count;
  }
  return count;
}

BuildSpec parse_build_spec(Reader& r, const Json& object, const std::string& pointer) {
  BuildSpec spec;
  if (!r.expect_object(object, pointer)) {
    return spec;
  }
  if (const Json* language = r.member(object, pointer, k_key_language, Presence::required)) {
    const auto parsed = language->is_string()
                            ? parse_language(language->get_ref<const std::string&>())
                            : std::nullopt;
    if (parsed) {
      spec.language = *parsed;
    } else {
      std::string hint;
      if (language->is_string()) {
        const std::string lowered = detail::ascii_lower(language->get<std::string>());
        if (parse_language(lowered)) {
          hint = fmt::format("languages are lowercase: \"{}\"", lowered);
        }
      }
      r.report(
          codes::k_schema_choice, pointer_append(pointer, k_key_language),
          fmt::format("Input should be 'python', 'triton', 'cpp', 'cuda' or 'tilelang', got {}",
                      json_excerpt(*language)),
          hint);
    }
  }
  if (const Json* hw = r.member(object, pointer, k_key_target_hardware, Presence::required)) {
    const std::string hw_pointer = pointer_append(pointer, k_key_target_hardware);
    if (auto items = r.string_list(*hw, hw_pointer, EmptyString::allowed)) {
      spec.target_hardware = std::move(*items);
      if (spec.target_hardware.empty()) {
        r.report(codes::k_schema_too_short, hw_pointer,
                 "List should have at least 1 item after validation, not 0");
      }
    }
  }
  if (const Json* entry = r.member(object, pointer, k_key_entry_point, Presence::required)) {
    const std::string entry_pointer = pointer_append(pointer, k_key_entry_point);
    if (auto text = r.string(*entry, entry_pointer, EmptyString::forbidden)) {
      spec.entry_point = *text;
      if (count_non_overlapping(*text, "::") != 1) {
        r.report(codes::k_entry_format, entry_pointer,
                 fmt::format(
                     "Invalid entry point format: {}. Expected \"<file_path>::<function_name>\".",
                     *text));
      }
    }
  }
  if (const Json* deps = r.member(object, pointer, k_key_dependencies, Presence::optional)) {
    if (auto items = r.string_list(*deps, pointer_append(pointer, k_key_dependencies),
                                   EmptyString::forbidden)) {
      spec.dependencies = std::move(*items);
    }
  }
  if (const Json* dps =
          r.member(object, pointer, k_key_destination_passing_style, Presence::optional)) {
    if (auto value = r.boolean(*dps, pointer_append(pointer, k_key_destination_passing_style))) {
      spec.destination_passing_style = *value ? DestinationPassing::yes : DestinationPassing::no;
    }
  }
  if (const Json* binding = r.member(object, pointer, k_key_binding, Presence::optional);
      binding != nullptr && !binding->is_null()) {
    const auto parsed =
        binding->is_string() ? parse_binding(binding->get_ref<const std::string&>()) : std::nullopt;
    if (parsed) {
      spec.binding = *parsed;
    } else {
      r.report(codes::k_schema_choice, pointer_append(pointer, k_key_binding),
               fmt::format("Input should be 'tvm-ffi' or 'torch', got {}", json_excerpt(*binding)));
    }
  }
  r.note_unknown_keys(object, pointer,
                      {k_key_language, k_key_target_hardware, k_key_entry_point, k_key_dependencies,
                       k_key_destination_passing_style, k_key_binding});
  return spec;
}

SourceFile parse_source(Reader& r, const Json& object, const std::string& pointer) {
  SourceFile source;
  if (!r.expect_object(object, pointer)) {
    return source;
  }
  if (const Json* path = r.member(object, pointer, k_key_path, Presence::required)) {
    const std::string path_pointer = pointer_append(pointer, k_key_path);
    if (auto text = r.string(*path, path_pointer, EmptyString::forbidden)) {
      source.path = *text;
      const bool traversal = has_parent_segment(*text);
      if (text->front() == '/') {
        r.report(codes::k_source_absolute, path_pointer,
                 fmt::format("Invalid source path (absolute path not allowed): {}", *text));
      } else if (traversal) {
        r.report(
            codes::k_source_traversal, path_pointer,
            fmt::format("Invalid source path (parent directory traversal not allowed): {}", *text));
      }
    }
  }
  if (const Json* content = r.member(object, pointer, k_key_content, Presence::required)) {
    source.content =
        r.string(*content, pointer_append(pointer, k_key_content), EmptyString::forbidden)
            .value_or("");
  }
  r.note_unknown_keys(object, pointer, {k_key_path, k_key_content});
  return source;
}

} // namespace

std::string BuildSpec::entry_file() const {
  const auto pos = entry_point.find("::");
  return pos == std::string::npos ? entry_point : entry_point.substr(0, pos);
}

std::string BuildSpec::entry_symbol() const {
  // The last piece of Python's entry_point.split("::"): occurrences are found left to right
  // without overlap, so "main.py:::run" gives ":run" (rfind would give "run").
  std::size_t last = std::string::npos;
  for (std::size_t pos = entry_point.find("::"); pos != std::string::npos;
       pos = entry_point.find("::", pos + 2)) {
    last = pos;
  }
  return last == std::string::npos ? std::string{} : entry_point.substr(last + 2);
}

const SourceFile* Solution::entry_source() const {
  const std::string file = spec.entry_file();
  for (const SourceFile& source : sources) {
    if (source.path == file) {
      return &source;
    }
  }
  return nullptr;
}

std::string Solution::content_hash() const {
  detail::Sha1 sha;
  sha.update(definition);
  sha.update(to_string(spec.language));
  sha.update(spec.entry_point);
  sha.update(spec.binding ? to_string(*spec.binding) : std::string_view{});
  for (const std::string& dependency : spec.dependencies) {
    sha.update(dependency);
  }
  for (const SourceFile& source : sources) {
    sha.update(source.path);
    sha.update(source.content);
  }
  return sha.hex_digest();
}

std::string Solution::unique_name() const {
  return name + "_" + content_hash().substr(0, 8);
}

Solution parse_solution(const JsonDocument& document, DiagnosticSink& sink) {
  Reader r(document, sink);
  Solution solution;
  const Json& root = document.root;
  if (!root.is_object()) {
    r.report(codes::k_schema_type, "",
             fmt::format("Input should be a valid dictionary or instance of Solution, got {}",
                         json_type_name(root)));
    return solution;
  }
  for (const auto& [key, field] :
       {std::pair{k_key_name, &solution.name}, std::pair{k_key_definition, &solution.definition},
        std::pair{k_key_author, &solution.author}}) {
    if (const Json* v = r.member(root, "", key, Presence::required)) {
      *field = r.string(*v, pointer_append("", key), EmptyString::forbidden).value_or("");
    }
  }
  bool spec_read = false;
  if (const Json* spec = r.member(root, "", k_key_spec, Presence::required)) {
    const int before = r.error_count();
    solution.spec = parse_build_spec(r, *spec, "/spec");
    spec_read = r.error_count() == before;
  }
  if (const Json* sources = r.member(root, "", k_key_sources, Presence::required)) {
    if (!sources->is_array()) {
      r.report(codes::k_schema_type, "/sources",
               fmt::format("Input should be a valid list, got {}", json_type_name(*sources)));
    } else if (sources->empty()) {
      r.report(codes::k_schema_too_short, "/sources",
               "List should have at least 1 item after validation, not 0");
    } else {
      for (std::size_t i = 0; i < sources->size(); ++i) {
        solution.sources.push_back(parse_source(r, (*sources)[i], pointer_append("/sources", i)));
      }
    }
  }
  if (const Json* description = r.member(root, "", k_key_description, Presence::optional)) {
    solution.description = r.nullable_string(*description, "/description");
  }
  r.note_unknown_keys(
      root, "",
      {k_key_name, k_key_definition, k_key_author, k_key_spec, k_key_sources, k_key_description});

  std::set<std::string> seen;
  for (std::size_t i = 0; i < solution.sources.size(); ++i) {
    const std::string& path = solution.sources[i].path;
    if (!path.empty() && !seen.insert(path).second) {
      r.report(codes::k_source_duplicate, pointer_append(pointer_append("/sources", i), k_key_path),
               fmt::format("Duplicate source path '{}'", path));
    }
  }
  if (spec_read && !solution.sources.empty() && solution.entry_source() == nullptr) {
    r.report(codes::k_entry_missing_source, "/spec/entry_point",
             fmt::format("Entry source file '{}' not found in sources", solution.spec.entry_file()),
             "paths are compared exactly: './main.py' is not 'main.py'");
  }
  return solution;
}

Json to_json(const Solution& solution) {
  Json out = Json::object();
  out["name"] = solution.name;
  out["definition"] = solution.definition;
  out["author"] = solution.author;
  if (solution.description) {
    out["description"] = *solution.description;
  }
  Json spec = Json::object();
  spec["language"] = std::string(to_string(solution.spec.language));
  spec["target_hardware"] = solution.spec.target_hardware;
  spec["entry_point"] = solution.spec.entry_point;
  if (!solution.spec.dependencies.empty()) {
    spec["dependencies"] = solution.spec.dependencies;
  }
  spec["destination_passing_style"] =
      solution.spec.destination_passing_style == DestinationPassing::yes;
  if (solution.spec.binding) {
    spec["binding"] = std::string(to_string(*solution.spec.binding));
  }
  out["spec"] = std::move(spec);
  Json sources = Json::array();
  for (const SourceFile& source : solution.sources) {
    sources.push_back(Json{{"path", source.path}, {"content", source.content}});
  }
  out["sources"] = std::move(sources);
  return out;
}

} // namespace fib
