// normalize_definition: checks the document's shape, analyses the reference, applies the decisions
// file, then calls the `apply` of every row of the rules table, in table order. Also the shared
// state and helpers of the rules (context.hpp).

#include "fib/normalize/normalize.hpp"

#include "normalize/context.hpp"
#include "util/strings.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace fib {
namespace {

constexpr std::string_view k_reference_marker = "# ----- reference -----";

constexpr std::array<std::string_view, 35> k_python_keywords = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

bool is_definition(const Json& doc) {
  return doc.is_object() && doc.contains("inputs") && doc.at("inputs").is_object() &&
         doc.contains("outputs") && doc.at("outputs").is_object();
}

// The line (1-based) of the last `# ----- reference -----` marker; 0 when there is none.
int reference_marker_line(const std::string& reference) {
  const auto lines = detail::split_on_newlines(reference);
  int marker = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (detail::trim(lines[i]) == k_reference_marker) {
      marker = static_cast<int>(i) + 1;
    }
  }
  return marker;
}

Expected<NormalizedDefinition> run_rules(const JsonDocument& input, const NormalizeOptions& options,
                                         PythonFrontend& python) {
  if (!is_definition(input.root)) {
    Diagnostic d = make_diagnostic(
        codes::k_normalize_not_definition,
        "not a definition: expected a JSON object with \"inputs\" and \"outputs\" objects");
    d.file = input.file;
    return unexpected(std::move(d));
  }
  NormalizeContext context(input, options, python);
  if (auto failure = analyse_reference(context)) {
    return unexpected(std::move(*failure));
  }
  apply_decisions(context);
  for (const NormalizeRule& rule : all_normalize_rules()) {
    if (rule.apply != nullptr) {
      rule.apply(context);
    }
  }
  check_decided_outputs(context);
  NormalizedDefinition result;
  result.changed = context.doc != input.root;
  result.document = std::move(context.doc);
  result.findings = std::move(context.findings);
  result.decisions_entry = std::move(context.decisions_entry);
  return result;
}

} // namespace

// --- helpers ---

namespace detail {

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

void rename_key(Json& object, const std::string& from, const std::string& to) {
  Json renamed = Json::object();
  for (auto& [key, value] : object.items()) {
    renamed[key == from ? to : key] = std::move(value);
  }
  object = std::move(renamed);
}

} // namespace detail

// --- NormalizeContext ---

NormalizeContext::NormalizeContext(const JsonDocument& input_document,
                                   const NormalizeOptions& normalize_options,
                                   PythonFrontend& python_frontend)
    : input(input_document), options(normalize_options), python(python_frontend),
      doc(input_document.root) {
  for (const auto& [name, spec] : doc["inputs"].items()) {
    original_inputs.push_back(name);
  }
}

void NormalizeContext::add(std::string_view code, FindingKind kind, std::string pointer,
                           std::string message, std::string hint) {
  Diagnostic d = make_diagnostic(code, std::move(message));
  if (kind == FindingKind::question && d.severity == Severity::note) {
    d.severity = Severity::warning;
  }
  d.file = input.file;
  d.pointer = std::move(pointer);
  d.hint = std::move(hint);
  findings.push_back(RuleFinding{std::move(d), kind});
}

void NormalizeContext::applied(std::string_view code, std::string pointer, std::string message) {
  add(code, FindingKind::applied, std::move(pointer), std::move(message));
}

void NormalizeContext::question(std::string_view code, std::string pointer, std::string message,
                                std::string hint) {
  add(code, FindingKind::question, std::move(pointer), "decision needed: " + message,
      std::move(hint));
}

bool NormalizeContext::enabled(std::string_view id) const {
  return !options.disabled_rules.contains(std::string(id));
}

std::string NormalizeContext::decision_hint(std::string_view key, std::string_view example) const {
  return fmt::format("answer it in a decisions file (--decisions): {{\"definitions\": {{\"{}\": "
                     "{{\"{}\": {}}}}}}}",
                     name(), key, example);
}

std::string NormalizeContext::name() const {
  return detail::string_member(doc, "name");
}

bool NormalizeContext::has_axes() const {
  return doc.contains("axes") && doc.at("axes").is_object();
}

std::optional<std::int64_t> NormalizeContext::const_value(std::string_view token) const {
  if (detail::is_integer_literal(token)) {
    return std::stoll(std::string(token));
  }
  const auto axes = doc.find("axes");
  if (axes == doc.end() || !axes->is_object()) {
    return std::nullopt;
  }
  const auto it = axes->find(token);
  if (it == axes->end() || !it->is_object() || detail::string_member(*it, "type") != "const") {
    return std::nullopt;
  }
  const auto value = it->find("value");
  if (value == it->end() || !value->is_number_integer()) {
    return std::nullopt;
  }
  return value->get<std::int64_t>();
}

std::set<std::string> NormalizeContext::input_shape_names() {
  std::set<std::string> names;
  for (auto& [name, spec] : inputs().items()) {
    for (auto& axis : detail::shape_names(spec)) {
      names.insert(std::move(axis));
    }
  }
  return names;
}

const PythonFunction* NormalizeContext::callee() const {
  return existing_run != nullptr ? existing_run : entry;
}

const PythonParameter* NormalizeContext::entry_parameter(std::string_view parameter) const {
  if (entry == nullptr) {
    return nullptr;
  }
  for (const auto& p : entry->parameters) {
    if (p.name == parameter) {
      return &p;
    }
  }
  return nullptr;
}

bool NormalizeContext::entry_requires(std::string_view input_name) const {
  const PythonParameter* p = entry_parameter(input_name);
  return p != nullptr && p->has_default == HasDefault::no && !decisions_supply(input_name);
}

bool NormalizeContext::decisions_supply(std::string_view parameter) const {
  return decisions != nullptr && decisions->run_arguments.contains(std::string(parameter));
}

// --- the driver ---

std::optional<Diagnostic> analyse_reference(NormalizeContext& context) {
  const Json& doc = context.doc;
  const auto it = doc.find("reference");
  if (it == doc.end() || !it->is_string() || it->get<std::string>().empty()) {
    return std::nullopt;
  }
  auto structure = context.python.analyze_structure(it->get<std::string>());
  if (!structure) {
    return structure.error();
  }
  context.structure = std::move(*structure);
  const SourceStructure& analysed = *context.structure;
  if (analysed.syntax_error) {
    return std::nullopt;
  }
  for (const auto& function : analysed.functions) {
    if (function.name == "run" && !function.is_async) {
      context.existing_run = &function;
    }
  }
  if (const int marker = reference_marker_line(it->get_ref<const std::string&>()); marker > 0) {
    for (const auto& function : analysed.functions) {
      if (function.line > marker) {
        context.entry = &function;
        break;
      }
    }
  }
  if (context.entry == nullptr && !analysed.functions.empty()) {
    context.entry = &analysed.functions.back();
  }
  return std::nullopt;
}

Expected<NormalizedDefinition> normalize_definition(const JsonDocument& input,
                                                    const NormalizeOptions& options,
                                                    PythonFrontend& python) {
  try {
    return run_rules(input, options, python);
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
