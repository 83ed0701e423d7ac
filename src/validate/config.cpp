// fib.toml and pyproject.toml's [tool.fib]: discovery and reading (toml++ at the boundary).

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/io/toml_depth.hpp>
#include <fib/util/closest_match.hpp>
#include <fib/validate/config.hpp>
#include <fib/validate/report.hpp>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <system_error>

namespace fib {
namespace {

constexpr std::uintmax_t k_max_config_bytes = std::uintmax_t{4} << 20;

const std::vector<std::string>& known_keys() {
  static const std::vector<std::string> keys = {
      "baseline", "checks", "ignore", "per-path-ignores", "select", "severity", "strict"};
  return keys;
}

std::string_view toml_type_name(const toml::node& node) {
  switch (node.type()) {
  case toml::node_type::table:
    return "table";
  case toml::node_type::array:
    return "array";
  case toml::node_type::string:
    return "string";
  case toml::node_type::integer:
    return "integer";
  case toml::node_type::floating_point:
    return "float";
  case toml::node_type::boolean:
    return "boolean";
  default:
    return "date or time";
  }
}

// Reports problems of one file, with their lines.
class ConfigReader {
public:
  ConfigReader(const std::filesystem::path& file, DiagnosticSink& sink)
      : m_file(file), m_sink(sink) {}

  // toml++ walks a table in key order: problems are kept and reported in line order by flush().
  void problem(const toml::source_region& where, std::string message) {
    problem_at(where.begin.line, std::move(message));
  }
  void problem_at(std::size_t line, std::string message) {
    Diagnostic d = make_diagnostic(codes::k_config_invalid, std::move(message));
    d.file = m_file;
    d.line = static_cast<int>(line);
    m_problems.push_back(std::move(d));
  }
  bool failed() const { return !m_problems.empty(); }
  void flush() {
    std::stable_sort(m_problems.begin(), m_problems.end(),
                     [](const Diagnostic& a, const Diagnostic& b) { return a.line < b.line; });
    for (Diagnostic& d : m_problems) {
      m_sink.report(std::move(d));
    }
    m_problems.clear();
  }

  std::optional<std::vector<std::string>> strings(const toml::node& node, std::string_view key) {
    const toml::array* array = node.as_array();
    if (array == nullptr) {
      problem(node.source(), fmt::format("'{}' must be an array of strings", key));
      return std::nullopt;
    }
    // Every item that is not a string is reported; the strings are still checked by the caller
    // (so one run names every problem), in their positions (`items`).
    std::vector<std::string> values;
    m_items.clear();
    for (const toml::node& item : *array) {
      const auto* text = item.as_string();
      if (text == nullptr) {
        problem(item.source(), fmt::format("'{}' must be an array of strings, not one with a "
                                           "value of type {}",
                                           key, toml_type_name(item)));
        continue;
      }
      values.push_back(text->get());
      m_items.push_back(&item);
    }
    return values;
  }
  // The nodes of the strings the last strings() returned, in their order.
  const std::vector<const toml::node*>& items() const { return m_items; }

  std::optional<std::vector<std::string>> code_patterns(const toml::node& node,
                                                        std::string_view key) {
    auto values = strings(node, key);
    if (!values) {
      return std::nullopt;
    }
    for (std::size_t i = 0; i < values->size(); ++i) {
      if (const auto reason = code_pattern_problem((*values)[i])) {
        problem(m_items[i]->source(), fmt::format("{}: {}", key, *reason));
      }
    }
    return values;
  }

private:
  std::filesystem::path m_file;
  DiagnosticSink& m_sink;
  std::vector<Diagnostic> m_problems;
  std::vector<const toml::node*> m_items;
};

std::optional<Severity> parse_config_severity(std::string_view text) {
  if (text == "error") {
    return Severity::error;
  }
  if (text == "warning") {
    return Severity::warning;
  }
  if (text == "info" || text == "note") {
    return Severity::note;
  }
  return std::nullopt;
}

// `file` relative to the working directory when it lies below it (as messages show it).
std::filesystem::path as_shown(const std::filesystem::path& file) {
  std::error_code error;
  const auto cwd = std::filesystem::current_path(error);
  if (error) {
    return file;
  }
  std::filesystem::path shown = path_relative_to(file, cwd);
  return shown.empty() || *shown.begin() == ".." ? file : shown;
}

void read_checks(ConfigReader& reader, const toml::node& node, FibConfig& config) {
  auto names = reader.strings(node, "checks");
  if (!names) {
    return;
  }
  std::vector<std::string> known;
  for (const Category category : k_category_order) {
    known.emplace_back(to_string(category));
  }
  for (std::size_t i = 0; i < names->size(); ++i) {
    if (!parse_category((*names)[i])) {
      reader.problem(reader.items()[i]->source(),
                     fmt::format("checks: unknown check '{}', valid: {}", (*names)[i],
                                 fmt::join(known, ", ")));
    }
  }
  config.checks = std::move(*names);
}

void read_per_path(ConfigReader& reader, const toml::node& node, FibConfig& config) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    reader.problem(node.source(), "'per-path-ignores' must be a table of glob = [codes]");
    return;
  }
  for (const auto& [glob, value] : *table) {
    if (glob.str().empty()) {
      reader.problem(glob.source(), "per-path-ignores: a glob must not be empty");
      continue;
    }
    if (auto patterns = reader.code_patterns(value, "per-path-ignores")) {
      config.policy.per_path_ignores.push_back({std::string(glob.str()), std::move(*patterns)});
    }
  }
}

void read_severity(ConfigReader& reader, const toml::node& node, FibConfig& config) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    reader.problem(node.source(), "'severity' must be a table of code = \"error\"|\"warning\"|"
                                  "\"info\"");
    return;
  }
  for (const auto& [pattern, value] : *table) {
    if (const auto reason = code_pattern_problem(pattern.str())) {
      reader.problem(pattern.source(), fmt::format("severity: {}", *reason));
      continue;
    }
    if (value.is_table()) {
      reader.problem(pattern.source(),
                     fmt::format("severity: '{}' is read as a table: quote a dotted code, as in "
                                 "\"{}.…\" = \"error\"",
                                 pattern.str(), pattern.str()));
      continue;
    }
    const auto* text = value.as_string();
    const auto severity = text != nullptr ? parse_config_severity(text->get()) : std::nullopt;
    if (!severity) {
      reader.problem(value.source(),
                     fmt::format("severity: the value of '{}' must be \"error\", \"warning\" "
                                 "or \"info\", not {}",
                                 pattern.str(),
                                 text != nullptr
                                     ? fmt::format("'{}'", text->get())
                                     : fmt::format("a value of type {}", toml_type_name(value))));
      continue;
    }
    config.policy.severities.push_back({std::string(pattern.str()), *severity});
  }
}

void read_table(ConfigReader& reader, const toml::table& table, FibConfig& config) {
  const std::filesystem::path& directory = config.policy.base;
  for (const auto& [key, value] : table) {
    const std::string name(key.str());
    if (name == "strict") {
      if (const auto* flag = value.as_boolean()) {
        config.strict = flag->get();
      } else {
        reader.problem(value.source(), "'strict' must be true or false");
      }
    } else if (name == "checks") {
      read_checks(reader, value, config);
    } else if (name == "select") {
      if (auto patterns = reader.code_patterns(value, "select")) {
        config.policy.select = std::move(*patterns);
      }
    } else if (name == "ignore") {
      if (auto patterns = reader.code_patterns(value, "ignore")) {
        config.policy.ignore = std::move(*patterns);
      }
    } else if (name == "per-path-ignores") {
      read_per_path(reader, value, config);
    } else if (name == "severity") {
      read_severity(reader, value, config);
    } else if (name == "baseline") {
      const auto* text = value.as_string();
      if (text == nullptr || text->get().empty()) {
        reader.problem(value.source(), "'baseline' must be a file name (a non-empty string)");
      } else {
        config.baseline = as_shown((directory / text->get()).lexically_normal());
      }
    } else {
      std::string message = fmt::format("unknown key '{}'", name);
      if (const std::string close = closest_match(name, known_keys()); !close.empty()) {
        message += fmt::format("; did you mean '{}'?", close);
      }
      reader.problem(key.source(), std::move(message));
    }
  }
}

bool is_pyproject(const std::filesystem::path& file) {
  return file.filename() == "pyproject.toml";
}

// The [tool.fib] table of a parsed pyproject.toml, or nullptr.
const toml::table* tool_fib(const toml::table& document) {
  const toml::table* tool = document["tool"].as_table();
  return tool == nullptr ? nullptr : (*tool)["fib"].as_table();
}

// Whether discovery stops at this pyproject.toml. One that cannot be read (too large, no
// permission) is taken, so that load_config says why rather than fib passing over a
// configuration silently; one that does not parse is taken only when its text names tool.fib (a
// broken pyproject.toml of another tool in a parent directory does not stop fib).
bool pyproject_has_tool_fib(const std::filesystem::path& file) {
  auto text = read_text_file(file, k_max_config_bytes);
  if (!text) {
    return true;
  }
  if (text->find("fib") == std::string::npos) {
    return false;
  }
  if (toml_key_too_deep(*text)) {
    return true;
  }
  try {
    const toml::table document = toml::parse(*text, file.string());
    return tool_fib(document) != nullptr;
  } catch (const toml::parse_error&) {
    return text->find("tool.fib") != std::string::npos;
  }
}

} // namespace

std::optional<std::filesystem::path> find_config(const std::filesystem::path& start) {
  std::error_code error;
  std::filesystem::path directory = std::filesystem::absolute(start, error).lexically_normal();
  if (error) {
    return std::nullopt;
  }
  if (!std::filesystem::is_directory(directory, error)) {
    directory = directory.parent_path();
  }
  while (true) {
    if (const auto candidate = directory / "fib.toml";
        std::filesystem::is_regular_file(candidate, error)) {
      return as_shown(candidate);
    }
    if (const auto candidate = directory / "pyproject.toml";
        std::filesystem::is_regular_file(candidate, error) && pyproject_has_tool_fib(candidate)) {
      return as_shown(candidate);
    }
    if (!directory.has_relative_path()) {
      return std::nullopt;
    }
    directory = directory.parent_path();
  }
}

std::optional<FibConfig> load_config(const std::filesystem::path& file, DiagnosticSink& sink) {
  auto text = read_text_file(file, k_max_config_bytes);
  if (!text) {
    sink.report(text.error());
    return std::nullopt;
  }
  FibConfig config;
  config.file = file;
  config.policy.base = std::filesystem::absolute(file).lexically_normal().parent_path();
  ConfigReader reader(file, sink);
  if (const auto line = toml_key_too_deep(*text)) {
    reader.problem_at(*line,
                      fmt::format("a key has more than {} dotted parts", k_max_toml_key_parts));
    reader.flush();
    return std::nullopt;
  }
  toml::table document;
  try {
    document = toml::parse(*text, file.string());
  } catch (const toml::parse_error& error) {
    reader.problem(error.source(), fmt::format("TOML: {}", error.description()));
    reader.flush();
    return std::nullopt;
  }
  if (is_pyproject(file)) {
    const toml::table* table = tool_fib(document);
    if (table == nullptr) {
      reader.problem(document.source(), "pyproject.toml has no [tool.fib] table");
      reader.flush();
      return std::nullopt;
    }
    read_table(reader, *table, config);
  } else {
    read_table(reader, document, config);
  }
  if (reader.failed()) {
    reader.flush();
    return std::nullopt;
  }
  return config;
}

} // namespace fib
