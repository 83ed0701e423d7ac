// The decisions file: its strict parser, and applying a definition's answers before the rules.

#include "fib/normalize/normalize.hpp"

#include "normalize/context.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/dtype.hpp>

#include <fmt/format.h>

#include <limits>

namespace fib {
namespace {

using detail::string_member;

Diagnostic invalid(std::string pointer, std::string message) {
  Diagnostic d = make_diagnostic(codes::k_normalize_decisions_invalid, std::move(message));
  d.pointer = std::move(pointer);
  return d;
}

// Reads the decisions of a decisions file, reporting every problem (with file and line) to the
// sink and remembering whether there was one.
class DecisionsReader {
public:
  DecisionsReader(const JsonDocument& document, DiagnosticSink& sink)
      : m_document(document), m_sink(sink) {}

  bool ok() const { return m_ok; }

  void fail(std::string pointer, std::string message) {
    Diagnostic d = invalid(std::move(pointer), std::move(message));
    d.file = m_document.file;
    d.line = m_document.line_of(d.pointer);
    m_sink.report(std::move(d));
    m_ok = false;
  }

  // The decisions of one definition, whose entry is the object `entry` at `base`.
  void read_definition(const Json& entry, const std::string& base, DefinitionDecisions& d) {
    for (const auto& [key, value] : entry.items()) {
      const std::string pointer = pointer_append(base, key);
      if (key == "name") {
        if (!value.is_string() || value.get<std::string>().empty()) {
          fail(pointer, "must be a non-empty string");
        } else {
          d.name = value.get<std::string>();
        }
      } else if (key == "input_dtypes") {
        string_map(value, pointer, d.input_dtypes);
        check_dtypes(d.input_dtypes, pointer);
      } else if (key == "output_dtypes") {
        string_map(value, pointer, d.output_dtypes);
        check_dtypes(d.output_dtypes, pointer);
      } else if (key == "drop_inputs") {
        string_set(value, pointer, d.drop_inputs);
      } else if (key == "drop_outputs") {
        string_set(value, pointer, d.drop_outputs);
      } else if (key == "rename_outputs") {
        string_map(value, pointer, d.rename_outputs);
      } else if (key == "run_arguments") {
        string_map(value, pointer, d.run_arguments);
      } else if (key == "axis_values") {
        axis_values(value, pointer, d.axis_values);
      } else {
        fail(pointer, fmt::format("unknown decision '{}' (expected name, input_dtypes, "
                                  "output_dtypes, drop_inputs, drop_outputs, rename_outputs, "
                                  "axis_values or run_arguments)",
                                  key));
      }
    }
  }

private:
  void string_map(const Json& value, const std::string& pointer,
                  std::map<std::string, std::string>& out) {
    if (!value.is_object()) {
      fail(pointer, "must be an object of strings");
      return;
    }
    for (const auto& [k, v] : value.items()) {
      if (!v.is_string()) {
        fail(pointer_append(pointer, k), "must be a string");
        continue;
      }
      out[k] = v.get<std::string>();
    }
  }

  void string_set(const Json& value, const std::string& pointer, std::set<std::string>& out) {
    if (!value.is_array()) {
      fail(pointer, "must be an array of strings");
      return;
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string()) {
        fail(pointer_append(pointer, i), "must be a string");
        continue;
      }
      out.insert(value[i].get<std::string>());
    }
  }

  void check_dtypes(const std::map<std::string, std::string>& dtypes, const std::string& pointer) {
    for (const auto& [name, dtype] : dtypes) {
      if (!parse_dtype(dtype)) {
        fail(pointer_append(pointer, name),
             fmt::format("'{}' is not a dtype flashinfer-bench accepts", dtype));
      }
    }
  }

  void axis_values(const Json& value, const std::string& pointer,
                   std::map<std::string, std::int64_t>& out) {
    if (!value.is_object()) {
      fail(pointer, "must be an object of non-negative integers");
      return;
    }
    for (const auto& [axis, v] : value.items()) {
      const bool fits =
          v.is_number_unsigned()
              ? v.get<std::uint64_t>() <=
                    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
              : v.is_number_integer() && v.get<std::int64_t>() >= 0;
      if (!fits) {
        fail(pointer_append(pointer, axis), "must be a non-negative integer");
        continue;
      }
      out[axis] = v.get<std::int64_t>();
    }
  }

  const JsonDocument& m_document;
  DiagnosticSink& m_sink;
  bool m_ok = true;
};

// A decision whose target does not exist: a typo in the decisions file must not pass unnoticed.
void not_applied(NormalizeContext& context, std::string pointer, std::string_view key,
                 std::string_view what, std::string_view target) {
  context.question(codes::k_normalize_decision, std::move(pointer),
                   fmt::format("the decisions file's \"{}\" names {} '{}', which this definition "
                               "does not have; nothing was changed",
                               key, what, target));
}

const DefinitionDecisions* find_decisions(const NormalizeContext& context) {
  return find_definition_decisions(*context.options.decisions, context.input.file, context.name());
}

void drop_tensors(NormalizeContext& context) {
  const DefinitionDecisions& d = *context.decisions;
  for (const auto& input : d.drop_inputs) {
    if (context.inputs().contains(input)) {
      context.inputs().erase(input);
      context.absent_inputs.insert(input);
      context.applied(codes::k_normalize_decision, pointer_append("/inputs", input),
                      fmt::format("dropped input '{}' (decisions file)", input));
    }
  }
  for (const auto& output : d.drop_outputs) {
    if (context.outputs().contains(output)) {
      context.outputs().erase(output);
      context.applied(codes::k_normalize_decision, pointer_append("/outputs", output),
                      fmt::format("dropped output '{}' (decisions file)", output));
    }
  }
}

void rename_outputs(NormalizeContext& context) {
  Json& outputs = context.outputs();
  for (const auto& [from, to] : context.decisions->rename_outputs) {
    if (outputs.contains(from) && !outputs.contains(to) && detail::is_python_identifier(to)) {
      detail::rename_key(outputs, from, to);
      context.applied(codes::k_normalize_decision, pointer_append("/outputs", to),
                      fmt::format("renamed output '{}' to '{}' (decisions file)", from, to));
    } else if (outputs.contains(from)) {
      context.question(codes::k_normalize_decision, pointer_append("/outputs", from),
                       fmt::format("the decisions file renames output '{}' to '{}', which is "
                                   "taken or not a Python identifier",
                                   from, to));
    } else if (!outputs.contains(to)) {
      not_applied(context, pointer_append("/outputs", from), "rename_outputs", "output", from);
    }
  }
}

// `section_name`: "inputs" or "outputs".
void set_dtypes(NormalizeContext& context, std::string_view section_name,
                const std::map<std::string, std::string>& dtypes) {
  Json& section = context.doc[std::string(section_name)];
  const std::string section_pointer = std::string("/").append(section_name);
  const bool inputs = section_name == "inputs";
  for (const auto& [tensor, dtype] : dtypes) {
    if (!section.contains(tensor) || !section[tensor].is_object()) {
      const bool dropped = inputs && context.decisions->drop_inputs.contains(tensor);
      if (!dropped) {
        not_applied(context, pointer_append(section_pointer, tensor),
                    inputs ? "input_dtypes" : "output_dtypes", inputs ? "input" : "output", tensor);
      }
      continue;
    }
    Json& spec = section[tensor];
    if (string_member(spec, "dtype") != dtype) {
      const std::string before = string_member(spec, "dtype");
      spec["dtype"] = dtype;
      context.applied(codes::k_normalize_decision,
                      pointer_append(pointer_append(section_pointer, tensor), "dtype"),
                      fmt::format("dtype of '{}' set to {} (was {}; decisions file)", tensor, dtype,
                                  before.empty() ? "missing" : before));
    }
  }
}

void set_axis_values(NormalizeContext& context) {
  const DefinitionDecisions& d = *context.decisions;
  if (d.axis_values.empty() || !context.has_axes()) {
    return;
  }
  Json& axes = context.doc["axes"];
  for (const auto& [axis, value] : d.axis_values) {
    if (!axes.contains(axis) || !axes[axis].is_object()) {
      not_applied(context, pointer_append("/axes", axis), "axis_values", "axis", axis);
      continue;
    }
    Json& spec = axes[axis];
    if (string_member(spec, "type") == "const" && spec.contains("value") &&
        spec["value"] == value) {
      continue;
    }
    spec["type"] = "const";
    spec["value"] = value;
    context.applied(codes::k_normalize_decision, pointer_append("/axes", axis),
                    fmt::format("axis '{}' is const {} (decisions file)", axis, value));
  }
}

} // namespace

Expected<NormalizeDecisions> parse_normalize_decisions(const JsonDocument& document,
                                                       DiagnosticSink& sink) {
  DecisionsReader reader(document, sink);
  const Json& root = document.root;
  if (!root.is_object()) {
    reader.fail("", "a decisions file is a JSON object with a \"definitions\" or \"files\" "
                    "object");
    return unexpected(invalid("", "the decisions file is not valid"));
  }
  for (const auto& [key, value] : root.items()) {
    if (key != "definitions" && key != "files") {
      reader.fail(pointer_append("", key),
                  fmt::format("unknown key '{}' (expected \"definitions\" or \"files\")", key));
    }
  }
  const auto definitions = root.find("definitions");
  const auto files = root.find("files");
  if (definitions == root.end() && files == root.end()) {
    reader.fail("/definitions", "\"definitions\" (keyed by definition name) or \"files\" "
                                "(keyed by source path) must be an object");
    return unexpected(invalid("", "the decisions file is not valid"));
  }
  NormalizeDecisions decisions;
  decisions.file = document.file;
  const auto read_section = [&](Json::const_iterator section, std::string_view section_name,
                                const auto& store) {
    const std::string section_pointer = pointer_append("", section_name);
    if (!section->is_object()) {
      reader.fail(section_pointer, fmt::format("\"{}\" must be an object", section_name));
      return;
    }
    for (const auto& [key, entry] : section->items()) {
      const std::string base = pointer_append(section_pointer, key);
      if (!entry.is_object()) {
        reader.fail(base, "must be an object of decisions");
        continue;
      }
      if (key.empty()) {
        reader.fail(base, "must not be empty");
        continue;
      }
      DefinitionDecisions& d = store(key);
      d.pointer = base;
      d.line = document.line_of(base);
      reader.read_definition(entry, base, d);
    }
  };
  if (definitions != root.end()) {
    read_section(definitions, "definitions", [&](const std::string& key) -> DefinitionDecisions& {
      return decisions.definitions[key];
    });
  }
  if (files != root.end()) {
    read_section(files, "files", [&](const std::string& key) -> DefinitionDecisions& {
      return decisions.files[resolved_source_path(key)];
    });
  }
  if (!reader.ok()) {
    Diagnostic d = invalid("", "the decisions file is not valid");
    d.file = document.file;
    return unexpected(std::move(d));
  }
  return decisions;
}

std::filesystem::path resolved_source_path(const std::filesystem::path& path) {
  std::error_code ec;
  auto absolute = std::filesystem::absolute(path, ec);
  if (ec) {
    return path.lexically_normal();
  }
  auto resolved = std::filesystem::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : resolved;
}

const DefinitionDecisions* find_definition_decisions(const NormalizeDecisions& decisions,
                                                     const std::filesystem::path& source,
                                                     std::string_view name) {
  if (!decisions.files.empty() && !source.empty()) {
    if (const auto it = decisions.files.find(resolved_source_path(source));
        it != decisions.files.end()) {
      return &it->second;
    }
  }
  if (const auto it = decisions.definitions.find(std::string(name));
      it != decisions.definitions.end()) {
    return &it->second;
  }
  for (const auto& [key, entry] : decisions.definitions) {
    if (entry.name && *entry.name == name) {
      return &entry;
    }
  }
  return nullptr;
}

std::vector<Diagnostic> unused_decisions(const NormalizeDecisions& decisions,
                                         const std::set<std::string>& used) {
  std::vector<Diagnostic> out;
  const auto report = [&](const DefinitionDecisions& entry, std::string message) {
    if (used.contains(entry.pointer)) {
      return;
    }
    Diagnostic d = make_diagnostic(codes::k_normalize_decision_unused, std::move(message));
    d.file = decisions.file;
    d.pointer = entry.pointer;
    d.line = entry.line;
    d.hint = "check the spelling against the definition's `name` or the file's path";
    out.push_back(std::move(d));
  };
  for (const auto& [name, entry] : decisions.definitions) {
    report(entry,
           fmt::format("the decisions for '{}' matched no input; nothing was changed", name));
  }
  for (const auto& [path, entry] : decisions.files) {
    report(entry, fmt::format("the decisions for the file {} matched no input; nothing was "
                              "changed",
                              path.string()));
  }
  return out;
}

void apply_decisions(NormalizeContext& context) {
  if (context.options.decisions == nullptr) {
    return;
  }
  context.decisions = find_decisions(context);
  if (context.decisions == nullptr) {
    return;
  }
  context.decisions_entry = context.decisions->pointer;
  const DefinitionDecisions& d = *context.decisions;
  const std::string current = context.name();
  if (d.name && *d.name != current) {
    context.doc["name"] = *d.name;
    context.applied(codes::k_normalize_decision, "/name",
                    fmt::format("renamed '{}' to '{}' (decisions file)", current, *d.name));
  }
  drop_tensors(context);
  rename_outputs(context);
  set_dtypes(context, "inputs", d.input_dtypes);
  set_dtypes(context, "outputs", d.output_dtypes);
  set_axis_values(context);
}

} // namespace fib

namespace fib {

void check_decided_outputs(NormalizeContext& context) {
  if (context.decisions == nullptr || context.decisions->drop_outputs.empty()) {
    return;
  }
  const PythonFunction* function = context.callee();
  if (function == nullptr || !function->return_arity || *function->return_arity < 0) {
    return;
  }
  const auto returned = static_cast<std::size_t>(*function->return_arity);
  const std::size_t outputs = context.outputs().size();
  if (outputs >= returned) {
    return;
  }
  context.add(codes::k_normalize_decision_outputs, FindingKind::advice, "/outputs",
              fmt::format("the decisions file's \"drop_outputs\" leaves {} output{} but the "
                          "reference returns {} value{}: the outputs cannot be matched to what "
                          "it returns",
                          outputs, outputs == 1 ? "" : "s", returned, returned == 1 ? "" : "s"),
              fmt::format("drop fewer outputs (decisions entry {})", context.decisions->pointer));
}

} // namespace fib
