// stage: plans where each definition goes in a dataset, compares with what is staged, and writes
// atomically below the dataset root without following symbolic links.

#include "fib/stage/stage.hpp"

#include "stage/overwrite.hpp"
#include "util/file_walk.hpp"
#include "util/strings.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/dataset_layout.hpp>
#include <fib/tag/namespaces.hpp>
#include <fib/util/text_diff.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <system_error>

namespace fib {
namespace {

Diagnostic entry_diagnostic(std::string_view code, const std::filesystem::path& file,
                            std::string message, std::string pointer = "") {
  Diagnostic d = make_diagnostic(code, std::move(message));
  d.file = file;
  d.pointer = std::move(pointer);
  return d;
}

std::string render_differences(const std::vector<FieldDifference>& differences,
                               std::string_view staged_label, std::string_view incoming_label) {
  std::string out;
  for (const auto& d : differences) {
    out += fmt::format("\n{}: {} ({}) vs {} ({}){}", d.pointer.empty() ? "/" : d.pointer, d.staged,
                       staged_label, d.incoming, incoming_label,
                       d.detail.empty() ? "" : ": " + d.detail);
  }
  return out;
}

// Distinct `model:` tags of a definition.
std::vector<std::string> model_tags(const Json& definition) {
  std::vector<std::string> out;
  if (const auto tags = definition.is_object() && definition.contains("tags")
                            ? tags_as_set(definition["tags"])
                            : std::nullopt) {
    for (const auto& tag : *tags) {
      if (tag.starts_with("model:")) {
        out.push_back(tag);
      }
    }
  }
  return out;
}

// --- The dataset side ---

// The names staged in the dataset (file stems of `definitions/<op_type>/<name>.json`, the
// validator's pattern; ScanMode::occupancy, so an entry of any type takes its name), each with the
// op_type directories that hold it, sorted. Each directory that cannot be listed adds an
// `io.read` to `problems`: the names in it are unknown.
std::map<std::string, std::vector<std::string>> staged_names(const std::filesystem::path& dataset,
                                                             std::vector<Diagnostic>& problems) {
  std::map<std::string, std::vector<std::string>> names;
  const TreeScan scan = scan_tree(dataset, DatasetTree::definitions, ScanMode::occupancy);
  for (const ListingFailure& failure : scan.failures) {
    Diagnostic d = make_diagnostic(
        codes::k_io_read, fmt::format("cannot list the directory: {}", failure.error.message()));
    d.file = failure.directory;
    problems.push_back(std::move(d));
  }
  for (const LayoutEntry& entry : scan.entries) {
    LayoutKeys keys = layout_keys(DatasetTree::definitions, entry.components);
    names[keys.name].push_back(std::move(keys.op_type));
  }
  for (auto& [name, dirs] : names) {
    std::sort(dirs.begin(), dirs.end());
  }
  return names;
}

// Opens (and, for writing, creates) `definitions/<op_type>` below the root, refusing links; keeps
// the handles for the run.
class DatasetDirectories {
public:
  explicit DatasetDirectories(DirectoryHandle root) : m_root(std::move(root)) {}

  // `definitions/`; nullptr when it is missing and CreateMissing::no.
  Expected<const DirectoryHandle*> definitions(CreateMissing create) {
    if (!m_definitions) {
      auto definitions = open_subdirectory(m_root, "definitions", create);
      if (!definitions) {
        return unexpected(definitions.error());
      }
      if (!*definitions) {
        return static_cast<const DirectoryHandle*>(nullptr);
      }
      m_definitions = std::move(**definitions);
    }
    return &*m_definitions;
  }

  // `definitions/<op_type>`; nullptr when it (or `definitions`) is missing and CreateMissing::no.
  Expected<const DirectoryHandle*> op_type_directory(const std::string& op_type,
                                                     CreateMissing create) {
    if (const auto it = m_op_types.find(op_type); it != m_op_types.end()) {
      return &it->second;
    }
    auto parent = definitions(create);
    if (!parent || *parent == nullptr) {
      return parent;
    }
    auto directory = open_subdirectory(**parent, op_type, create);
    if (!directory) {
      return unexpected(directory.error());
    }
    if (!*directory) {
      return static_cast<const DirectoryHandle*>(nullptr);
    }
    return &m_op_types.emplace(op_type, std::move(**directory)).first->second;
  }

private:
  DirectoryHandle m_root;
  std::optional<DirectoryHandle> m_definitions;
  std::map<std::string, DirectoryHandle> m_op_types;
};

// --- Planning ---

struct Candidate {
  std::size_t entry; // index into StageResult::entries
  Json document;
};

class Stager {
public:
  Stager(const StageOptions& options, PythonFrontend& python)
      : m_options(options), m_python(python) {}

  StageResult run() {
    auto root = open_directory(m_options.dataset);
    if (!root) {
      Diagnostic d = root.error();
      d.code = std::string(codes::k_dataset_root_missing);
      d.message = fmt::format("dataset root {}: {}",
                              dataset_root_problem(m_options.dataset).value_or("cannot be opened"),
                              m_options.dataset.string());
      m_result.diagnostics.push_back(std::move(d));
      return std::move(m_result);
    }
    DatasetDirectories directories(std::move(*root));
    for (const auto& [file, excluded] : expand_sources()) {
      if (excluded) {
        new_entry(file).action = StageAction::excluded;
      } else {
        read_source(file);
      }
    }
    if (m_options.normalize == StageNormalize::yes && m_options.normalize_options.decisions) {
      for (Diagnostic& d : unused_decisions(*m_options.normalize_options.decisions, m_used)) {
        m_result.diagnostics.push_back(std::move(d));
      }
    }
    group_by_name();
    // `definitions/` itself must not be a link: checked once, before the index is read through it.
    if (auto definitions = directories.definitions(CreateMissing::no); !definitions) {
      m_result.diagnostics.push_back(definitions.error());
      return finish();
    }
    const auto index = staged_names(m_options.dataset, m_result.diagnostics);
    report_case_clashes(index);
    for (auto& candidate : m_candidates) {
      compare_with_dataset(candidate, index, directories);
    }
    m_result.summary.blocked_by_conflicts =
        has_unresolved_conflicts(m_result) && m_options.on_conflict == OnConflict::fail;
    if (m_options.dry_run == DryRun::no && !m_result.summary.blocked_by_conflicts) {
      for (auto& candidate : m_candidates) {
        write(candidate, directories);
      }
    }
    return finish();
  }

private:
  // The input files in order, each with whether an --exclude glob matches it.
  std::vector<std::pair<std::filesystem::path, bool>> expand_sources() {
    std::vector<std::pair<std::filesystem::path, bool>> files;
    for (const auto& source : m_options.sources) {
      std::error_code ec;
      if (!std::filesystem::is_directory(source, ec)) {
        files.emplace_back(
            source, detail::matches_any_glob(m_options.exclude, source, source.parent_path()));
        continue;
      }
      auto found = detail::list_files_below(source, {".json"});
      for (Diagnostic& error : found.errors) {
        StageEntry& entry = new_entry(error.file);
        reject(entry, std::move(error));
      }
      for (const auto& file : found.files) {
        files.emplace_back(file, detail::matches_any_glob(m_options.exclude, file, source));
      }
    }
    return files;
  }

  StageEntry& new_entry(const std::filesystem::path& source) {
    m_result.entries.push_back(StageEntry{});
    m_result.entries.back().source = source;
    return m_result.entries.back();
  }

  void reject(StageEntry& entry, Diagnostic diagnostic) {
    if (diagnostic.file.empty()) {
      diagnostic.file = entry.source;
    }
    entry.action = StageAction::rejected;
    entry.diagnostics.push_back(std::move(diagnostic));
  }

  // Checks `name` and `op_type` of a (possibly normalized) document; fills the entry's target.
  bool accept_names(StageEntry& entry, const Json& document) {
    if (!document.is_object()) {
      reject(entry, entry_diagnostic(codes::k_stage_not_definition, entry.source,
                                     "not a definition: the document is not a JSON object"));
      return false;
    }
    for (const std::string_view key : {"name", "op_type"}) {
      const auto pointer = pointer_append("", key);
      const auto it = document.find(std::string(key));
      if (it == document.end() || !it->is_string()) {
        reject(entry,
               entry_diagnostic(codes::k_stage_not_definition, entry.source,
                                fmt::format("not a definition: `{}` is {}", key,
                                            it == document.end() ? "missing" : "not a string"),
                                pointer));
        return false;
      }
      const auto& value = it->get_ref<const std::string&>();
      if (const auto reason = unsafe_segment_reason(value); !reason.empty()) {
        Diagnostic d = entry_diagnostic(
            codes::k_stage_unsafe_name, entry.source,
            fmt::format("`{}` {} cannot be a path segment: {}", key, json_excerpt(*it), reason),
            pointer);
        d.hint = "fix the definition (fib normalize --decisions can rename it); nothing of it is "
                 "written";
        reject(entry, std::move(d));
        return false;
      }
    }
    entry.name = document["name"].get<std::string>();
    entry.op_type = document["op_type"].get<std::string>();
    entry.target = definition_path(entry.op_type, entry.name);
    return true;
  }

  void read_source(const std::filesystem::path& file) {
    StageEntry& entry = new_entry(file);
    const std::size_t index = m_result.entries.size() - 1;
    auto text = read_text_file(file, m_options.max_file_bytes);
    if (!text) {
      reject(entry, text.error());
      return;
    }
    DiagnosticList parse_sink;
    auto document = parse_json(*text, file, parse_sink);
    if (!document) {
      reject(entry, document.error());
      return;
    }
    if (!accept_names(entry, document->root)) {
      return;
    }
    Json result = document->root;
    if (m_options.normalize == StageNormalize::yes) {
      auto normalized = normalize_definition(*document, m_options.normalize_options, m_python);
      if (!normalized) {
        reject(entry, normalized.error());
        return;
      }
      m_used.insert(normalized->decisions_entry);
      bool error = false;
      for (auto& finding : normalized->findings) {
        if (finding.kind == FindingKind::applied) {
          ++entry.rules_applied;
        }
        if (finding.kind == FindingKind::question ||
            finding.diagnostic.severity == Severity::error) {
          error = error || finding.diagnostic.severity == Severity::error;
          entry.diagnostics.push_back(std::move(finding.diagnostic));
        }
      }
      if (error) {
        entry.action = StageAction::rejected;
        return;
      }
      result = std::move(normalized->document);
      if (!accept_names(entry, result)) {
        return;
      }
    }
    report_malformed_tags(entry, result);
    if (const auto models = model_tags(result); models.size() > 1) {
      Diagnostic d = entry_diagnostic(codes::k_tag_clash, file,
                                      fmt::format("carries {} different model tags: {}",
                                                  models.size(), detail::join_or_none(models)),
                                      "/tags");
      d.hint = "keep the one that names the model the dump came from (fib tag remove)";
      entry.diagnostics.push_back(std::move(d));
    }
    entry.incoming_text = canonical_json_text(result);
    entry.action = StageAction::added; // until compared
    m_candidates.push_back(Candidate{index, std::move(result)});
  }

  // Tags the dump carries are staged as they are; malformed ones (bad syntax, or a value without
  // its namespace's form such as `tp:02`) are pointed out as notes, never refused.
  static void report_malformed_tags(StageEntry& entry, const Json& document) {
    const auto tags = document.find("tags");
    if (tags == document.end() || !tags->is_array()) {
      return;
    }
    for (std::size_t i = 0; i < tags->size(); ++i) {
      const Json& tag = (*tags)[i];
      if (!tag.is_string()) {
        continue;
      }
      auto problem = check_tag(tag.get_ref<const std::string&>());
      if (problem && problem->code == codes::k_tag_malformed) {
        problem->severity = Severity::note;
        problem->file = entry.source;
        problem->pointer = pointer_append("/tags", i);
        problem->hint = "fix it with fib tag remove/add after staging";
        entry.diagnostics.push_back(std::move(*problem));
      }
    }
  }

  void mark_conflict(StageEntry& entry, Diagnostic diagnostic) {
    if (m_options.on_conflict == OnConflict::skip) {
      diagnostic.severity = Severity::warning;
      entry.action = StageAction::skipped;
    } else {
      entry.action = StageAction::conflict;
    }
    entry.diagnostics.push_back(std::move(diagnostic));
  }

  // Rule N20: inputs that share a name. The first one stands for the group unless they conflict.
  void group_by_name() {
    std::map<std::string, std::vector<std::size_t>> groups; // name → candidate indices
    for (std::size_t i = 0; i < m_candidates.size(); ++i) {
      groups[m_result.entries[m_candidates[i].entry].name].push_back(i);
    }
    std::vector<bool> keep(m_candidates.size(), true);
    for (const auto& [name, members] : groups) {
      if (members.size() < 2) {
        continue;
      }
      const Candidate& first = m_candidates[members.front()];
      StageEntry& first_entry = m_result.entries[first.entry];
      bool conflict = false;
      for (std::size_t k = 1; k < members.size(); ++k) {
        const Candidate& other = m_candidates[members[k]];
        StageEntry& entry = m_result.entries[other.entry];
        auto differences = diff_definitions(first.document, other.document);
        if (same_definition_content(first.document, other.document)) {
          Diagnostic d = entry_diagnostic(
              codes::k_normalize_n20, entry.source,
              fmt::format("same content as {}; staged once", first_entry.source.string()));
          d.severity = Severity::note;
          entry.diagnostics.push_back(std::move(d));
          entry.action = StageAction::duplicate;
          keep[members[k]] = false;
        } else if (same_definition_content_except_python_text(first.document, other.document)) {
          Diagnostic d = entry_diagnostic(
              codes::k_normalize_n20, entry.source,
              fmt::format("shares the name '{}' with {} and differs only in its Python text; the "
                          "first is staged:{}",
                          name, first_entry.source.string(),
                          render_differences(differences, "first", "this")));
          entry.diagnostics.push_back(std::move(d));
          entry.differences = std::move(differences);
          entry.action = StageAction::duplicate;
          keep[members[k]] = false;
        } else {
          Diagnostic d = entry_diagnostic(
              codes::k_stage_conflict, entry.source,
              fmt::format("shares the name '{}' with {} but differs (dtypes or const axes the "
                          "name does not show?):{}",
                          name, first_entry.source.string(),
                          render_differences(differences, "first", "this")));
          d.hint = fmt::format("rename one with a decisions entry for its file ({{\"files\": "
                               "{{\"{}\": {{\"name\": \"...\"}}}}}}, --decisions with "
                               "--normalize), leave one out (--exclude GLOB), or stage the rest "
                               "(--on-conflict skip)",
                               entry.source.string());
          entry.differences = std::move(differences);
          entry.staged_text = first_entry.incoming_text;
          mark_conflict(entry, std::move(d));
          keep[members[k]] = false;
          conflict = true;
        }
      }
      if (conflict) {
        // No input of a conflicting group is staged: choosing one would be a guess.
        Diagnostic d = entry_diagnostic(
            codes::k_stage_conflict, first_entry.source,
            fmt::format("another input shares the name '{}' and differs; none of them is staged",
                        name));
        if (m_options.on_conflict == OnConflict::overwrite) {
          d.hint = "--on-conflict overwrite replaces staged files; it does not choose between "
                   "inputs";
        }
        mark_conflict(first_entry, std::move(d));
        keep[members.front()] = false;
        for (std::size_t k = 1; k < members.size(); ++k) {
          StageEntry& entry = m_result.entries[m_candidates[members[k]].entry];
          if (entry.action == StageAction::duplicate) {
            entry.action = first_entry.action;
          }
        }
      }
    }
    std::vector<Candidate> kept;
    for (std::size_t i = 0; i < m_candidates.size(); ++i) {
      if (keep[i]) {
        kept.push_back(std::move(m_candidates[i]));
      }
    }
    m_candidates = std::move(kept);
  }

  void compare_with_dataset(Candidate& candidate,
                            const std::map<std::string, std::vector<std::string>>& index,
                            DatasetDirectories& directories) {
    StageEntry& entry = m_result.entries[candidate.entry];
    const auto staged = index.find(entry.name);
    std::vector<std::string> elsewhere;
    bool here = false;
    if (staged != index.end()) {
      for (const auto& op_type : staged->second) {
        if (op_type == entry.op_type) {
          here = true;
        } else {
          elsewhere.push_back(definition_path(op_type, entry.name).generic_string());
        }
      }
    }
    if (!elsewhere.empty()) {
      Diagnostic d = entry_diagnostic(
          codes::k_stage_name_taken, entry.source,
          fmt::format("'{}' is already staged as {}; staging it under {} too would give the "
                      "dataset two definitions of one name",
                      entry.name, detail::join_or_none(elsewhere), entry.op_type),
          "/op_type");
      d.hint = "if the op_type changed, move the staged file yourself; fib never deletes one";
      mark_conflict(entry, std::move(d));
      return;
    }
    auto directory = directories.op_type_directory(entry.op_type, CreateMissing::no);
    if (!directory) {
      reject(entry, directory.error());
      return;
    }
    if (!here || *directory == nullptr) {
      entry.action = StageAction::added;
      return;
    }
    auto text =
        read_file_in(**directory, entry.target.filename().string(), m_options.max_file_bytes);
    if (!text) {
      reject(entry, text.error());
      return;
    }
    if (!*text) {
      entry.action = StageAction::added;
      return;
    }
    const auto staged_path = m_options.dataset / entry.target;
    DiagnosticList sink;
    auto document = parse_json(**text, staged_path, sink);
    if (!document) {
      entry.staged_text = **text;
      Diagnostic d =
          entry_diagnostic(codes::k_stage_conflict, entry.source,
                           fmt::format("the staged {} is not valid JSON ({}); left as it is",
                                       entry.target.string(), document.error().message));
      resolve_conflict(entry, std::move(d));
      return;
    }
    entry.staged_text = canonical_json_text(document->root);
    if (same_definition_content(document->root, candidate.document)) {
      entry.action = StageAction::unchanged;
      return;
    }
    // A staged copy enriched with tags (fib tag) is still the same definition.
    const auto staged_tags = tags_as_set(document->root.value("tags", Json::array()));
    const auto incoming_tags = tags_as_set(candidate.document.value("tags", Json::array()));
    if (staged_tags && incoming_tags &&
        std::includes(staged_tags->begin(), staged_tags->end(), incoming_tags->begin(),
                      incoming_tags->end()) &&
        same_definition_content_except_tags(document->root, candidate.document)) {
      entry.action = StageAction::unchanged;
      return;
    }
    const auto staged_models = model_tags(document->root);
    const auto incoming_models = model_tags(candidate.document);
    if (!staged_models.empty() && !incoming_models.empty() && staged_models != incoming_models) {
      Diagnostic clash = entry_diagnostic(
          codes::k_tag_clash, entry.source,
          fmt::format("model tags clash: the staged copy has {}, this input {}",
                      detail::join_or_none(staged_models), detail::join_or_none(incoming_models)),
          "/tags");
      clash.hint = "one definition can serve several models: tag it with each (fib tag add)";
      entry.diagnostics.push_back(std::move(clash));
    }
    entry.differences = diff_definitions(document->root, candidate.document);
    Diagnostic d =
        entry_diagnostic(codes::k_stage_conflict, entry.source,
                         fmt::format("differs from the staged {}:{}", entry.target.string(),
                                     render_differences(entry.differences, "staged", "incoming")));
    if (m_options.on_conflict == OnConflict::overwrite) {
      plan_overwrite(candidate, document->root, staged_path, std::move(d));
      return;
    }
    resolve_conflict(entry, std::move(d));
  }

  // An overwrite of a parsed staged copy: curated fields kept (unless CuratedFields::drop), then
  // refused when it breaks what names the definition (unless OverwriteBreaking::force).
  void plan_overwrite(Candidate& candidate, const Json& staged,
                      const std::filesystem::path& staged_path, Diagnostic conflict) {
    StageEntry& entry = m_result.entries[candidate.entry];
    if (m_options.curated == CuratedFields::keep) {
      entry.kept = stage_detail::keep_curated_fields(staged, candidate.document);
      if (!entry.kept.empty()) {
        entry.incoming_text = canonical_json_text(candidate.document);
        if (same_definition_content(staged, candidate.document)) {
          entry.action = StageAction::unchanged; // only the curated fields differed
          entry.kept.clear();
          return;
        }
        conflict.message += fmt::format("\nkept from the staged copy (--drop-curated drops "
                                        "them): {}",
                                        detail::join_or_none(entry.kept));
      }
    }
    const DependentsCheck dependents = stage_detail::dependents_of_overwrite(
        m_options.dataset, staged_path, staged, candidate.document);
    if (dependents.breakages.empty()) {
      if (const auto named = stage_detail::describe_dependents(dependents.total); !named.empty()) {
        conflict.message += "\n" + named;
      }
      resolve_conflict(entry, std::move(conflict));
      return;
    }
    Diagnostic breaks =
        entry_diagnostic(codes::k_stage_overwrite_breaks, entry.source,
                         fmt::format("replacing {} breaks what names it: {}", entry.target.string(),
                                     stage_detail::describe_breakages(dependents, 3)));
    if (m_options.overwrite_breaking == OverwriteBreaking::force) {
      breaks.severity = Severity::warning;
      breaks.message += "\nreplaced anyway (--force)";
      entry.diagnostics.push_back(std::move(breaks));
      resolve_conflict(entry, std::move(conflict));
      return;
    }
    breaks.hint = "fix or regenerate the dependents first, or replace it anyway with "
                  "--on-conflict overwrite --force";
    conflict.hint = "compare with fib stage --dry-run --diff";
    entry.diagnostics.push_back(std::move(conflict));
    entry.diagnostics.push_back(std::move(breaks));
    entry.action = StageAction::conflict;
  }

  // Names that differ only in case, among the inputs or from a staged name: a warning (the two
  // files clash on case-insensitive file systems, macOS and Windows checkouts).
  void report_case_clashes(const std::map<std::string, std::vector<std::string>>& index) {
    std::map<std::string, std::vector<std::size_t>> by_folded; // folded name → candidates
    for (std::size_t i = 0; i < m_candidates.size(); ++i) {
      by_folded[detail::ascii_lower(m_result.entries[m_candidates[i].entry].name)].push_back(i);
    }
    std::map<std::string, std::vector<std::string>> staged_by_folded;
    for (const auto& [name, dirs] : index) {
      staged_by_folded[detail::ascii_lower(name)].push_back(name);
    }
    for (const auto& [folded, members] : by_folded) {
      for (const std::size_t i : members) {
        StageEntry& entry = m_result.entries[m_candidates[i].entry];
        std::vector<std::string> others;
        for (const std::size_t j : members) {
          const StageEntry& other = m_result.entries[m_candidates[j].entry];
          if (other.name != entry.name) {
            others.push_back(fmt::format("'{}' ({})", other.name, other.source.string()));
          }
        }
        if (const auto staged = staged_by_folded.find(folded); staged != staged_by_folded.end()) {
          for (const auto& name : staged->second) {
            if (name != entry.name) {
              others.push_back(fmt::format("'{}' (staged)", name));
            }
          }
        }
        if (others.empty()) {
          continue;
        }
        Diagnostic d = entry_diagnostic(
            codes::k_stage_case_clash, entry.source,
            fmt::format("'{}' differs only in case from {}: their files clash on case-insensitive "
                        "file systems (macOS and Windows checkouts)",
                        entry.name, detail::join_or_none(others)),
            "/name");
        d.hint = "rename one (a decisions entry with key `name`)";
        entry.diagnostics.push_back(std::move(d));
      }
    }
  }

  // A conflict with the staged copy: what --on-conflict says.
  void resolve_conflict(StageEntry& entry, Diagnostic diagnostic) {
    switch (m_options.on_conflict) {
    case OnConflict::overwrite:
      diagnostic.severity = Severity::warning;
      diagnostic.message += "\nreplaced (--on-conflict overwrite)";
      entry.diagnostics.push_back(std::move(diagnostic));
      entry.action = StageAction::overwritten;
      return;
    case OnConflict::skip:
    case OnConflict::fail:
      diagnostic.hint = "compare with fib stage --dry-run --diff; then fix the input, or "
                        "choose --on-conflict skip|overwrite";
      mark_conflict(entry, std::move(diagnostic));
      return;
    }
  }

  void write(const Candidate& candidate, DatasetDirectories& directories) {
    StageEntry& entry = m_result.entries[candidate.entry];
    if (entry.action != StageAction::added && entry.action != StageAction::overwritten) {
      return;
    }
    auto directory = directories.op_type_directory(entry.op_type, CreateMissing::yes);
    if (!directory) {
      entry.diagnostics.push_back(directory.error());
      entry.action = StageAction::failed;
      return;
    }
    m_sweeper.remove_stale_in(**directory);
    auto written = write_file_atomically_in(
        **directory, entry.target.filename().string(), entry.incoming_text,
        entry.action == StageAction::added ? Overwrite::forbidden : Overwrite::allowed);
    if (!written) {
      entry.diagnostics.push_back(written.error());
      entry.action = StageAction::failed;
      return;
    }
    entry.written = true;
  }

  StageResult finish() {
    auto& s = m_result.summary;
    s.dry_run = m_options.dry_run;
    for (const auto& entry : m_result.entries) {
      switch (entry.action) {
      case StageAction::added:
        ++s.added;
        break;
      case StageAction::unchanged:
        ++s.unchanged;
        break;
      case StageAction::overwritten:
        ++s.overwritten;
        break;
      case StageAction::conflict:
        ++s.conflicts;
        break;
      case StageAction::skipped:
        ++s.skipped;
        break;
      case StageAction::excluded:
        ++s.excluded;
        break;
      case StageAction::duplicate:
        ++s.duplicates;
        break;
      case StageAction::rejected:
        ++s.rejected;
        break;
      case StageAction::failed:
        ++s.failed;
        break;
      }
    }
    return std::move(m_result);
  }

  const StageOptions& m_options;
  PythonFrontend& m_python;
  StageResult m_result;
  std::vector<Candidate> m_candidates;
  std::set<std::string> m_used; // the decisions-file entries applied
  // Created with the stager: its start is the run's start.
  StaleTemporarySweeper m_sweeper;
};

} // namespace

StageResult stage_definitions(const StageOptions& options, PythonFrontend& python) {
  return Stager(options, python).run();
}

DiagnosticCounts count_stage_diagnostics(const StageResult& result) {
  DiagnosticCounts counts = count_diagnostics(result.diagnostics);
  for (const StageEntry& entry : result.entries) {
    counts += count_diagnostics(entry.diagnostics);
  }
  return counts;
}

bool has_unresolved_conflicts(const StageResult& result) {
  return std::any_of(result.entries.begin(), result.entries.end(),
                     [](const StageEntry& e) { return e.action == StageAction::conflict; });
}

Json stage_manifest(const StageResult& result, const std::filesystem::path& dataset) {
  std::error_code ec;
  auto root = std::filesystem::absolute(dataset, ec);
  if (ec) {
    root = dataset;
  }
  Json entries = Json::array();
  for (const auto& entry : result.entries) {
    if (!entry.written) {
      continue;
    }
    Json item = Json::object();
    item["path"] = entry.target.generic_string();
    item["name"] = entry.name;
    item["op_type"] = entry.op_type;
    item["action"] = std::string(to_string(entry.action));
    item["source"] = entry.source.string();
    entries.push_back(std::move(item));
  }
  Json manifest = Json::object();
  manifest["fib_stage_manifest"] = 1;
  manifest["dataset"] = root.lexically_normal().string();
  manifest["entries"] = std::move(entries);
  return manifest;
}

} // namespace fib
