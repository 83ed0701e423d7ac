// inventory: counting the tags of selected definitions (`fib tag list`).

#include "fib/tag/inventory.hpp"

#include <fib/base/codes.hpp>
#include <fib/tag/edit.hpp>
#include <fib/tag/namespaces.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fib {

namespace {

// The tags of one file, read as a definition; problems go to `sink`, which stamps the file.
std::optional<std::vector<std::string>> read_file_tags(const SelectedFile& selected,
                                                       DiagnosticSink& sink) {
  auto text = read_text_file(selected.path);
  if (!text) {
    sink.report(text.error());
    return std::nullopt;
  }
  auto document = parse_json(*text, selected.path, sink);
  if (!document) {
    sink.report(document.error());
    return std::nullopt;
  }
  auto tags = read_tags(document->root);
  if (!tags) {
    Diagnostic d = tags.error();
    d.line = document->line_of(d.pointer);
    sink.report(std::move(d));
    return std::nullopt;
  }
  // Existing tags `add` would refuse, or warn about as an unknown value, are pointed out, not
  // counted against the file; a namespace fib does not know is no finding of `list`.
  for (std::size_t i = 0; i < tags->size(); ++i) {
    auto problem = check_tag((*tags)[i]);
    if (problem && problem->code != codes::k_tag_unknown_namespace) {
      problem->severity = Severity::warning;
      problem->pointer = pointer_append("/tags", i);
      problem->line = document->line_of(problem->pointer);
      sink.report(std::move(*problem));
    }
  }
  for (Diagnostic& conflict : single_valued_conflicts(*tags)) {
    conflict.line = document->line_of(conflict.pointer);
    sink.report(std::move(conflict));
  }
  return std::move(*tags);
}

} // namespace

TagInventory inventory_tags(const std::vector<SelectedFile>& files, DiagnosticSink& sink) {
  TagInventory inventory;
  for (const auto& selected : files) {
    ContextSink file_sink(sink, selected.path);
    const auto tags = read_file_tags(selected, file_sink);
    if (!tags) {
      ++inventory.skipped;
      continue;
    }
    ++inventory.files;
    std::set<std::string> spaces;
    const std::set<std::string> distinct(tags->begin(), tags->end());
    for (const std::string& tag : distinct) {
      ++inventory.tags[tag];
      spaces.insert(tag.find(':') == std::string::npos ? std::string(k_flag_namespace)
                                                       : std::string(tag_namespace_of(tag)));
    }
    for (const auto& space : spaces) {
      ++inventory.namespaces[space];
    }
  }
  return inventory;
}

Json tag_inventory_json(const TagInventory& inventory) {
  Json out = Json::object();
  out["files"] = inventory.files;
  Json spaces = Json::object();
  for (const auto& [name, count] : inventory.namespaces) {
    spaces[name] = count;
  }
  Json tags = Json::object();
  for (const auto& [name, count] : inventory.tags) {
    tags[name] = count;
  }
  out["namespaces"] = std::move(spaces);
  out["tags"] = std::move(tags);
  return out;
}

} // namespace fib
