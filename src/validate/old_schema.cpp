// old_schema: recognising a tree of the Aug 2025 schema, and the one message that says so.

#include "fib/validate/old_schema.hpp"

#include "util/file_walk.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fib {
namespace {

constexpr std::uintmax_t k_max_json_bytes = std::uintmax_t{4} << 20;
constexpr std::uintmax_t k_max_jsonl_bytes = std::uintmax_t{64} << 20;
constexpr std::size_t k_max_examples = 3;

// The part of `path` below `root`, split into components.
std::vector<std::string> components_below(const std::filesystem::path& root,
                                          const std::filesystem::path& path) {
  std::vector<std::string> out;
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

// The members `kept` of the object in `file` (checked whole), or nullopt when it is not one.
std::optional<Json> read_object(const std::filesystem::path& file, std::uintmax_t max_bytes,
                                const std::vector<std::string_view>& kept) {
  auto text = read_text_file(file, max_bytes);
  if (!text) {
    return std::nullopt;
  }
  auto document = parse_json_members(*text, file, kept);
  if (!document || !document->root.is_object()) {
    return std::nullopt;
  }
  return std::move(document->root);
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
  for (const JsonlLine& line : split_jsonl_lines(*text)) {
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

// Looks at one listed file.
void inspect(const std::filesystem::path& root, const std::filesystem::path& file,
             OldSchemaSigns& signs) {
  const std::vector<std::string> parts = components_below(root, file);
  if (parts.empty()) {
    return;
  }
  if (file.extension() == ".jsonl") {
    // Only the old layout's files are read again: a workloads/ file with such lines gets its own
    // errors from the workload category.
    const std::size_t workloads = last_directory(parts, "workloads");
    if (workloads == std::string::npos || workloads == 0 || parts[workloads - 1] != "traces") {
      return;
    }
    const bool old_name = file.filename().string().ends_with(".workload.jsonl");
    const std::size_t lines = solution_string_lines(file);
    signs.old_workload_files += old_name ? 1 : 0;
    signs.solution_string_lines += lines;
    if (old_name || lines > 0) {
      note_example(signs, file);
    }
    return;
  }
  const std::size_t definitions = last_directory(parts, "definitions");
  const std::size_t solutions = last_directory(parts, "solutions");
  if (definitions == std::string::npos && solutions == std::string::npos) {
    return;
  }
  const bool is_definition = definitions != std::string::npos &&
                             (solutions == std::string::npos || definitions > solutions);
  // Only the members looked at are built: a definition's `type` and `op_type`, a solution's `spec`.
  static const std::vector<std::string_view> k_definition_members = {"type", "op_type"};
  static const std::vector<std::string_view> k_solution_members = {"spec"};
  const auto object = read_object(file, k_max_json_bytes,
                                  is_definition ? k_definition_members : k_solution_members);
  if (!object) {
    return;
  }
  if (is_definition && is_old_definition(*object)) {
    ++signs.definitions_with_type;
    note_example(signs, file);
    if (definitions > 0) {
      std::filesystem::path nested = root;
      for (std::size_t i = 0; i < definitions; ++i) {
        nested /= parts[i];
      }
      if (std::find(signs.nested_roots.begin(), signs.nested_roots.end(), nested) ==
          signs.nested_roots.end()) {
        signs.nested_roots.push_back(nested);
      }
    }
  } else if (!is_definition && has_capitalised_language(*object)) {
    ++signs.capitalised_languages;
    note_example(signs, file);
  }
}

std::string counted(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

} // namespace

OldSchemaSigns find_old_schema_signs(const std::filesystem::path& root) {
  OldSchemaSigns signs;
  // Unlistable directories are the scan's to report (dataset_scan); here they only hide files.
  const detail::FilesBelow found = detail::list_files_below(root, {".json", ".jsonl"});
  for (const std::filesystem::path& file : found.files) {
    inspect(root, file, signs);
  }
  return signs;
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
