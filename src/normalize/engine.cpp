// normalize_definition: the rules of docs/normalize.md applied to one definition document.

#include "fib/normalize/normalize.hpp"

#include "util/strings.hpp"

#include <fib/base/codes.hpp>
#include <fib/constraint/constraint.hpp>
#include <fib/io/dtype.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>

namespace fib {
namespace {

constexpr std::string_view k_unknown = "unknown";
constexpr std::string_view k_reference_marker = "# ----- reference -----";

constexpr std::array<std::string_view, 6> k_plan_time_index_names = {
    "kv_indptr",       "kv_indices",       "qo_indptr",
    "paged_kv_indptr", "paged_kv_indices", "kv_last_page_len"};

constexpr std::array<std::string_view, 35> k_python_keywords = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

bool is_python_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front())) != 0) {
    return false;
  }
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') {
      return false;
    }
  }
  return std::find(k_python_keywords.begin(), k_python_keywords.end(), name) ==
         k_python_keywords.end();
}

bool is_integer_literal(std::string_view text) {
  return !text.empty() && text.size() <= 18 && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// Index-like tensor names whose `unknown` dtype is int32 in FlashInfer (N5, N11).
bool is_index_like(std::string_view name) {
  for (const std::string_view suffix : {"indptr", "indices", "_ids", "last_page_len", "cu_seqlens",
                                        "seq_lens", "page_table", "block_tables"}) {
    if (name.ends_with(suffix)) {
      return true;
    }
  }
  return name == "positions" || name == "pos_ids" || name == "indices";
}

std::string string_member(const Json& object, std::string_view key) {
  if (!object.is_object()) {
    return {};
  }
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

bool is_optional(const Json& spec) {
  if (!spec.is_object()) {
    return false;
  }
  const auto it = spec.find("optional");
  return it != spec.end() && it->is_boolean() && it->get<bool>();
}

bool is_scalar(const Json& spec) {
  if (!spec.is_object()) {
    return false;
  }
  const auto it = spec.find("shape");
  return it == spec.end() || it->is_null();
}

std::vector<std::string> shape_names(const Json& spec) {
  std::vector<std::string> names;
  if (!spec.is_object()) {
    return names;
  }
  const auto it = spec.find("shape");
  if (it == spec.end() || !it->is_array()) {
    return names;
  }
  for (const auto& entry : *it) {
    if (entry.is_string()) {
      names.push_back(entry.get<std::string>());
    }
  }
  return names;
}

// Replaces the key `from` of `object` by `to`, keeping its position.
void rename_key(Json& object, const std::string& from, const std::string& to) {
  Json renamed = Json::object();
  for (auto& [key, value] : object.items()) {
    renamed[key == from ? to : key] = std::move(value);
  }
  object = std::move(renamed);
}

class Normalizer {
public:
  Normalizer(const JsonDocument& input, const NormalizeOptions& options, PythonFrontend& python)
      : m_input(input), m_options(options), m_python(python), m_doc(input.root) {
    if (m_doc.is_object() && m_doc.contains("inputs") && m_doc["inputs"].is_object()) {
      for (const auto& [name, spec] : m_doc["inputs"].items()) {
        m_original_inputs.push_back(name);
      }
    }
  }

  Expected<NormalizedDefinition> run() {
    if (!m_doc.is_object() || !m_doc.contains("inputs") || !m_doc["inputs"].is_object() ||
        !m_doc.contains("outputs") || !m_doc["outputs"].is_object()) {
      Diagnostic d = make_diagnostic(
          codes::k_normalize_not_definition,
          "not a definition: expected a JSON object with \"inputs\" and \"outputs\" objects");
      d.file = m_input.file;
      return unexpected(std::move(d));
    }
    if (auto failure = analyse_reference()) {
      return unexpected(std::move(*failure));
    }
    apply_decisions();
    check_reference_present();
    float64_scalars();
    unknown_dtypes();
    non_numeric_scalars();
    unsupported_dtypes();
    shape_names_not_axes();
    const_axes_without_value();
    output_only_var_axes();
    in_place_outputs();
    import_preamble();
    entry_point();
    unresolved_names();
    head_counts();
    semantic_scalars();
    extras();
    names();
    output_dtype_sanity();
    NormalizedDefinition result;
    result.changed = m_doc != m_input.root;
    result.document = std::move(m_doc);
    result.findings = std::move(m_findings);
    return result;
  }

private:
  // --- reporting ---

  void add(std::string_view code, FindingKind kind, std::string pointer, std::string message,
           std::string hint = {}) {
    Diagnostic d = make_diagnostic(code, std::move(message));
    if (kind == FindingKind::question && d.severity == Severity::note) {
      d.severity = Severity::warning;
    }
    d.file = m_input.file;
    d.pointer = std::move(pointer);
    d.hint = std::move(hint);
    m_findings.push_back(RuleFinding{std::move(d), kind});
  }

  void applied(std::string_view code, std::string pointer, std::string message) {
    add(code, FindingKind::applied, std::move(pointer), std::move(message));
  }

  void question(std::string_view code, std::string pointer, std::string message,
                std::string hint = {}) {
    add(code, FindingKind::question, std::move(pointer), "decision needed: " + message,
        std::move(hint));
  }

  // Whether the W rule `id` may change the document; when it may not, asks instead.
  bool enabled(std::string_view id) const {
    return !m_options.disabled_rules.contains(std::string(id));
  }

  std::string decision_hint(std::string_view key, std::string_view example) const {
    return fmt::format("answer it in a decisions file (--decisions): {{\"definitions\": {{\"{}\": "
                       "{{\"{}\": {}}}}}}}",
                       name(), key, example);
  }

  std::string name() const { return string_member(m_doc, "name"); }
  Json& inputs() { return m_doc["inputs"]; }
  Json& outputs() { return m_doc["outputs"]; }

  // --- reference analysis ---

  // The environment diagnostic when Python could not analyse the reference.
  std::optional<Diagnostic> analyse_reference() {
    const auto it = m_doc.find("reference");
    if (it == m_doc.end() || !it->is_string() || it->get<std::string>().empty()) {
      return std::nullopt;
    }
    auto structure = m_python.analyze_structure(it->get<std::string>());
    if (!structure) {
      return structure.error();
    }
    m_structure = std::move(*structure);
    if (m_structure->syntax_error) {
      return std::nullopt;
    }
    for (const auto& function : m_structure->functions) {
      if (function.name == "run" && !function.is_async) {
        m_existing_run = &function;
      }
    }
    const auto lines = detail::split_on_newlines(it->get_ref<const std::string&>());
    int marker = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (detail::trim(lines[i]) == k_reference_marker) {
        marker = static_cast<int>(i) + 1;
      }
    }
    if (marker > 0) {
      for (const auto& function : m_structure->functions) {
        if (function.line > marker) {
          m_entry = &function;
          break;
        }
      }
    }
    if (m_entry == nullptr && !m_structure->functions.empty()) {
      m_entry = &m_structure->functions.back();
    }
    return std::nullopt;
  }

  // The function bench will call: an existing `run`, else the entry the wrapper will call.
  const PythonFunction* callee() const {
    return m_existing_run != nullptr ? m_existing_run : m_entry;
  }

  const PythonParameter* entry_parameter(std::string_view parameter) const {
    if (m_entry == nullptr) {
      return nullptr;
    }
    for (const auto& p : m_entry->parameters) {
      if (p.name == parameter) {
        return &p;
      }
    }
    return nullptr;
  }

  // Whether the entry needs a value for `input` that nothing else can give: it names a parameter
  // without default (and no decision supplies it).
  bool entry_requires(std::string_view input) const {
    const PythonParameter* p = entry_parameter(input);
    return p != nullptr && p->has_default == HasDefault::no && !decisions_supply(input);
  }

  bool decisions_supply(std::string_view parameter) const {
    return m_decisions != nullptr && m_decisions->run_arguments.contains(std::string(parameter));
  }

  // --- decisions ---

  void apply_decisions() {
    if (m_options.decisions == nullptr) {
      return;
    }
    const std::string current = name();
    for (const auto& [key, decisions] : m_options.decisions->definitions) {
      if (key == current || (decisions.name && *decisions.name == current)) {
        m_decisions = &decisions;
        break;
      }
    }
    if (m_decisions == nullptr) {
      return;
    }
    const DefinitionDecisions& d = *m_decisions;
    if (d.name && *d.name != current) {
      m_doc["name"] = *d.name;
      applied(codes::k_normalize_decision, "/name",
              fmt::format("renamed '{}' to '{}' (decisions file)", current, *d.name));
    }
    for (const auto& input : d.drop_inputs) {
      if (inputs().contains(input)) {
        inputs().erase(input);
        m_absent_inputs.insert(input);
        applied(codes::k_normalize_decision, pointer_append("/inputs", input),
                fmt::format("dropped input '{}' (decisions file)", input));
      }
    }
    for (const auto& output : d.drop_outputs) {
      if (outputs().contains(output)) {
        outputs().erase(output);
        applied(codes::k_normalize_decision, pointer_append("/outputs", output),
                fmt::format("dropped output '{}' (decisions file)", output));
      }
    }
    for (const auto& [from, to] : d.rename_outputs) {
      if (outputs().contains(from) && !outputs().contains(to) && is_python_identifier(to)) {
        rename_key(outputs(), from, to);
        applied(codes::k_normalize_decision, pointer_append("/outputs", to),
                fmt::format("renamed output '{}' to '{}' (decisions file)", from, to));
      } else if (outputs().contains(from)) {
        question(codes::k_normalize_decision, pointer_append("/outputs", from),
                 fmt::format("the decisions file renames output '{}' to '{}', which is taken or "
                             "not a Python identifier",
                             from, to));
      } else if (!outputs().contains(to)) {
        not_applied(pointer_append("/outputs", from), "rename_outputs", "output", from);
      }
    }
    const auto set_dtypes = [&](Json& section, std::string_view section_name,
                                const std::map<std::string, std::string>& dtypes) {
      for (const auto& [tensor, dtype] : dtypes) {
        if (!section.contains(tensor) || !section[tensor].is_object()) {
          const bool dropped = section_name == "inputs" && d.drop_inputs.contains(tensor);
          if (!dropped) {
            not_applied(pointer_append(std::string("/").append(section_name), tensor),
                        section_name == "inputs" ? "input_dtypes" : "output_dtypes",
                        section_name == "inputs" ? "input" : "output", tensor);
          }
          continue;
        }
        Json& spec = section[tensor];
        if (string_member(spec, "dtype") != dtype) {
          const std::string before = string_member(spec, "dtype");
          spec["dtype"] = dtype;
          applied(codes::k_normalize_decision,
                  pointer_append(pointer_append(std::string("/").append(section_name), tensor),
                                 "dtype"),
                  fmt::format("dtype of '{}' set to {} (was {}; decisions file)", tensor, dtype,
                              before.empty() ? "missing" : before));
        }
      }
    };
    set_dtypes(inputs(), "inputs", d.input_dtypes);
    set_dtypes(outputs(), "outputs", d.output_dtypes);
    if (!d.axis_values.empty() && m_doc.contains("axes") && m_doc["axes"].is_object()) {
      Json& axes = m_doc["axes"];
      for (const auto& [axis, value] : d.axis_values) {
        if (!axes.contains(axis) || !axes[axis].is_object()) {
          not_applied(pointer_append("/axes", axis), "axis_values", "axis", axis);
          continue;
        }
        Json& spec = axes[axis];
        if (string_member(spec, "type") == "const" && spec.contains("value") &&
            spec["value"] == value) {
          continue;
        }
        spec["type"] = "const";
        spec["value"] = value;
        applied(codes::k_normalize_decision, pointer_append("/axes", axis),
                fmt::format("axis '{}' is const {} (decisions file)", axis, value));
      }
    }
  }

  // A decision whose target does not exist: a typo in the decisions file must not pass unnoticed.
  void not_applied(std::string pointer, std::string_view key, std::string_view what,
                   std::string_view target) {
    question(codes::k_normalize_decision, std::move(pointer),
             fmt::format("the decisions file's \"{}\" names {} '{}', which this definition does "
                         "not have; nothing was changed",
                         key, what, target));
  }

  // --- N16 ---

  void check_reference_present() {
    const auto it = m_doc.find("reference");
    if (it != m_doc.end() && it->is_string() && !it->get<std::string>().empty()) {
      return;
    }
    std::string status = "no status: tag";
    if (m_doc.contains("tags") && m_doc["tags"].is_array()) {
      for (const auto& tag : m_doc["tags"]) {
        if (tag.is_string() && tag.get<std::string>().starts_with("status:")) {
          status = tag.get<std::string>();
        }
      }
    }
    question(codes::k_normalize_n16, "/reference",
             fmt::format("the definition has no reference ({}); flashinfer-bench rejects it "
                         "until one is written",
                         status),
             "write the reference by hand (a top-level `def run` taking the inputs in order), or "
             "keep the file out of the dataset");
  }

  // --- N8 ---

  void float64_scalars() {
    for (auto& [input, spec] : inputs().items()) {
      if (is_scalar(spec) && string_member(spec, "dtype") == "float64") {
        spec["dtype"] = "float32";
        applied(codes::k_normalize_n8, pointer_append(pointer_append("/inputs", input), "dtype"),
                fmt::format("scalar '{}': float64 → float32", input));
      }
    }
  }

  // --- A3b-2, N4, N5, N6, N7 ---

  void unknown_dtypes() {
    std::vector<std::string> to_drop;
    for (auto& [input, spec] : inputs().items()) {
      if (string_member(spec, "dtype") != k_unknown) {
        continue;
      }
      const std::string pointer = pointer_append(pointer_append("/inputs", input), "dtype");
      if (std::find(k_plan_time_index_names.begin(), k_plan_time_index_names.end(), input) !=
          k_plan_time_index_names.end()) {
        spec["dtype"] = "int32";
        applied(codes::k_normalize_a3b_2, pointer,
                fmt::format("'{}': unknown → int32 (a plan-time index tensor)", input));
        continue;
      }
      if (outputs().contains(input)) {
        const std::string output_dtype = string_member(outputs()[input], "dtype");
        if (parse_dtype(output_dtype)) {
          spec["dtype"] = output_dtype;
          applied(codes::k_normalize_n4, pointer,
                  fmt::format("'{}': unknown → {} (the dtype of the same-named output)", input,
                              output_dtype));
          continue;
        }
      }
      if (is_index_like(input)) {
        if (enabled("N5")) {
          spec["dtype"] = "int32";
          add(codes::k_normalize_n5, FindingKind::applied, pointer,
              fmt::format("'{}': unknown → int32 (an index-like name; FlashInfer may also accept "
                          "int64)",
                          input));
          continue;
        }
      }
      if (is_optional(spec)) {
        if (m_existing_run != nullptr) {
          question(codes::k_normalize_n6, pointer,
                   fmt::format("optional input '{}' has dtype unknown (absent at trace time), and "
                               "the reference's own `run` takes it by position",
                               input),
                   decision_hint("input_dtypes", fmt::format("{{\"{}\": \"<dtype>\"}}", input)));
          continue;
        }
        if (enabled("N6")) {
          to_drop.push_back(input);
          continue;
        }
        question(codes::k_normalize_n6, pointer,
                 fmt::format("optional input '{}' has dtype unknown (rule N6 is off)", input),
                 decision_hint("drop_inputs", fmt::format("[\"{}\"]", input)));
        continue;
      }
      question(codes::k_normalize_n7, pointer,
               fmt::format("required input '{}' has dtype unknown; the dump cannot tell it", input),
               decision_hint("input_dtypes", fmt::format("{{\"{}\": \"<dtype>\"}}", input)));
    }
    for (const auto& input : to_drop) {
      inputs().erase(input);
      m_absent_inputs.insert(input);
      add(codes::k_normalize_n6, FindingKind::applied, pointer_append("/inputs", input),
          fmt::format("dropped optional input '{}' (dtype unknown: it was absent at trace time); "
                      "`run` passes {} to the entry",
                      input, entry_requires(input) ? "None" : "nothing (its default applies)"));
    }
  }

  // --- N9 ---

  void non_numeric_scalars() {
    std::vector<std::string> to_drop;
    for (auto& [input, spec] : inputs().items()) {
      const std::string dtype = string_member(spec, "dtype");
      if (!is_scalar(spec) || (dtype != "string" && dtype != "dtype")) {
        continue;
      }
      const std::string pointer = pointer_append(pointer_append("/inputs", input), "dtype");
      const bool droppable = is_optional(spec) && m_existing_run == nullptr && m_entry != nullptr &&
                             (entry_parameter(input) == nullptr
                                  ? !m_entry->has_var_keyword
                                  : entry_parameter(input)->has_default == HasDefault::yes);
      if (droppable && enabled("N9")) {
        to_drop.push_back(input);
        continue;
      }
      question(codes::k_normalize_n9, pointer,
               fmt::format("scalar '{}' has dtype {}, which flashinfer-bench has no dtype for",
                           input, dtype),
               decision_hint("drop_inputs", fmt::format("[\"{}\"]", input)));
    }
    for (const auto& input : to_drop) {
      inputs().erase(input);
      add(codes::k_normalize_n9, FindingKind::applied, pointer_append("/inputs", input),
          fmt::format("dropped optional scalar '{}' (no flashinfer-bench dtype; the reference's "
                      "default applies)",
                      input));
    }
  }

  // --- N10, N11 ---

  void unsupported_dtypes() {
    for (const std::string_view section_name : {"inputs", "outputs"}) {
      Json& section = m_doc[std::string(section_name)];
      for (auto& [tensor, spec] : section.items()) {
        const std::string dtype = string_member(spec, "dtype");
        if (!spec.is_object() || parse_dtype(dtype) || dtype == k_unknown) {
          continue;
        }
        if (is_scalar(spec) && (dtype == "string" || dtype == "dtype") &&
            section_name == "inputs") {
          continue; // N9's
        }
        const std::string pointer =
            pointer_append(pointer_append(std::string("/").append(section_name), tensor), "dtype");
        const std::string decision_key =
            section_name == "inputs" ? "input_dtypes" : "output_dtypes";
        const std::string name_lower = detail::ascii_lower(tensor);
        const std::string description = detail::ascii_lower(string_member(spec, "description"));
        const bool scale_like = contains(name_lower, "scale") || name_lower == "sf" ||
                                name_lower.ends_with("_sf") || name_lower.starts_with("sf_") ||
                                contains(description, "scale");
        if (dtype == "uint8" && !scale_like &&
            (contains(description, "fp4") || contains(description, "e2m1"))) {
          if (enabled("N10")) {
            spec["dtype"] = "float4_e2m1";
            add(codes::k_normalize_n10, FindingKind::applied, pointer,
                fmt::format("'{}': uint8 → float4_e2m1 (packed FP4 data, two values per byte; "
                            "the shape stays packed)",
                            tensor));
            continue;
          }
        }
        if (dtype == "uint32" && is_index_like(tensor)) {
          if (enabled("N11")) {
            spec["dtype"] = "int32";
            add(codes::k_normalize_n11, FindingKind::applied, pointer,
                fmt::format("'{}': uint32 → int32 (an index-like name)", tensor));
            continue;
          }
        }
        std::string what;
        if (contains(name_lower, "workspace") || contains(name_lower, "semaphore")) {
          what = fmt::format("'{}' is kernel scratch ({}); dropping it is usually right", tensor,
                             dtype);
        } else if (dtype == "uint8" && scale_like) {
          what = fmt::format("'{}' holds scale bytes as uint8 (UE8M0 has no flashinfer-bench "
                             "dtype; E4M3 scales could be float8_e4m3fn)",
                             tensor);
        } else {
          what = fmt::format("'{}' has dtype {}, which flashinfer-bench does not accept", tensor,
                             dtype);
        }
        question(codes::k_normalize_n11, pointer, what,
                 section_name == "inputs"
                     ? decision_hint(decision_key, fmt::format("{{\"{}\": \"<dtype>\"}}", tensor)) +
                           fmt::format(", or \"drop_inputs\": [\"{}\"]", tensor)
                     : decision_hint(decision_key, fmt::format("{{\"{}\": \"<dtype>\"}}", tensor)));
      }
    }
  }

  // --- N12 ---

  std::optional<std::int64_t> const_value(std::string_view token) const {
    if (is_integer_literal(token)) {
      return std::stoll(std::string(token));
    }
    const auto axes = m_doc.find("axes");
    if (axes == m_doc.end() || !axes->is_object()) {
      return std::nullopt;
    }
    const auto it = axes->find(token);
    if (it == axes->end() || !it->is_object() || string_member(*it, "type") != "const") {
      return std::nullopt;
    }
    const auto value = it->find("value");
    if (value == it->end() || !value->is_number_integer()) {
      return std::nullopt;
    }
    return value->get<std::int64_t>();
  }

  // The value of `X_div_Y` / `X_mul_Y` / an integer literal, when X and Y are known constants.
  std::optional<std::int64_t> derived_value(const std::string& name) {
    if (is_integer_literal(name)) {
      return std::stoll(name);
    }
    for (const std::string_view op : {"_div_", "_mul_"}) {
      const std::size_t at = name.rfind(op);
      if (at == std::string::npos || at == 0) {
        continue;
      }
      const auto left = const_value(std::string_view(name).substr(0, at));
      const auto right = const_value(std::string_view(name).substr(at + op.size()));
      if (!left || !right) {
        continue;
      }
      if (op == "_div_") {
        if (*right == 0 || *left % *right != 0) {
          return std::nullopt;
        }
        return *left / *right;
      }
      if (*right != 0 && *left > std::numeric_limits<std::int64_t>::max() / *right) {
        return std::nullopt;
      }
      return *left * *right;
    }
    return std::nullopt;
  }

  static std::string literal_axis_name(std::int64_t value) {
    switch (value) {
    case 1:
      return "one";
    case 2:
      return "two";
    default:
      return fmt::format("const_{}", value);
    }
  }

  void shape_names_not_axes() {
    if (!m_doc.contains("axes") || !m_doc["axes"].is_object()) {
      return;
    }
    std::set<std::string> asked;
    for (const std::string_view section_name : {"inputs", "outputs"}) {
      Json& section = m_doc[std::string(section_name)];
      for (auto& [tensor, spec] : section.items()) {
        if (!spec.is_object() || !spec.contains("shape") || !spec["shape"].is_array()) {
          continue;
        }
        Json& shape = spec["shape"];
        for (std::size_t i = 0; i < shape.size(); ++i) {
          if (!shape[i].is_string()) {
            continue;
          }
          std::string axis = shape[i].get<std::string>();
          if (m_doc["axes"].contains(axis)) {
            continue;
          }
          const std::string pointer = pointer_append(
              pointer_append(pointer_append(std::string("/").append(section_name), tensor),
                             "shape"),
              i);
          const auto value = derived_value(axis);
          if (!value || !enabled("N12")) {
            if (asked.insert(axis).second) {
              question(codes::k_normalize_n12, pointer,
                       fmt::format("shape name '{}' is not an axis and cannot be derived from "
                                   "const axes",
                                   axis),
                       "add the axis by hand (const with its value, or var)");
            }
            continue;
          }
          std::string new_axis = axis;
          if (is_integer_literal(axis)) {
            new_axis = literal_axis_name(*value);
            shape[i] = new_axis;
          }
          Json& axes = m_doc["axes"];
          if (axes.contains(new_axis)) {
            const auto existing = const_value(new_axis);
            if (existing != value) {
              question(codes::k_normalize_n12, pointer,
                       fmt::format("shape name '{}' would become axis '{}' = {}, but that axis "
                                   "exists with another definition",
                                   axis, new_axis, *value));
            }
            continue;
          }
          axes[new_axis] = Json{{"type", "const"}, {"value", *value}};
          add(codes::k_normalize_n12, FindingKind::applied, pointer_append("/axes", new_axis),
              new_axis == axis
                  ? fmt::format("added const axis '{}' = {} (derived from its name)", axis, *value)
                  : fmt::format("shape entry \"{}\" renamed '{}', added as const axis = {}", axis,
                                new_axis, *value));
        }
      }
    }
  }

  // --- N13 ---

  std::set<std::string> input_shape_names() {
    std::set<std::string> names;
    for (auto& [input, spec] : inputs().items()) {
      for (auto& axis : shape_names(spec)) {
        names.insert(std::move(axis));
      }
    }
    return names;
  }

  void const_axes_without_value() {
    if (!m_doc.contains("axes") || !m_doc["axes"].is_object()) {
      return;
    }
    const auto bound = input_shape_names();
    for (auto& [axis, spec] : m_doc["axes"].items()) {
      if (!spec.is_object() || string_member(spec, "type") != "const" || spec.contains("value")) {
        continue;
      }
      const std::string pointer = pointer_append("/axes", axis);
      if (bound.contains(axis) && enabled("N13")) {
        spec["type"] = "var";
        add(codes::k_normalize_n13, FindingKind::applied, pointer,
            fmt::format("const axis '{}' has no value (the dumper could not extract it): now var, "
                        "bound from the inputs at run time",
                        axis));
        continue;
      }
      question(codes::k_normalize_n13, pointer,
               fmt::format("const axis '{}' has no value and no input binds it", axis),
               decision_hint("axis_values", fmt::format("{{\"{}\": <value>}}", axis)));
    }
  }

  // --- N14 ---

  std::vector<std::string> constraint_strings() {
    std::vector<std::string> out;
    if (m_doc.contains("constraints") && m_doc["constraints"].is_array()) {
      for (const auto& c : m_doc["constraints"]) {
        if (c.is_string()) {
          out.push_back(c.get<std::string>());
        }
      }
    }
    return out;
  }

  // A value of `axis` that satisfies `constraint` given the const axes, when the constraint is an
  // equation linear in `axis` (checked by evaluating it with the solution).
  static std::optional<std::int64_t> solve_for(const std::string& constraint,
                                               const std::string& axis,
                                               const ConstraintEnvironment& consts) {
    for (std::size_t at = constraint.find("=="); at != std::string::npos;
         at = constraint.find("==", at + 2)) {
      if (at > 0 && (constraint[at - 1] == '<' || constraint[at - 1] == '>' ||
                     constraint[at - 1] == '!' || constraint[at - 1] == '=')) {
        continue;
      }
      const std::string left = constraint.substr(0, at);
      const std::string right = constraint.substr(at + 2);
      ConstraintEnvironment one = consts;
      ConstraintEnvironment two = consts;
      one.axes[axis] = 1;
      two.axes[axis] = 2;
      const auto l1 = evaluate_integer(left, one);
      const auto r1 = evaluate_integer(right, one);
      const auto l2 = evaluate_integer(left, two);
      const auto r2 = evaluate_integer(right, two);
      if (!l1 || !r1 || !l2 || !r2) {
        continue;
      }
      const std::int64_t f1 = *l1 - *r1;
      const std::int64_t slope = (*l2 - *r2) - f1;
      if (slope == 0 || f1 % slope != 0) {
        continue;
      }
      const std::int64_t value = 1 - f1 / slope;
      if (value < 0) {
        continue;
      }
      ConstraintEnvironment check = consts;
      check.axes[axis] = value;
      if (evaluate_constraint(constraint, check).outcome == ConstraintOutcome::satisfied) {
        return value;
      }
    }
    return std::nullopt;
  }

  void output_only_var_axes() {
    if (!m_doc.contains("axes") || !m_doc["axes"].is_object()) {
      return;
    }
    const auto bound = input_shape_names();
    std::set<std::string> in_outputs;
    for (auto& [output, spec] : outputs().items()) {
      for (auto& axis : shape_names(spec)) {
        in_outputs.insert(std::move(axis));
      }
    }
    ConstraintEnvironment consts;
    for (auto& [axis, spec] : m_doc["axes"].items()) {
      if (string_member(spec, "type") == "const" && spec.contains("value") &&
          spec["value"].is_number_integer()) {
        consts.axes[axis] = spec["value"].get<std::int64_t>();
      }
    }
    const auto constraints = constraint_strings();
    for (auto& [axis, spec] : m_doc["axes"].items()) {
      if (string_member(spec, "type") != "var" || bound.contains(axis) ||
          !in_outputs.contains(axis)) {
        continue;
      }
      const std::string pointer = pointer_append("/axes", axis);
      std::optional<std::int64_t> value;
      std::string from;
      for (const auto& constraint : constraints) {
        value = solve_for(constraint, axis, consts);
        if (value) {
          from = constraint;
          break;
        }
      }
      if (value && enabled("N14")) {
        spec["type"] = "const";
        spec["value"] = *value;
        consts.axes[axis] = *value;
        add(codes::k_normalize_n14, FindingKind::applied, pointer,
            fmt::format("var axis '{}' is bound by no input; the constraint \"{}\" fixes it: now "
                        "const {}",
                        axis, from, *value));
        continue;
      }
      question(codes::k_normalize_n14, pointer,
               fmt::format("var axis '{}' appears only in outputs: no input binds it, so outputs "
                           "cannot be allocated",
                           axis),
               decision_hint("axis_values", fmt::format("{{\"{}\": <value>}}", axis)));
    }
  }

  // --- A3b-3 ---

  void in_place_outputs() {
    std::vector<std::string> overlap;
    for (auto& [output, spec] : outputs().items()) {
      if (inputs().contains(output)) {
        overlap.push_back(output);
      }
    }
    if (overlap.empty()) {
      return;
    }
    const std::size_t total = outputs().size();
    const PythonFunction* function = callee();
    const int arity = function != nullptr && function->return_arity ? *function->return_arity : -1;
    const std::string names = fmt::format("{}", fmt::join(overlap, ", "));
    const std::string hint = decision_hint(
        "rename_outputs", fmt::format("{{\"{}\": \"{}_out\"}}", overlap.front(), overlap.front()));
    if (arity < 0) {
      question(codes::k_normalize_a3b_3, pointer_append("/outputs", overlap.front()),
               fmt::format("output{} {} share{} an input's name, and {}",
                           overlap.size() == 1 ? "" : "s", names, overlap.size() == 1 ? "s" : "",
                           function == nullptr
                               ? "there is no parsable reference to read the return arity from"
                               : "the reference's return arity cannot be read statically"),
               hint + fmt::format(", or \"drop_outputs\": [\"{}\"]", overlap.front()));
      return;
    }
    const auto returned = static_cast<std::size_t>(arity);
    if (!enabled("A3b-3") || (returned != total && returned + overlap.size() != total)) {
      question(codes::k_normalize_a3b_3, pointer_append("/outputs", overlap.front()),
               fmt::format("output{} {} share{} an input's name; the reference returns {} value{} "
                           "for {} outputs",
                           overlap.size() == 1 ? "" : "s", names, overlap.size() == 1 ? "s" : "",
                           returned, returned == 1 ? "" : "s", total),
               hint);
      return;
    }
    if (returned == total) {
      for (const auto& output : overlap) {
        std::string renamed = output + "_out";
        for (int n = 2; inputs().contains(renamed) || outputs().contains(renamed); ++n) {
          renamed = fmt::format("{}_out{}", output, n);
        }
        rename_key(outputs(), output, renamed);
        add(codes::k_normalize_a3b_3, FindingKind::applied, pointer_append("/outputs", renamed),
            fmt::format("output '{}' shares an input's name; the reference returns all {} "
                        "outputs, so it is renamed '{}'",
                        output, total, renamed));
      }
      return;
    }
    for (const auto& output : overlap) {
      outputs().erase(output);
      add(codes::k_normalize_a3b_3, FindingKind::applied, pointer_append("/outputs", output),
          fmt::format("output '{}' shares an input's name and the reference does not return it "
                      "({} value{} for {} outputs): dropped (the input is updated in place)",
                      output, returned, returned == 1 ? "" : "s", total));
    }
  }

  // --- N1 ---

  void import_preamble() {
    if (!m_structure || m_structure->syntax_error) {
      return;
    }
    const auto& unresolved = m_structure->unresolved_names;
    const auto missing = [&](std::string_view name) {
      return std::find(unresolved.begin(), unresolved.end(), name) != unresolved.end();
    };
    std::vector<std::string> imports;
    if (missing("math")) {
      imports.emplace_back("import math");
    }
    if (missing("torch")) {
      imports.emplace_back("import torch");
    }
    if (missing("F")) {
      imports.emplace_back("import torch.nn.functional as F");
    }
    if (imports.empty()) {
      return;
    }
    m_resolved_by_imports = {"math", "torch", "F"};
    const std::string reference = m_doc["reference"].get<std::string>();
    const auto pieces = detail::split_on_newlines(reference);
    std::vector<std::string> lines(pieces.begin(), pieces.end());
    const auto at = static_cast<std::size_t>(
        std::clamp(m_structure->import_insert_line, 0, static_cast<int>(lines.size())));
    lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), imports.begin(), imports.end());
    m_doc["reference"] = fmt::format("{}", fmt::join(lines, "\n"));
    m_line_shift = static_cast<int>(imports.size());
    applied(codes::k_normalize_n1, "/reference",
            fmt::format("added the missing import{}: {}", imports.size() == 1 ? "" : "s",
                        fmt::join(imports, "; ")));
  }

  // --- A3b-1, N2 ---

  // How the `run` wrapper passes the inputs to the entry (A3b-1, N2).
  struct EntryBinding {
    std::vector<std::string> arguments; // "param=value", or a value for positional-only ones
    std::vector<std::string> renamed;   // "input → param", passed by position (N2)
    std::vector<std::string> from_axes; // "param=value" from const axes (N2)
    std::vector<std::string> unbound;   // required parameters nothing supplies
    std::vector<std::string> ignored;   // inputs the entry does not take
  };

  EntryBinding bind_entry(const std::vector<std::string>& input_names) const {
    EntryBinding binding;
    std::set<std::string> parameter_names;
    for (const auto& p : m_entry->parameters) {
      parameter_names.insert(p.name);
    }
    std::set<std::string> used;
    const auto positional_count = static_cast<std::size_t>(
        std::count_if(m_entry->parameters.begin(), m_entry->parameters.end(),
                      [](const auto& p) { return p.kind != ParameterKind::keyword_only; }));
    std::size_t position = 0;
    bool positional_gap = false;
    for (const auto& p : m_entry->parameters) {
      const bool positional = p.kind != ParameterKind::keyword_only;
      std::string value;
      if (decisions_supply(p.name)) {
        value = m_decisions->run_arguments.at(p.name);
      } else if (std::find(input_names.begin(), input_names.end(), p.name) != input_names.end()) {
        value = p.name;
        used.insert(p.name);
      } else if (p.has_default == HasDefault::yes) {
        positional_gap = positional_gap || p.kind == ParameterKind::positional_only;
        position += positional ? 1 : 0;
        continue;
      } else if (m_absent_inputs.contains(p.name)) {
        value = "None";
      } else if (const auto axis_value = const_value(p.name); axis_value && enabled("N2")) {
        value = std::to_string(*axis_value);
        binding.from_axes.push_back(fmt::format("{}={}", p.name, value));
      } else if (positional && positional_count == m_original_inputs.size() &&
                 position < m_original_inputs.size() &&
                 !parameter_names.contains(m_original_inputs[position]) &&
                 std::find(input_names.begin(), input_names.end(), m_original_inputs[position]) !=
                     input_names.end() &&
                 !used.contains(m_original_inputs[position]) && enabled("N2")) {
        value = m_original_inputs[position];
        used.insert(value);
        binding.renamed.push_back(fmt::format("{} → {}", value, p.name));
      } else {
        binding.unbound.push_back(p.name);
      }
      position += positional ? 1 : 0;
      if (p.kind == ParameterKind::positional_only) {
        if (positional_gap) {
          binding.unbound.push_back(p.name);
        }
        binding.arguments.push_back(value);
      } else {
        binding.arguments.push_back(fmt::format("{}={}", p.name, value));
      }
    }
    for (const auto& input : input_names) {
      if (used.contains(input) || decisions_supply(input)) {
        continue;
      }
      if (m_entry->has_var_keyword && !parameter_names.contains(input)) {
        binding.arguments.push_back(fmt::format("{}={}", input, input));
        continue;
      }
      binding.ignored.push_back(input);
    }
    return binding;
  }

  void entry_point() {
    if (!m_structure) {
      return;
    }
    if (m_structure->syntax_error) {
      question(codes::k_normalize_a3b_1, "/reference",
               fmt::format("the reference does not parse ({}), so no `run` can be added",
                           m_structure->syntax_error->text),
               "fix the reference by hand");
      return;
    }
    if (m_existing_run != nullptr) {
      return;
    }
    if (m_entry == nullptr) {
      question(codes::k_normalize_a3b_1, "/reference",
               "the reference has no top-level def to call from `run`",
               "write the reference's entry point by hand");
      return;
    }
    if (m_entry->is_async) {
      question(codes::k_normalize_a3b_1, "/reference",
               fmt::format("the entry '{}' is an async def, which flashinfer-bench cannot call",
                           m_entry->name));
      return;
    }
    std::vector<std::string> input_names;
    for (auto& [input, spec] : inputs().items()) {
      if (!is_python_identifier(input) || input == m_entry->name) {
        question(codes::k_normalize_a3b_1, pointer_append("/inputs", input),
                 fmt::format("input '{}' cannot be a parameter of `run` (not a Python identifier, "
                             "or the entry's own name)",
                             input));
        return;
      }
      input_names.push_back(input);
    }
    const EntryBinding binding = bind_entry(input_names);
    const auto& [arguments, renamed, from_axes, unbound, ignored] = binding;
    if (!unbound.empty()) {
      question(codes::k_normalize_n2, "/reference",
               fmt::format("the entry '{}' requires {} but no input supplies {}", m_entry->name,
                           fmt::join(unbound, ", "), unbound.size() == 1 ? "it" : "them"),
               decision_hint("run_arguments",
                             fmt::format("{{\"{}\": \"<Python expression over the inputs>\"}}",
                                         unbound.front())));
      return;
    }
    if (!ignored.empty() && !enabled("N2")) {
      question(codes::k_normalize_n2, "/reference",
               fmt::format("the entry '{}' does not take input{} {} (rule N2 is off)",
                           m_entry->name, ignored.size() == 1 ? "" : "s", fmt::join(ignored, ", ")),
               decision_hint("drop_inputs", fmt::format("[\"{}\"]", ignored.front())));
      return;
    }
    std::string reference = m_doc["reference"].get<std::string>();
    if (!reference.empty() && reference.back() != '\n') {
      reference += '\n';
    }
    reference += fmt::format(
        "\n\n# Added by fib normalize: flashinfer-bench calls run(*inputs) in definition order.\n"
        "def run({}):\n    return {}({})\n",
        fmt::join(input_names, ", "), m_entry->name, fmt::join(arguments, ", "));
    m_doc["reference"] = reference;
    applied(codes::k_normalize_a3b_1, "/reference",
            fmt::format("added `def run({})`, which calls the entry '{}' (line {}) by keyword",
                        fmt::join(input_names, ", "), m_entry->name, m_entry->line + m_line_shift));
    if (!renamed.empty()) {
      add(codes::k_normalize_n2, FindingKind::applied, "/reference",
          fmt::format("`run` passes input{} by position to a differently named parameter: {}",
                      renamed.size() == 1 ? "" : "s", fmt::join(renamed, ", ")));
    }
    if (!from_axes.empty()) {
      add(codes::k_normalize_n2, FindingKind::applied, "/reference",
          fmt::format("`run` passes const axis value{} to parameter{} named like the axis: {}",
                      from_axes.size() == 1 ? "" : "s", from_axes.size() == 1 ? "" : "s",
                      fmt::join(from_axes, ", ")));
    }
    if (!ignored.empty()) {
      add(codes::k_normalize_n2, FindingKind::applied, "/reference",
          fmt::format("`run` accepts and ignores input{} {}: the entry '{}' does not take {}",
                      ignored.size() == 1 ? "" : "s", fmt::join(ignored, ", "), m_entry->name,
                      ignored.size() == 1 ? "it" : "them"));
    }
  }

  // --- N3 ---

  void unresolved_names() {
    if (!m_structure || m_structure->syntax_error) {
      return;
    }
    std::vector<std::string> names;
    for (const auto& unresolved : m_structure->unresolved_names) {
      if (!m_resolved_by_imports.contains(unresolved)) {
        names.push_back(unresolved);
      }
    }
    if (names.empty()) {
      return;
    }
    question(codes::k_normalize_n3, "/reference",
             fmt::format("the reference reads name{} it never defines: {} (helpers that were not "
                         "inlined); it fails with NameError when run",
                         names.size() == 1 ? "" : "s", fmt::join(names, ", ")),
             "paste the missing helpers into the reference (FlashInfer's "
             "flashinfer/trace/templates/*.py has them)");
  }

  // --- N15 ---

  void head_counts() {
    const auto kv = const_value("num_kv_heads");
    if (!kv) {
      return;
    }
    for (const std::string_view q_name : {"num_qo_heads", "num_q_heads", "num_heads"}) {
      const auto q = const_value(q_name);
      if (!q || (*kv > 0 && *q % *kv == 0)) {
        continue;
      }
      question(codes::k_normalize_n15, pointer_append("/axes", "num_kv_heads"),
               fmt::format("{} = {} is not a multiple of num_kv_heads = {}: the dumper probably "
                           "read the const axes from the wrong cache layout (NHD vs HND)",
                           q_name, *q, *kv),
               "check the traced call's layout and fix the axis values (and the name) by hand");
    }
  }

  // --- N17 ---

  void semantic_scalars() {
    if (!enabled("N17")) {
      return;
    }
    std::set<std::string> axes;
    if (m_doc.contains("axes") && m_doc["axes"].is_object()) {
      for (auto& [axis, spec] : m_doc["axes"].items()) {
        axes.insert(axis);
      }
    }
    for (auto& [input, spec] : inputs().items()) {
      if (!is_scalar(spec)) {
        continue;
      }
      const std::string description = detail::ascii_lower(string_member(spec, "description"));
      const std::string dtype = string_member(spec, "dtype");
      const bool flag_like =
          dtype == "int32" &&
          (input.starts_with("return_") || input.starts_with("is_") || input.starts_with("use_") ||
           input.starts_with("enable_") || input.starts_with("do_") || input == "interleave" ||
           contains(description, "bool") || contains(description, "whether") ||
           contains(description, "if true"));
      const std::string pointer = pointer_append("/inputs", input);
      if (flag_like) {
        add(codes::k_normalize_n17, FindingKind::advice, pointer,
            fmt::format("scalar '{}' is a flag declared int32: flashinfer-bench draws a random "
                        "int for it; pin its value in the workloads",
                        input));
      } else if (axes.contains(input)) {
        add(codes::k_normalize_n17, FindingKind::advice, pointer,
            fmt::format("scalar '{}' shares its name with an axis: flashinfer-bench draws a random "
                        "value for it; pin it in the workloads to the axis value",
                        input));
      }
    }
  }

  // --- N18 ---

  void extras() {
    if (m_options.strip_extras == StripExtras::yes) {
      std::vector<std::string> removed;
      for (const std::string_view key : {"init", "check"}) {
        if (m_doc.contains(key)) {
          m_doc.erase(std::string(key));
          removed.emplace_back(key);
        }
      }
      for (const std::string_view section : {"inputs", "outputs"}) {
        for (auto& [tensor, spec] : m_doc[std::string(section)].items()) {
          for (const std::string_view key : {"optional", "param"}) {
            if (spec.is_object() && spec.contains(key)) {
              spec.erase(std::string(key));
              removed.push_back(fmt::format("{}.{}.{}", section, tensor, key));
            }
          }
        }
      }
      if (!removed.empty()) {
        applied(codes::k_normalize_n18, "",
                fmt::format("stripped extras (--strip-extras): {}", fmt::join(removed, ", ")));
      }
      return;
    }
    const std::string check = string_member(m_doc, "check");
    if (contains(check, "flashinfer")) {
      add(codes::k_normalize_n18, FindingKind::advice, "/check",
          "kept `check`; it imports flashinfer, so it is not standalone");
    }
  }

  // --- N19 ---

  void names() {
    const std::string current = name();
    if (m_decisions != nullptr && m_decisions->name) {
      return;
    }
    if (std::any_of(current.begin(), current.end(),
                    [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; })) {
      question(codes::k_normalize_n19, "/name",
               fmt::format("name '{}' has upper-case letters; it is FlashInfer's routing key, so "
                           "it is kept unless you rename it",
                           current),
               decision_hint("name", "\"<new name>\""));
    }
  }

  // --- N21 ---

  void output_dtype_sanity() {
    for (auto& [output, spec] : outputs().items()) {
      const std::string description = detail::ascii_lower(string_member(spec, "description"));
      const std::string dtype = string_member(spec, "dtype");
      const bool quantized = (contains(description, "quantized") || contains(description, "fp8") ||
                              contains(description, "fp4") || contains(description, "e4m3")) &&
                             !contains(description, "dequant") && !contains(description, "scale");
      if (!quantized || (dtype != "bfloat16" && dtype != "float16" && dtype != "float32")) {
        continue;
      }
      question(
          codes::k_normalize_n21, pointer_append(pointer_append("/outputs", output), "dtype"),
          fmt::format("output '{}' is described as quantized but declared {} (the dumper "
                      "infers output dtypes from the inputs)",
                      output, dtype),
          decision_hint("output_dtypes", fmt::format("{{\"{}\": \"float8_e4m3fn\"}}", output)));
    }
  }

  const JsonDocument& m_input;
  const NormalizeOptions& m_options;
  PythonFrontend& m_python;
  Json m_doc;
  std::vector<RuleFinding> m_findings;
  const DefinitionDecisions* m_decisions = nullptr;
  std::optional<SourceStructure> m_structure;
  const PythonFunction* m_entry = nullptr;
  const PythonFunction* m_existing_run = nullptr;
  std::set<std::string> m_resolved_by_imports;
  std::vector<std::string> m_original_inputs; // input names in the order of the dump
  std::set<std::string> m_absent_inputs;      // optional inputs N6 dropped
  int m_line_shift = 0;
};

} // namespace

std::string_view to_string(FindingKind kind) {
  switch (kind) {
  case FindingKind::applied:
    return "applied";
  case FindingKind::advice:
    return "advice";
  case FindingKind::question:
    return "question";
  }
  return "question";
}

Expected<NormalizedDefinition> normalize_definition(const JsonDocument& input,
                                                    const NormalizeOptions& options,
                                                    PythonFrontend& python) {
  try {
    return Normalizer(input, options, python).run();
  } catch (const std::exception& e) {
    // Only nlohmann (type errors on a document shape the rules did not expect) or the standard
    // library can throw here; the file is reported and skipped, never a crash.
    Diagnostic d = make_diagnostic(codes::k_normalize_not_definition,
                                   fmt::format("cannot normalize this document: {}", e.what()));
    d.file = input.file;
    return unexpected(std::move(d));
  }
}

} // namespace fib
