// edit: the edit of one definition's `tags`, and `fib tag add|remove` over selected files.

#include "fib/tag/edit.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/tag/namespaces.hpp>
#include <fib/util/atomic_file.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <system_error>

namespace fib {

Expected<std::vector<std::string>> read_tags(const Json& document) {
  if (!document.is_object()) {
    Diagnostic d = make_diagnostic(
        codes::k_tag_not_definition,
        fmt::format("not a definition: a JSON object is expected, got {}", json_excerpt(document)));
    return unexpected(std::move(d));
  }
  std::vector<std::string> tags;
  const auto it = document.find("tags");
  if (it == document.end()) {
    return tags;
  }
  if (!it->is_array()) {
    Diagnostic d =
        make_diagnostic(codes::k_schema_type,
                        fmt::format("tags must be a list of strings, got {}", json_excerpt(*it)));
    d.pointer = "/tags";
    return unexpected(std::move(d));
  }
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& tag = (*it)[i];
    if (!tag.is_string()) {
      Diagnostic d = make_diagnostic(
          codes::k_schema_type, fmt::format("a tag must be a string, got {}", json_excerpt(tag)));
      d.pointer = pointer_append("/tags", i);
      return unexpected(std::move(d));
    }
    tags.push_back(tag.get<std::string>());
  }
  return tags;
}

bool is_namespace_wildcard(std::string_view pattern) {
  return pattern.size() >= 3 && pattern.ends_with(":*") && pattern.find(':') == pattern.size() - 2;
}

std::vector<std::string> edit_tag_list(const std::vector<std::string>& tags, TagAction action,
                                       const std::vector<std::string>& operands) {
  std::set<std::string> result(tags.begin(), tags.end());
  if (action == TagAction::add) {
    for (const auto& operand : operands) {
      if (replaces_namespace_values(operand)) {
        const std::string_view space = tag_namespace_of(operand);
        std::erase_if(result, [&](const std::string& tag) {
          return tag != operand && tag_namespace_of(tag) == space;
        });
      }
    }
    result.insert(operands.begin(), operands.end());
  } else {
    for (const auto& operand : operands) {
      if (is_namespace_wildcard(operand)) {
        const std::string_view space = std::string_view(operand).substr(0, operand.size() - 1);
        std::erase_if(result, [&](const std::string& tag) { return tag.starts_with(space); });
      } else {
        result.erase(operand);
      }
    }
  }
  return {result.begin(), result.end()};
}

Json with_tags(const Json& document, const std::vector<std::string>& tags) {
  Json list = Json::array();
  for (const auto& tag : tags) {
    list.push_back(tag);
  }
  if (document.contains("tags")) {
    Json out = document;
    out["tags"] = std::move(list);
    return out;
  }
  Json out = Json::object();
  bool inserted = false;
  for (const auto& [key, value] : document.items()) {
    out[key] = value;
    if (key == "op_type") {
      out["tags"] = list;
      inserted = true;
    }
  }
  if (!inserted) {
    out["tags"] = std::move(list);
  }
  return out;
}

std::vector<Diagnostic> tag_clashes(const std::vector<std::string>& added,
                                    const std::vector<std::string>& after) {
  std::vector<Diagnostic> out;
  for (const auto& tag : added) {
    if (tag_namespace_of(tag) != "model") {
      continue;
    }
    std::vector<std::string> others;
    for (const auto& other : after) {
      if (other != tag && tag_namespace_of(other) == "model") {
        others.push_back(other);
      }
    }
    if (others.empty()) {
      continue;
    }
    Diagnostic d = make_diagnostic(codes::k_tag_clash,
                                   fmt::format("{} added beside {}: one definition tagged for two "
                                               "models",
                                               tag, fmt::join(others, ", ")));
    d.pointer = "/tags";
    d.hint = fmt::format("if {} replaces {}, remove the old tag: fib tag remove {} --file FILE",
                         tag, others.front(), others.front());
    out.push_back(std::move(d));
  }
  return out;
}

std::optional<Diagnostic> check_tag_write_path(const SelectedFile& file) {
  const auto unsafe = [&](const std::filesystem::path& link) {
    Diagnostic d = make_diagnostic(
        codes::k_io_unsafe_path,
        fmt::format("{} is a symbolic link; fib tag never writes through one, so the file is left "
                    "as it is",
                    link.string()));
    d.file = file.path;
    return d;
  };
  std::error_code ec;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(file.path, ec))) {
    return unsafe(file.path);
  }
  std::filesystem::path walked = file.root;
  for (const auto& part : file.relative) {
    walked /= part;
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(walked, ec))) {
      return unsafe(walked);
    }
  }
  return std::nullopt;
}

namespace {

// Leaves the file alone because of `problem` (stamped with the file when it has none).
TaggedFile skipped(TaggedFile out, Diagnostic problem) {
  if (problem.file.empty()) {
    problem.file = out.file.path;
  }
  out.diagnostics.push_back(std::move(problem));
  out.status = TagFileStatus::skipped;
  return out;
}

// Writes the new text: dataset and manifest selections through directory handles, so that a link
// put in place after check_tag_write_path is refused, not followed. The stale temporaries of an
// earlier, killed write in that directory are removed first.
Expected<std::filesystem::path> write_tagged(const SelectedFile& file, const std::string& text,
                                             StaleTemporarySweeper& sweeper) {
  if (file.relative.empty()) {
    sweeper.remove_stale_beside(file.path);
    return write_file_atomically(file.path, text, Overwrite::allowed);
  }
  sweeper.remove_stale_below(file.root, file.relative);
  return write_file_atomically_below(file.root, file.relative, text, Overwrite::allowed,
                                     CreateMissing::no);
}

// The edit of `text`, the content of `selected`: every decision and diagnostic, but no write.
TaggedFile plan_tag_edit(const SelectedFile& selected, std::string text,
                         const TagEditOptions& options) {
  TaggedFile out;
  out.file = selected;
  out.original_text = std::move(text);
  DiagnosticList sink;
  auto document = parse_json(out.original_text, selected.path, sink);
  out.diagnostics = sink.items();
  if (!document) {
    return skipped(std::move(out), document.error());
  }
  auto tags = read_tags(document->root);
  if (!tags) {
    Diagnostic d = tags.error();
    d.line = document->line_of(d.pointer);
    return skipped(std::move(out), std::move(d));
  }
  const std::vector<std::string> after = edit_tag_list(*tags, options.action, options.tags);
  const std::set<std::string> before_set(tags->begin(), tags->end());
  const std::set<std::string> after_set(after.begin(), after.end());
  std::set_difference(after_set.begin(), after_set.end(), before_set.begin(), before_set.end(),
                      std::back_inserter(out.added));
  std::set_difference(before_set.begin(), before_set.end(), after_set.begin(), after_set.end(),
                      std::back_inserter(out.removed));
  if (out.added.empty() && out.removed.empty()) {
    return out; // unchanged: the file keeps its bytes and its modification time
  }
  for (const std::string& old_tag : out.removed) {
    for (const std::string& new_tag : out.added) {
      if (replaces_namespace_values(new_tag) &&
          tag_namespace_of(new_tag) == tag_namespace_of(old_tag)) {
        out.replaced.push_back({old_tag, new_tag});
      }
    }
  }
  // Checked right before the write (and under --dry-run, which previews it): a link whose file
  // needs no change is harmless.
  if (auto unsafe = check_tag_write_path(selected)) {
    return skipped(std::move(out), std::move(*unsafe));
  }
  for (Diagnostic& clash : tag_clashes(out.added, after)) {
    clash.file = selected.path;
    out.diagnostics.push_back(std::move(clash));
  }
  out.status = TagFileStatus::changed;
  out.new_text = canonical_json_text(with_tags(document->root, after));
  return out;
}

// Writes the planned change under the lock of the file's directory, so that concurrent edits of
// one file (or of files in one directory) run one after the other. The file is read again under
// the lock: when another process changed it since `planned` read it, the edit is planned again
// on what is there now, so that the other process's tags are kept.
TaggedFile write_tag_edit(TaggedFile planned, const TagEditOptions& options,
                          StaleTemporarySweeper& sweeper) {
  const std::filesystem::path parent = planned.file.path.parent_path();
  const auto lock =
      lock_directory(parent.empty() ? std::filesystem::path(".") : parent, options.lock_timeout);
  if (!lock) {
    return skipped(std::move(planned), lock.error());
  }
  auto current = read_text_file(planned.file.path);
  if (!current) {
    return skipped(std::move(planned), current.error());
  }
  TaggedFile out = std::move(planned);
  if (*current != out.original_text) {
    out = plan_tag_edit(out.file, std::move(*current), options);
    if (out.status != TagFileStatus::changed) {
      return out;
    }
  }
  if (auto written = write_tagged(out.file, out.new_text, sweeper); !written) {
    return skipped(std::move(out), written.error());
  }
  out.written = true;
  return out;
}

TaggedFile edit_tag_file(const SelectedFile& selected, const TagEditOptions& options,
                         StaleTemporarySweeper& sweeper) {
  auto text = read_text_file(selected.path);
  if (!text) {
    TaggedFile out;
    out.file = selected;
    return skipped(std::move(out), text.error());
  }
  TaggedFile planned = plan_tag_edit(selected, std::move(*text), options);
  if (planned.status != TagFileStatus::changed || options.dry_run == DryRun::yes) {
    return planned;
  }
  return write_tag_edit(std::move(planned), options, sweeper);
}

} // namespace

TagSummary edit_tag_files(const std::vector<SelectedFile>& files, const TagEditOptions& options,
                          const std::function<void(const TaggedFile&)>& on_file) {
  TagSummary summary;
  StaleTemporarySweeper sweeper;
  for (const auto& selected : files) {
    const TaggedFile out = edit_tag_file(selected, options, sweeper);
    ++summary.files;
    summary.changed += out.status == TagFileStatus::changed ? 1 : 0;
    summary.skipped += out.status == TagFileStatus::skipped ? 1 : 0;
    on_file(out);
  }
  return summary;
}

} // namespace fib
