#pragma once
// The normalize engine's state while it normalizes one definition: the document being rewritten,
// the findings so far, the decisions that apply, and what the reference analysis found. The driver
// (engine.cpp) builds it, the decisions (decisions.cpp) and every rule's apply (rules/*.cpp) work
// on it, in the order of the rules table. Private to src/normalize.

#include "fib/normalize/normalize.hpp"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

namespace detail {

// Whether `part` occurs in `text`.
bool contains(std::string_view text, std::string_view part);

// A name `def run(...)` can take as a parameter: an identifier that is not a keyword.
bool is_python_identifier(std::string_view name);

// One to 18 decimal digits (so that it fits an int64).
bool is_integer_literal(std::string_view text);

// Index-like tensor names whose `unknown` dtype is int32 in FlashInfer (N5, N11).
bool is_index_like(std::string_view name);

// The string member `key` of `object`; "" when `object` is not an object or the member is absent
// or not a string.
std::string string_member(const Json& object, std::string_view key);

// Whether a tensor spec says `"optional": true`.
bool is_optional(const Json& spec);

// Whether a tensor spec is a scalar (no shape, or shape null).
bool is_scalar(const Json& spec);

// The string entries of a tensor spec's shape.
std::vector<std::string> shape_names(const Json& spec);

// Replaces the key `from` of `object` by `to`, keeping its position.
void rename_key(Json& object, const std::string& from, const std::string& to);

} // namespace detail

// How the `run` wrapper passes the inputs to the entry: built by A3b-1 (with N2's repairs),
// reported by N2.
struct EntryBinding {
  std::vector<std::string> arguments; // "param=value", or a value for positional-only ones
  std::vector<std::string> renamed;   // "input → param", passed by position (N2)
  std::vector<std::string> from_axes; // "param=value" from const axes (N2)
  std::vector<std::string> unbound;   // required parameters nothing supplies
  std::vector<std::string> ignored;   // inputs the entry does not take
};

struct NormalizeContext {
  // `input` must be an object with "inputs" and "outputs" objects (the driver checks it first).
  NormalizeContext(const JsonDocument& input, const NormalizeOptions& options,
                   PythonFrontend& python);

  // --- reporting ---

  // Adds a finding with `code`'s severity (a question is at least a warning), stamped with the
  // input's file.
  void add(std::string_view code, FindingKind kind, std::string pointer, std::string message,
           std::string hint = {});
  void applied(std::string_view code, std::string pointer, std::string message);
  // A question: the message gets "decision needed: " in front.
  void question(std::string_view code, std::string pointer, std::string message,
                std::string hint = {});
  // Whether the W rule `id` may change the document (not switched off with --no-rule).
  bool enabled(std::string_view id) const;
  // The hint that answers a question with the decisions-file `key` set to `example`.
  std::string decision_hint(std::string_view key, std::string_view example) const;

  // --- the document ---

  std::string name() const;
  Json& inputs() { return doc["inputs"]; }
  Json& outputs() { return doc["outputs"]; }
  // Whether the document has an "axes" object.
  bool has_axes() const;
  // The value of an integer literal, or of a const axis with an integer value.
  std::optional<std::int64_t> const_value(std::string_view token) const;
  // Every axis name used by an input's shape.
  std::set<std::string> input_shape_names();

  // --- the reference ---

  // The function bench will call: an existing `run`, else the entry the wrapper will call.
  const PythonFunction* callee() const;
  const PythonParameter* entry_parameter(std::string_view parameter) const;
  // Whether the entry needs a value for `input` that nothing else can give: it names a parameter
  // without default (and no decision supplies it).
  bool entry_requires(std::string_view input) const;
  // Whether the decisions file gives a `run_arguments` expression for `parameter`.
  bool decisions_supply(std::string_view parameter) const;

  const JsonDocument& input;
  const NormalizeOptions& options;
  PythonFrontend& python;
  Json doc; // the document being normalized
  std::vector<RuleFinding> findings;
  const DefinitionDecisions* decisions = nullptr; // the decisions file's entry for this definition
  std::string decisions_entry;                    // its pointer in the decisions file ("" if none)
  std::optional<SourceStructure> structure;       // the reference's, when it has one
  const PythonFunction* entry = nullptr;          // the def the wrapper calls
  const PythonFunction* existing_run = nullptr;   // the reference's own top-level `def run`
  std::vector<std::string> original_inputs;       // input names in the order of the dump
  std::set<std::string> absent_inputs;            // inputs dropped (N6, drop_inputs): `None`
  std::set<std::string> resolved_by_imports;      // names N1 imported, which N3 does not report
  std::set<std::string> resolved_by_helpers;      // names N22 inlined, which N3 does not report
  // Why N22 left a name unresolved (its lookup's reason), for N3's question.
  std::vector<UnresolvedHelper> unresolved_helpers;
  std::string helper_package; // where N22 found the flashinfer package ("" when it found none)
  int line_shift = 0;         // lines N1 and N22 inserted above the entry
  std::optional<EntryBinding> entry_binding; // A3b-1's binding of the entry, for N2
};

// Runs once, before the rules: finds the reference's entry and an existing `run`. Returns the
// environment diagnostic when Python could not analyse the reference.
std::optional<Diagnostic> analyse_reference(NormalizeContext& context);

// Applies the decisions file's answers for this definition (if any), before the rules.
void apply_decisions(NormalizeContext& context);

// After the rules: an error (`normalize.decision-outputs`) when the decisions file dropped outputs
// and fewer are left than the reference's `return` statements give values.
void check_decided_outputs(NormalizeContext& context);

} // namespace fib
