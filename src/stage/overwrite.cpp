// Before an overwrite: the curated fields kept, and what depends on the staged definition.

#include "stage/overwrite.hpp"

#include <fib/model/definition.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>

namespace fib::stage_detail {
namespace {

bool has_text(const Json& object, std::string_view key) {
  if (!object.is_object()) {
    return false;
  }
  const auto it = object.find(std::string(key));
  return it != object.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

// The `description` of every entry of `section` ("axes", "inputs", "outputs").
void keep_descriptions(const Json& staged, Json& incoming, std::string_view section_name,
                       std::vector<std::string>& kept) {
  const std::string section(section_name);
  if (!staged.contains(section) || !staged[section].is_object() || !incoming.contains(section) ||
      !incoming[section].is_object()) {
    return;
  }
  for (auto& [key, spec] : incoming[section].items()) {
    const auto from = staged[section].find(key);
    if (!spec.is_object() || from == staged[section].end() || !has_text(*from, "description") ||
        has_text(spec, "description")) {
      continue;
    }
    spec["description"] = (*from)["description"];
    kept.push_back(pointer_append(pointer_append(pointer_append("", section), key), "description"));
  }
}

// "model" for "model:x"; "" for a bare flag such as "fused".
std::string tag_namespace(const std::string& tag) {
  const auto colon = tag.find(':');
  return colon == std::string::npos ? std::string() : tag.substr(0, colon);
}

const char* plural(std::size_t n, const char* one, const char* many) {
  return n == 1 ? one : many;
}

} // namespace

std::vector<std::string> keep_curated_fields(const Json& staged, Json& incoming) {
  std::vector<std::string> kept;
  if (!staged.is_object() || !incoming.is_object()) {
    return kept;
  }
  if (has_text(staged, "description") && !has_text(incoming, "description")) {
    incoming["description"] = staged["description"];
    kept.emplace_back("/description");
  }
  for (const std::string_view section : {"axes", "inputs", "outputs"}) {
    keep_descriptions(staged, incoming, section, kept);
  }
  const auto staged_tags = staged.find("tags");
  if (staged_tags == staged.end() || !staged_tags->is_array()) {
    return kept;
  }
  if (!incoming.contains("tags") || !incoming["tags"].is_array()) {
    if (incoming.contains("tags")) {
      return kept; // not a list: the validator reports it; nothing to merge into
    }
    incoming["tags"] = Json::array();
  }
  Json& tags = incoming["tags"];
  std::set<std::string> incoming_namespaces;
  for (const Json& tag : tags) {
    if (tag.is_string()) {
      incoming_namespaces.insert(tag_namespace(tag.get_ref<const std::string&>()));
    }
  }
  for (const Json& tag : *staged_tags) {
    if (!tag.is_string() || std::find(tags.begin(), tags.end(), tag) != tags.end()) {
      continue;
    }
    const std::string& text = tag.get_ref<const std::string&>();
    const std::string space = tag_namespace(text);
    if (!space.empty() && space != "model" && incoming_namespaces.contains(space)) {
      continue; // the incoming copy says it for itself (fi_api:, status:, tp:, …)
    }
    tags.push_back(tag);
    kept.push_back("tag " + text);
  }
  return kept;
}

DependentsCheck dependents_of_overwrite(const std::filesystem::path& dataset,
                                        const std::filesystem::path& staged_file,
                                        const Json& staged, const Json& incoming) {
  DiagnosticList ignored; // the definitions' own problems are the validator's to report
  const Definition before = parse_definition(JsonDocument{staged_file, staged, {}, {}}, ignored);
  const Definition after = parse_definition(JsonDocument{staged_file, incoming, {}, {}}, ignored);
  return check_dependents(dataset, before, after);
}

std::string describe_breakages(const DependentsCheck& check, std::size_t first_few) {
  std::string out = fmt::format(
      "{} of {} workload{}, {} of {} solution{} and {} of {} trace line{} would no longer "
      "validate:",
      check.broken.workloads, check.total.workloads, plural(check.total.workloads, "", "s"),
      check.broken.solutions, check.total.solutions, plural(check.total.solutions, "", "s"),
      check.broken.traces, check.total.traces, plural(check.total.traces, "", "s"));
  const std::size_t shown = std::min(first_few, check.breakages.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const Diagnostic& d = check.breakages[i];
    out += d.line > 0
               ? fmt::format("\n  {}:{}: {} [{}]", d.file.string(), d.line, d.message, d.code)
               : fmt::format("\n  {}: {} [{}]", d.file.string(), d.message, d.code);
  }
  if (check.breakages.size() > shown) {
    out += fmt::format("\n  and {} more", check.breakages.size() - shown);
  }
  return out;
}

std::string describe_dependents(const DependentCounts& total) {
  if (total.workloads + total.solutions + total.traces == 0) {
    return "";
  }
  return fmt::format("{} workload{}, {} solution{} and {} trace line{} name it; none breaks",
                     total.workloads, plural(total.workloads, "", "s"), total.solutions,
                     plural(total.solutions, "", "s"), total.traces, plural(total.traces, "", "s"));
}

} // namespace fib::stage_detail
