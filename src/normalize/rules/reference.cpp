// The reference rules: N16 (missing reference), N1 (import preamble), A3b-1 (the `run` wrapper),
// N2 (binding repair inside it). N22 and N3 (unresolved names) are in rules/helpers.cpp.

#include "normalize/context.hpp"
#include "normalize/rules/rules.hpp"
#include "util/strings.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace fib {
namespace {

bool has_reference(const Json& doc) {
  const auto it = doc.find("reference");
  return it != doc.end() && it->is_string() && !it->get<std::string>().empty();
}

// The `status:` tag of the definition, or "no status: tag".
std::string status_tag(const Json& doc) {
  std::string status = "no status: tag";
  const auto tags = doc.find("tags");
  if (tags != doc.end() && tags->is_array()) {
    for (const auto& tag : *tags) {
      if (tag.is_string() && tag.get<std::string>().starts_with("status:")) {
        status = tag.get<std::string>();
      }
    }
  }
  return status;
}

// --- A3b-1, N2 ---

bool is_input(const std::vector<std::string>& input_names, const std::string& name) {
  return std::find(input_names.begin(), input_names.end(), name) != input_names.end();
}

// How the wrapper binds the entry's parameters to the inputs: the first case that applies wins
// (a decision, the same-named input, the default, None for a dropped input, a const axis, the
// input at the same position; otherwise unbound).
EntryBinding bind_entry(const NormalizeContext& context,
                        const std::vector<std::string>& input_names) {
  const PythonFunction& entry = *context.entry;
  const auto& original = context.original_inputs;
  EntryBinding binding;
  std::set<std::string> parameter_names;
  for (const auto& p : entry.parameters) {
    parameter_names.insert(p.name);
  }
  std::set<std::string> used;
  const auto positional_count = static_cast<std::size_t>(
      std::count_if(entry.parameters.begin(), entry.parameters.end(),
                    [](const auto& p) { return p.kind != ParameterKind::keyword_only; }));
  std::size_t position = 0;
  bool positional_gap = false;
  for (const auto& p : entry.parameters) {
    const bool positional = p.kind != ParameterKind::keyword_only;
    std::string value;
    if (context.decisions_supply(p.name)) {
      value = context.decisions->run_arguments.at(p.name);
    } else if (is_input(input_names, p.name)) {
      value = p.name;
      used.insert(p.name);
    } else if (p.has_default == HasDefault::yes) {
      positional_gap = positional_gap || p.kind == ParameterKind::positional_only;
      position += positional ? 1 : 0;
      continue;
    } else if (context.absent_inputs.contains(p.name)) {
      value = "None";
    } else if (const auto axis_value = context.const_value(p.name);
               axis_value && context.enabled("N2")) {
      value = std::to_string(*axis_value);
      binding.from_axes.push_back(fmt::format("{}={}", p.name, value));
    } else if (positional && positional_count == original.size() && position < original.size() &&
               !parameter_names.contains(original[position]) &&
               is_input(input_names, original[position]) && !used.contains(original[position]) &&
               context.enabled("N2")) {
      value = original[position];
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
    if (used.contains(input) || context.decisions_supply(input)) {
      continue;
    }
    if (entry.has_var_keyword && !parameter_names.contains(input)) {
      binding.arguments.push_back(fmt::format("{}={}", input, input));
      continue;
    }
    binding.ignored.push_back(input);
  }
  return binding;
}

// Whether the reference has an entry the wrapper can call; asks (A3b-1) when it does not.
bool has_callable_entry(NormalizeContext& context) {
  if (context.structure->syntax_error) {
    context.question(codes::k_normalize_a3b_1, "/reference",
                     fmt::format("the reference does not parse ({}), so no `run` can be added",
                                 context.structure->syntax_error->text),
                     "fix the reference by hand");
    return false;
  }
  if (context.existing_run != nullptr) {
    return false;
  }
  if (context.entry == nullptr) {
    context.question(codes::k_normalize_a3b_1, "/reference",
                     "the reference has no top-level def to call from `run`",
                     "write the reference's entry point by hand");
    return false;
  }
  if (context.entry->is_async) {
    context.question(
        codes::k_normalize_a3b_1, "/reference",
        fmt::format("the entry '{}' is an async def, which flashinfer-bench cannot call",
                    context.entry->name));
    return false;
  }
  return true;
}

// The inputs as `run`'s parameters; nullopt (after asking, A3b-1) when one cannot be a parameter.
std::optional<std::vector<std::string>> run_parameters(NormalizeContext& context) {
  std::vector<std::string> input_names;
  for (auto& [input, spec] : context.inputs().items()) {
    if (!detail::is_python_identifier(input) || input == context.entry->name) {
      context.question(codes::k_normalize_a3b_1, pointer_append("/inputs", input),
                       fmt::format("input '{}' cannot be a parameter of `run` (not a Python "
                                   "identifier, or the entry's own name)",
                                   input));
      return std::nullopt;
    }
    input_names.push_back(input);
  }
  return input_names;
}

// Whether N2 leaves the binding open for a human: a parameter is unbound, or an input would be
// ignored while N2 is off.
bool binding_needs_a_decision(const NormalizeContext& context, const EntryBinding& binding) {
  return !binding.unbound.empty() || (!binding.ignored.empty() && !context.enabled("N2"));
}

} // namespace

// --- N16 ---

void apply_n16_missing_reference(NormalizeContext& context) {
  if (has_reference(context.doc)) {
    return;
  }
  context.question(codes::k_normalize_n16, "/reference",
                   fmt::format("the definition has no reference ({}); flashinfer-bench rejects it "
                               "until one is written",
                               status_tag(context.doc)),
                   "write the reference by hand (a top-level `def run` taking the inputs in "
                   "order), or keep the file out of the dataset");
}

// --- N1 ---

void apply_n1_import_preamble(NormalizeContext& context) {
  if (!context.structure || context.structure->syntax_error) {
    return;
  }
  const auto& unresolved = context.structure->unresolved_names;
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
  context.resolved_by_imports = {"math", "torch", "F"};
  const std::string reference = context.doc["reference"].get<std::string>();
  const auto pieces = detail::split_on_newlines(reference);
  std::vector<std::string> lines(pieces.begin(), pieces.end());
  const auto at = static_cast<std::size_t>(
      std::clamp(context.structure->import_insert_line, 0, static_cast<int>(lines.size())));
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), imports.begin(), imports.end());
  context.doc["reference"] = fmt::format("{}", fmt::join(lines, "\n"));
  context.line_shift = static_cast<int>(imports.size());
  context.applied(codes::k_normalize_n1, "/reference",
                  fmt::format("added the missing import{}: {}", imports.size() == 1 ? "" : "s",
                              fmt::join(imports, "; ")));
}

// --- A3b-1 ---

void apply_a3b_1_entry_point(NormalizeContext& context) {
  if (!context.structure || !has_callable_entry(context)) {
    return;
  }
  const auto input_names = run_parameters(context);
  if (!input_names) {
    return;
  }
  context.entry_binding = bind_entry(context, *input_names);
  if (binding_needs_a_decision(context, *context.entry_binding)) {
    return; // N2 asks
  }
  const PythonFunction& entry = *context.entry;
  std::string reference = context.doc["reference"].get<std::string>();
  if (!reference.empty() && reference.back() != '\n') {
    reference += '\n';
  }
  reference += fmt::format(
      "\n\n# Added by fib normalize: flashinfer-bench calls run(*inputs) in definition order.\n"
      "def run({}):\n    return {}({})\n",
      fmt::join(*input_names, ", "), entry.name, fmt::join(context.entry_binding->arguments, ", "));
  context.doc["reference"] = reference;
  context.applied(
      codes::k_normalize_a3b_1, "/reference",
      fmt::format("added `def run({})`, which calls the entry '{}' (line {}) by keyword",
                  fmt::join(*input_names, ", "), entry.name, entry.line + context.line_shift));
}

// --- N2 ---

// Reports the repairs A3b-1's binding made, or asks when the binding needs a decision.
void apply_n2_binding_repair(NormalizeContext& context) {
  if (!context.entry_binding) {
    return;
  }
  const auto& [arguments, renamed, from_axes, unbound, ignored] = *context.entry_binding;
  const std::string& entry = context.entry->name;
  if (!unbound.empty()) {
    context.question(
        codes::k_normalize_n2, "/reference",
        fmt::format("the entry '{}' requires {} but no input supplies {}", entry,
                    fmt::join(unbound, ", "), unbound.size() == 1 ? "it" : "them"),
        context.decision_hint(
            "run_arguments",
            fmt::format("{{\"{}\": \"<Python expression over the inputs>\"}}", unbound.front())));
    return;
  }
  if (!ignored.empty() && !context.enabled("N2")) {
    context.question(
        codes::k_normalize_n2, "/reference",
        fmt::format("the entry '{}' does not take input{} {} (rule N2 is off)", entry,
                    ignored.size() == 1 ? "" : "s", fmt::join(ignored, ", ")),
        context.decision_hint("drop_inputs", fmt::format("[\"{}\"]", ignored.front())));
    return;
  }
  if (!renamed.empty()) {
    context.add(codes::k_normalize_n2, FindingKind::applied, "/reference",
                fmt::format("`run` passes input{} by position to a differently named parameter: {}",
                            renamed.size() == 1 ? "" : "s", fmt::join(renamed, ", ")));
  }
  if (!from_axes.empty()) {
    context.add(
        codes::k_normalize_n2, FindingKind::applied, "/reference",
        fmt::format("`run` passes const axis value{} to parameter{} named like the axis: {}",
                    from_axes.size() == 1 ? "" : "s", from_axes.size() == 1 ? "" : "s",
                    fmt::join(from_axes, ", ")));
  }
  if (!ignored.empty()) {
    context.add(codes::k_normalize_n2, FindingKind::applied, "/reference",
                fmt::format("`run` accepts and ignores input{} {}: the entry '{}' does not take {}",
                            ignored.size() == 1 ? "" : "s", fmt::join(ignored, ", "), entry,
                            ignored.size() == 1 ? "it" : "them"));
  }
}

} // namespace fib
