// The normalization rules table, its Markdown rendering, and the decisions file.

#include "fib/normalize/normalize.hpp"

#include "io/schema_reader.hpp"
#include "util/strings.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/dtype.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>

namespace fib {
namespace {

using enum RuleLevel;

// In the order normalize_definition applies them.
constexpr std::array k_rules = std::to_array<NormalizeRule>({
    {"N16", human, codes::k_normalize_n16, "Missing reference",
     "A definition without a `reference` cannot pass the schema. Reported with its `status:` tag; "
     "the reference rules are skipped. The file is left as it is otherwise (never deleted)."},
    {"N8", mechanical, codes::k_normalize_n8, "float64 scalars",
     "A scalar input (shape null) with dtype `float64` becomes `float32`, which flashinfer-bench "
     "accepts and which a Python float fits."},
    {"A3b-2", mechanical, codes::k_normalize_a3b_2, "Plan-time index dtypes",
     "`unknown` on kv_indptr, kv_indices, qo_indptr, paged_kv_indptr, paged_kv_indices or "
     "kv_last_page_len (given to plan(), invisible to the dumper) becomes `int32`."},
    {"N4", mechanical, codes::k_normalize_n4, "Dtype from the same-named output",
     "An `unknown` input that has an output of the same name with a known dtype (an in-place "
     "buffer) takes that dtype."},
    {"N5", heuristic, codes::k_normalize_n5, "Index-like unknown dtypes",
     "`unknown` on another index-like name (…indptr, …indices, …_ids, positions, page_table, "
     "block_tables, seq_lens, last_page_len, cu_seqlens, indices) becomes `int32`."},
    {"N6", heuristic, codes::k_normalize_n6, "Unknown optional inputs",
     "An optional input with dtype `unknown` was absent at trace time: it is dropped, and the "
     "`run` wrapper passes None for it when the entry requires it (its default applies "
     "otherwise). When the reference already has its own `run`, a human decides "
     "(`input_dtypes`)."},
    {"N7", human, codes::k_normalize_n7, "Unknown required inputs",
     "A required input with dtype `unknown` (a conceptual input, a Python scalar in a tensor slot, "
     "a "
     "stale dump) needs a dtype from a human: `input_dtypes`."},
    {"N9", heuristic, codes::k_normalize_n9, "Non-numeric optional scalars",
     "An optional scalar of dtype `string` or `dtype` is dropped when the entry has a default for "
     "it (or does not take it); otherwise a human decides."},
    {"N10", heuristic, codes::k_normalize_n10, "Packed FP4 data",
     "A `uint8` tensor whose description mentions fp4 or e2m1 (and neither it nor its name a "
     "scale) "
     "becomes `float4_e2m1`, keeping the packed shape (bench's float4_e2m1 is the x2-packed torch "
     "dtype, byte-compatible)."},
    {"N11", human, codes::k_normalize_n11, "Scales, buffers and other dtypes",
     "`uint32` on an index-like name becomes `int32` (a warning). Everything else flashinfer-bench "
     "has no dtype for — UE8M0 / E4M3 scale bytes, workspace and semaphore buffers, bit masks, "
     "`string` or `dtype` required scalars, float64 tensors — needs a human: `input_dtypes`, "
     "`output_dtypes` or `drop_inputs`."},
    {"N12", heuristic, codes::k_normalize_n12, "Shape names that are not axes",
     "A shape name of the form X_div_Y or X_mul_Y (X and Y const axes or integers) gets a const "
     "axis with the computed value; an integer literal such as \"1\" is renamed `one` with a "
     "const axis of that value. Anything else needs a human."},
    {"N13", heuristic, codes::k_normalize_n13, "Const axes without value",
     "A const axis with no `value` (the dumper could not extract it) becomes a var axis when some "
     "input binds it; otherwise a human gives the value (`axis_values`). Never guessed from the "
     "name."},
    {"N14", heuristic, codes::k_normalize_n14, "Output-only var axes",
     "A var axis that no input binds becomes const when a constraint determines it from const "
     "axes (e.g. `K_packed == K // 2`); otherwise a human decides (`axis_values`)."},
    {"A3b-3", heuristic, codes::k_normalize_a3b_3, "In-place outputs",
     "Outputs that share an input's name: when the entry returns as many values as there are "
     "outputs, the shared ones are renamed `<name>_out`; when it returns that many fewer, they are "
     "dropped; otherwise a human decides (`rename_outputs`, `drop_outputs`)."},
    {"N1", mechanical, codes::k_normalize_n1, "Import preamble",
     "A reference that reads `torch`, `math` or `F` without importing them gets the missing "
     "imports, after its docstring and `from __future__` imports."},
    {"A3b-1", mechanical, codes::k_normalize_a3b_1, "Entry point `run`",
     "Without a top-level `def run`, the entry (the def after `# ----- reference -----`, else "
     "the last top-level def, found with Python's own parser) gets a wrapper `def run(<inputs in "
     "definition order>)` appended, which forwards by keyword. The entry keeps its name, so "
     "recursion and helpers stay valid."},
    {"N2", heuristic, codes::k_normalize_n2, "Binding repair",
     "Inside the wrapper: inputs the entry does not take are accepted and ignored; a required "
     "parameter with no input of its name takes the input at the same position when that input "
     "has no parameter of its own. A required parameter still unbound (such as a tuple "
     "`paged_kv_cache` for `k_cache`, `v_cache`) needs a human: `run_arguments` gives its Python "
     "expression."},
    {"N3", human, codes::k_normalize_n3, "Unresolved names",
     "Names the reference reads but never binds (found with `symtable`: helpers that were not "
     "inlined) make it fail with NameError when run. Reported; the reference must be completed by "
     "hand."},
    {"N15", human, codes::k_normalize_n15, "Head-count plausibility",
     "num_qo_heads / num_q_heads / num_heads not divisible by num_kv_heads: the const axes "
     "were probably read from the wrong cache layout. Reported for a human."},
    {"N17", heuristic, codes::k_normalize_n17, "Semantic scalars",
     "A scalar that flashinfer-bench would randomize but that controls semantics (a bool-like "
     "int32 flag, a scalar named like an axis) is reported; the fix is a pinned value in the "
     "workloads. Nothing is changed."},
    {"N18", mechanical, codes::k_normalize_n18, "Extras",
     "`init`, `check`, `optional` and `param` are kept (Trace Apply and the smoke check use them); "
     "--strip-extras removes them. A `check` that mentions flashinfer is noted as not "
     "standalone."},
    {"N19", human, codes::k_normalize_n19, "Names",
     "`name` is FlashInfer's routing key and the dedup key: never renamed unless the decisions "
     "file says so (`name`). Names with upper-case letters are reported."},
    {"N20", heuristic, codes::k_normalize_n20, "Staging conflicts",
     "Applied by `fib stage`, not by normalize: dumps that share a name but differ in more than "
     "their Python sources are a conflict."},
    {"N21", human, codes::k_normalize_n21, "Output dtype sanity",
     "An output described as quantized / FP8 / FP4 / e4m3 (not dequantized, not a scale) but "
     "declared bfloat16, float16 or float32 is reported (`output_dtypes` answers it)."},
    {"N0", mechanical, codes::k_normalize_n0, "Canonical JSON",
     "Every dumper generation (v1–v4) is read in any key order; the result is written with 2-space "
     "indent, UTF-8 as is, keys in their order, and a trailing newline. A second run changes "
     "nothing."},
});

Diagnostic invalid(std::string pointer, std::string message) {
  Diagnostic d = make_diagnostic(codes::k_normalize_decisions_invalid, std::move(message));
  d.pointer = std::move(pointer);
  return d;
}

} // namespace

std::string_view to_string(RuleLevel level) {
  switch (level) {
  case RuleLevel::mechanical:
    return "M";
  case RuleLevel::heuristic:
    return "W";
  case RuleLevel::human:
    return "H";
  }
  return "H";
}

std::span<const NormalizeRule> all_normalize_rules() {
  return k_rules;
}

const NormalizeRule* find_normalize_rule(std::string_view id) {
  std::string wanted = detail::ascii_lower(id);
  for (const std::string_view prime : {std::string_view("\u2032"), std::string_view("'")}) {
    if (wanted.size() > prime.size() && wanted.ends_with(prime)) {
      wanted.resize(wanted.size() - prime.size());
    }
  }
  for (const auto& rule : k_rules) {
    if (detail::ascii_lower(rule.id) == wanted) {
      return &rule;
    }
  }
  return nullptr;
}

const NormalizeRule* rule_of_code(std::string_view code) {
  for (const auto& rule : k_rules) {
    if (rule.code == code) {
      return &rule;
    }
  }
  return nullptr;
}

std::string render_normalize_rules_markdown() {
  std::string out = "| id | level | code | rule | what it does |\n|---|---|---|---|---|\n";
  for (const auto& rule : k_rules) {
    out += fmt::format("| {} | {} | `{}` | {} | {} |\n", rule.id, to_string(rule.level), rule.code,
                       rule.title, rule.text);
  }
  return out;
}

Expected<NormalizeDecisions> parse_normalize_decisions(const JsonDocument& document,
                                                       DiagnosticSink& sink) {
  NormalizeDecisions decisions;
  bool ok = true;
  const auto fail = [&](std::string pointer, std::string message) {
    Diagnostic d = invalid(std::move(pointer), std::move(message));
    d.file = document.file;
    d.line = document.line_of(d.pointer);
    sink.report(std::move(d));
    ok = false;
  };
  const Json& root = document.root;
  if (!root.is_object()) {
    fail("", "a decisions file is a JSON object with a \"definitions\" object");
    return unexpected(invalid("", "the decisions file is not valid"));
  }
  for (const auto& [key, value] : root.items()) {
    if (key != "definitions") {
      fail(pointer_append("", key),
           fmt::format("unknown key '{}' (expected \"definitions\")", key));
    }
  }
  const auto definitions = root.find("definitions");
  if (definitions == root.end() || !definitions->is_object()) {
    fail("/definitions", "\"definitions\" must be an object keyed by definition name");
    return unexpected(invalid("", "the decisions file is not valid"));
  }
  const auto string_map = [&](const Json& value, const std::string& pointer,
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
  };
  const auto string_set = [&](const Json& value, const std::string& pointer,
                              std::set<std::string>& out) {
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
  };
  const auto check_dtypes = [&](const std::map<std::string, std::string>& dtypes,
                                const std::string& pointer) {
    for (const auto& [name, dtype] : dtypes) {
      if (!parse_dtype(dtype)) {
        fail(pointer_append(pointer, name),
             fmt::format("'{}' is not a dtype flashinfer-bench accepts", dtype));
      }
    }
  };
  for (const auto& [name, entry] : definitions->items()) {
    const std::string base = pointer_append("/definitions", name);
    if (!entry.is_object()) {
      fail(base, "must be an object of decisions");
      continue;
    }
    DefinitionDecisions& d = decisions.definitions[name];
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
        if (!value.is_object()) {
          fail(pointer, "must be an object of non-negative integers");
          continue;
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
          d.axis_values[axis] = v.get<std::int64_t>();
        }
      } else {
        fail(pointer, fmt::format("unknown decision '{}' (expected name, input_dtypes, "
                                  "output_dtypes, drop_inputs, drop_outputs, rename_outputs, "
                                  "axis_values or run_arguments)",
                                  key));
      }
    }
  }
  if (!ok) {
    Diagnostic d = invalid("", "the decisions file is not valid");
    d.file = document.file;
    return unexpected(std::move(d));
  }
  return decisions;
}

} // namespace fib
