// old_schema: recognising a tree of the Aug 2025 schema, and the one message that says so.

#include "fib/validate/old_schema.hpp"

#include "io/json_scan.hpp"
#include "util/file_walk.hpp"
#include "util/parallel_for.hpp"
#include "validate/dataset_cache.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/util/build_identity.hpp>
#include <fib/util/sha256.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>

namespace fib {
namespace {

using dataset_checks::remember_digest;

constexpr std::uintmax_t k_max_json_bytes = std::uintmax_t{4} << 20;
constexpr std::uintmax_t k_max_jsonl_bytes = std::uintmax_t{64} << 20;
constexpr std::size_t k_max_examples = 3;

// The part of `path` below `root`, split into components. A listed file's path is the root's
// text, a '/' and the names below it joined by '/' (list_files_below builds it so): that is split
// as text, without a path object per component. Any other spelling is taken apart by
// lexically_relative.
std::vector<std::string> components_below(const std::filesystem::path& root,
                                          const std::filesystem::path& path) {
  std::vector<std::string> out;
  const std::string_view text = path.native();
  const std::string_view prefix = root.native();
  const bool slash_after_prefix = !prefix.empty() && prefix.back() == '/';
  if (!prefix.empty() && text.starts_with(prefix) &&
      (slash_after_prefix || (text.size() > prefix.size() && text[prefix.size()] == '/'))) {
    std::string_view rest = text.substr(prefix.size() + (slash_after_prefix ? 0 : 1));
    while (!rest.empty()) {
      const std::size_t slash = rest.find('/');
      const std::string_view part = rest.substr(0, slash);
      if (part.empty() || part == "." || part == "..") {
        out.clear(); // not as listed: lexically_relative below
        break;
      }
      out.emplace_back(part);
      if (slash == std::string_view::npos) {
        return out;
      }
      rest.remove_prefix(slash + 1);
    }
  }
  out.clear();
  for (const auto& part : path.lexically_relative(root)) {
    out.push_back(part.string());
  }
  return out;
}

// The index of the last directory component called `name` (the file name excluded), or npos.
std::size_t last_directory(const std::vector<std::string>& parts, std::string_view name) {
  for (std::size_t i = parts.size() - 1; i-- > 0;) {
    if (parts[i] == name) {
      return i;
    }
  }
  return std::string::npos;
}

// The members `kept` of the object `text` holds (checked whole), or nullopt when it is not one.
std::optional<Json> parse_object(const std::string& text, const std::filesystem::path& file,
                                 const std::vector<std::string_view>& kept) {
  auto document = parse_json_members(text, file, kept);
  if (!document || !document->root.is_object()) {
    return std::nullopt;
  }
  return std::move(document->root);
}

// False when the text cannot hold a definition of the old schema: its outermost object has an
// `op_type` key (a parse would find it there too; invalid JSON is no sign either).
bool may_be_old_definition(std::string_view text) {
  bool has_op_type = false;
  detail::scan_json_keys(text, [&](int depth, std::string_view key, std::size_t) {
    has_op_type = depth == 1 && key == "op_type";
    return !has_op_type;
  });
  return !has_op_type;
}

// False when no `language` key of the text has a string value with an upper-case letter or an
// escape (and no key is written with escapes): then `spec.language` cannot be capitalised.
bool may_have_capitalised_language(std::string_view text) {
  bool maybe = false;
  detail::scan_json_keys(text, [&](int, std::string_view key, std::size_t value) {
    if (key.find('\\') != std::string_view::npos) {
      maybe = true;
    } else if (key == "language" && value < text.size() && text[value] == '"') {
      const std::size_t end = detail::end_of_json_string(text, value);
      const std::string_view literal = text.substr(value, end - value);
      maybe = std::any_of(literal.begin(), literal.end(), [](char c) {
        return c == '\\' || std::isupper(static_cast<unsigned char>(c)) != 0;
      });
    }
    return !maybe;
  });
  return maybe;
}

// False when the line cannot be a trace record with "solution": "" in its outermost object: no
// key `solution` there is followed by the empty string (the only way JSON writes one is `""`),
// and no key there is written with escapes.
bool may_have_empty_solution(std::string_view line) {
  if (line.find("\"\"") == std::string_view::npos) {
    return false;
  }
  bool maybe = false;
  detail::scan_json_keys(line, [&](int depth, std::string_view key, std::size_t value) {
    if (depth == 1) {
      maybe = key.find('\\') != std::string_view::npos ||
              (key == "solution" && line.substr(value, 2) == "\"\"");
    }
    return !maybe;
  });
  return maybe;
}

bool is_old_definition(const Json& object) {
  const auto type = object.find("type");
  return type != object.end() && type->is_string() && !object.contains("op_type");
}

bool has_capitalised_language(const Json& object) {
  const auto spec = object.find("spec");
  if (spec == object.end() || !spec->is_object()) {
    return false;
  }
  const auto language = spec->find("language");
  if (language == spec->end() || !language->is_string()) {
    return false;
  }
  const auto& text = language->get_ref<const std::string&>();
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; });
}

// The lines of a workload file whose `solution` is the empty string, as the old schema writes.
std::size_t solution_string_lines(const std::filesystem::path& file) {
  auto text = read_text_file(file, k_max_jsonl_bytes);
  if (!text) {
    return 0;
  }
  std::size_t count = 0;
  DiagnosticList ignored;
  if (text->find("\"\"") == std::string::npos) {
    return 0; // no line holds an empty string
  }
  for (const JsonlLine& line : split_jsonl_lines(*text)) {
    if (!may_have_empty_solution(line.text)) {
      continue;
    }
    auto document = parse_json(line.text, file, ignored, line.line, LineIndex::skipped);
    if (!document || !document->root.is_object()) {
      continue;
    }
    const auto solution = document->root.find("solution");
    // "" exactly: a trace line names its solution, so an author called "workloads" is no sign.
    count += solution != document->root.end() && solution->is_string() &&
                     solution->get_ref<const std::string&>().empty()
                 ? 1
                 : 0;
  }
  return count;
}

void note_example(OldSchemaSigns& signs, const std::filesystem::path& file) {
  if (signs.examples.size() < k_max_examples &&
      std::find(signs.examples.begin(), signs.examples.end(), file) == signs.examples.end()) {
    signs.examples.push_back(file);
  }
}

// What one listed file shows of the old schema.
struct FileSigns {
  bool old_workload_name = false;
  std::size_t solution_string_lines = 0;
  bool definition_with_type = false;
  std::optional<std::filesystem::path> nested_root; // of an old definition below the root
  bool capitalised_language = false;
  bool any() const {
    return old_workload_name || solution_string_lines > 0 || definition_with_type ||
           capitalised_language;
  }
};

// Looks at one listed file. Definitions and solutions are parsed only when a quick look at their
// text cannot rule the sign out.
// The root of an old definition's tree when its `definitions` directory is below the root.
std::optional<std::filesystem::path> nested_root(const std::filesystem::path& root,
                                                 const std::vector<std::string>& parts,
                                                 std::size_t definitions) {
  if (definitions == 0) {
    return std::nullopt;
  }
  std::filesystem::path nested = root;
  for (std::size_t i = 0; i < definitions; ++i) {
    nested /= parts[i];
  }
  return nested;
}

// What the cache keeps a file's sign under: the digest of its bytes and its role.
Sha256Digest sign_key(const Sha256Digest& digest, dataset_checks::OldSchemaRole role) {
  Sha256 hash;
  hash.update("fib old-schema sign v1\n").update(build_identity()).update("\n");
  hash.update(role == dataset_checks::OldSchemaRole::definition ? "definition\n" : "solution\n");
  hash.update(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
  return hash.finish();
}

// The cache as inspect uses it.
struct SignCache {
  ResultCache* store = nullptr;
  std::int64_t run_start_ns = 0;
  dataset_checks::RememberedDigests* digests = nullptr;      // the run's answers of the memo
  const dataset_checks::SignedFiles* signed_files = nullptr; // answers had from their bytes
};

FileSigns inspect(const std::filesystem::path& root, const std::filesystem::path& file,
                  const SignCache& cache) {
  FileSigns signs;
  const std::vector<std::string> parts = components_below(root, file);
  if (parts.empty()) {
    return signs;
  }
  if (file.extension() == ".jsonl") {
    // Only the old layout's files are read again: a workloads/ file with such lines gets its own
    // errors from the workload category.
    const std::size_t workloads = last_directory(parts, "workloads");
    if (workloads == std::string::npos || workloads == 0 || parts[workloads - 1] != "traces") {
      return signs;
    }
    signs.old_workload_name = file.filename().string().ends_with(".workload.jsonl");
    signs.solution_string_lines = solution_string_lines(file);
    return signs;
  }
  const std::size_t definitions = last_directory(parts, "definitions");
  const std::size_t solutions = last_directory(parts, "solutions");
  if (definitions == std::string::npos && solutions == std::string::npos) {
    return signs;
  }
  const bool is_definition = definitions != std::string::npos &&
                             (solutions == std::string::npos || definitions > solutions);
  const dataset_checks::OldSchemaRole role = is_definition
                                                 ? dataset_checks::OldSchemaRole::definition
                                                 : dataset_checks::OldSchemaRole::solution;
  const auto signs_of = [&](bool sign) {
    if (sign) {
      signs.definition_with_type = is_definition;
      signs.capitalised_language = !is_definition;
      signs.nested_root = is_definition ? nested_root(root, parts, definitions) : std::nullopt;
    }
    return signs;
  };
  if (cache.signed_files != nullptr) {
    if (const auto it = cache.signed_files->find(file.native());
        it != cache.signed_files->end() && it->second.role == role) {
      return signs_of(it->second.sign);
    }
  }
  // With a cache: the content's sign, kept under the digest of the bytes.
  if (cache.store != nullptr) {
    if (const auto digest = cache.digests->of(*cache.store, file)) {
      if (const auto stored = cache.store->find(sign_key(*digest, role));
          stored && stored->size() == 1) {
        return signs_of((*stored)[0] == '1');
      }
    }
  }
  TextFile read = read_text_file_with_status(file, k_max_json_bytes);
  if (!read.text) {
    return signs;
  }
  const bool sign = dataset_checks::shows_old_schema(*read.text, file, role);
  if (cache.store != nullptr) {
    // A sign is found through the file's remembered digest only: kept only when that is.
    const Sha256Digest digest = sha256(*read.text);
    if (remember_digest(*cache.store, cache.run_start_ns, file, digest, read.status)) {
      dataset_checks::keep_old_schema_sign(*cache.store, digest, role, sign);
    }
  }
  return signs_of(sign);
}

void add_signs(OldSchemaSigns& signs, const FileSigns& file_signs,
               const std::filesystem::path& file) {
  signs.old_workload_files += file_signs.old_workload_name ? 1 : 0;
  signs.solution_string_lines += file_signs.solution_string_lines;
  signs.definitions_with_type += file_signs.definition_with_type ? 1 : 0;
  signs.capitalised_languages += file_signs.capitalised_language ? 1 : 0;
  if (file_signs.any()) {
    note_example(signs, file);
  }
  if (file_signs.nested_root && std::find(signs.nested_roots.begin(), signs.nested_roots.end(),
                                          *file_signs.nested_root) == signs.nested_roots.end()) {
    signs.nested_roots.push_back(*file_signs.nested_root);
  }
}

std::string counted(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

} // namespace

bool dataset_checks::shows_old_schema(const std::string& text, const std::filesystem::path& file,
                                      OldSchemaRole role) {
  if (text.size() > k_max_json_bytes) {
    return false; // the look does not read such a file
  }
  const bool is_definition = role == OldSchemaRole::definition;
  if (is_definition ? !may_be_old_definition(text) : !may_have_capitalised_language(text)) {
    return false;
  }
  // Only the members looked at are built: a definition's `type` and `op_type`, a solution's `spec`.
  static const std::vector<std::string_view> k_definition_members = {"type", "op_type"};
  static const std::vector<std::string_view> k_solution_members = {"spec"};
  const auto object =
      parse_object(text, file, is_definition ? k_definition_members : k_solution_members);
  if (!object) {
    return false;
  }
  return is_definition ? is_old_definition(*object) : has_capitalised_language(*object);
}

void dataset_checks::keep_old_schema_sign(ResultCache& store, const Sha256Digest& digest,
                                          OldSchemaRole role, bool sign) {
  store.put(sign_key(digest, role), sign ? "1" : "0");
}

void dataset_checks::sign_for_old_schema(DefinitionJob& job, const JobFiles& files,
                                         const DatasetCache& cache) {
  const auto sign = [&](const JobFile& file, OldSchemaRole role) {
    if (!file.text || !*file.text) {
      return; // not read here (the look reads it, or fails to, on its own)
    }
    const bool shown = shows_old_schema(**file.text, file.path, role);
    job.signed_files.emplace_back(file.path.native(), SignedFile{role, shown});
    if (cache.store != nullptr && file.digest) {
      keep_old_schema_sign(*cache.store, *file.digest, role, shown);
    }
  };
  sign(files.definition, OldSchemaRole::definition);
  for (const JobFile& solution : files.solutions) {
    sign(solution, OldSchemaRole::solution);
  }
}

OldSchemaSigns find_old_schema_signs(const std::filesystem::path& root, ResultCache* store) {
  dataset_checks::RememberedDigests digests;
  DirectoryListings listings;
  return dataset_checks::find_old_schema_signs(root, store, digests, listings);
}

std::vector<std::filesystem::path>
dataset_checks::list_old_schema_candidates(const std::filesystem::path& root,
                                           DirectoryListings& listings) {
  // Unlistable directories are the scan's to report (dataset_scan); here they only hide files.
  // The scan walks the tree in ascending name order beside this walk, sharing its listings: this
  // one goes the other way, so that each lists about half of the directories.
  return detail::list_files_below(root, {".json", ".jsonl"}, &listings,
                                  detail::WalkOrder::names_descending)
      .files;
}

OldSchemaSigns dataset_checks::look_at_old_schema(const std::filesystem::path& root,
                                                  const std::vector<std::filesystem::path>& files,
                                                  ResultCache* store, RememberedDigests& digests,
                                                  const SignedFiles* signed_files) {
  const SignCache cache{store != nullptr && store->enabled() ? store : nullptr,
                        dataset_checks::wall_clock_ns(), &digests, signed_files};
  OldSchemaSigns signs;
  // Looked at in parallel, added up in the listing's order (the examples are the first files).
  std::vector<FileSigns> per_file(files.size());
  detail::parallel_for(files.size(),
                       [&](std::size_t i) { per_file[i] = inspect(root, files[i], cache); });
  for (std::size_t i = 0; i < files.size(); ++i) {
    add_signs(signs, per_file[i], files[i]);
  }
  return signs;
}

OldSchemaSigns dataset_checks::find_old_schema_signs(const std::filesystem::path& root,
                                                     ResultCache* store, RememberedDigests& digests,
                                                     DirectoryListings& listings) {
  return look_at_old_schema(root, list_old_schema_candidates(root, listings), store, digests);
}

std::optional<CheckMessage> old_schema_message(const OldSchemaSigns& signs,
                                               const std::filesystem::path& root,
                                               DefinitionsLoaded loaded) {
  if (!signs.any()) {
    return std::nullopt;
  }
  std::vector<std::string> found;
  std::vector<std::string> fixes;
  if (signs.definitions_with_type > 0) {
    found.push_back(counted(signs.definitions_with_type,
                            "definition has `type` instead of "
                            "`op_type`",
                            "definitions have `type` instead of `op_type`"));
    fixes.push_back("rename `type` to `op_type` in each definition");
  }
  if (signs.capitalised_languages > 0) {
    found.push_back(counted(signs.capitalised_languages,
                            "solution writes `spec.language` "
                            "capitalised",
                            "solutions write `spec.language` capitalised"));
    fixes.push_back("write `spec.language` in lower case (python, triton, cuda, cpp, tilelang)");
  }
  if (signs.old_workload_files > 0) {
    found.push_back(counted(signs.old_workload_files,
                            "workload file is traces/workloads/<op_type>/<name>.workload.jsonl",
                            "workload files are traces/workloads/<op_type>/<name>.workload.jsonl"));
    fixes.push_back("move each to workloads/<op_type>/<name>.jsonl");
  }
  if (signs.solution_string_lines > 0) {
    found.push_back(counted(signs.solution_string_lines,
                            "workload line is a trace record with \"solution\": \"\"",
                            "workload lines are trace records with \"solution\": \"\""));
    fixes.push_back("keep of each workload line only `definition` and `workload`");
  }
  std::vector<std::string> examples;
  for (const auto& file : signs.examples) {
    examples.push_back(file.string());
  }
  std::string text = fmt::format(
      "[fib] {} holds files of the Aug 2025 schema, which fib reads as errors, not as data: {} "
      "(e.g. {}). To convert: {}.",
      root.string(), fmt::join(found, "; "), fmt::join(examples, ", "), fmt::join(fixes, "; "));
  if (!signs.nested_roots.empty()) {
    std::vector<std::string> nested;
    for (const auto& dir : signs.nested_roots) {
      nested.push_back(dir.string());
    }
    text += fmt::format(" Its definitions are not where --dataset looks ({}/definitions/<op_type>/"
                        "<name>.json): the dataset root is {}.",
                        root.string(), fmt::join(nested, ", "));
  }
  if (loaded == DefinitionsLoaded::none) {
    text += " No definition of this tree loaded, so nothing was validated.";
  }
  CheckMessage message;
  message.level = loaded == DefinitionsLoaded::none ? CheckLevel::error : CheckLevel::warning;
  message.code = codes::k_dataset_old_schema;
  message.message = std::move(text);
  return message;
}

} // namespace fib
