// The normalization rules table: each row's text and the `apply` the engine calls, in table order;
// its lookups and its Markdown rendering.

#include "fib/normalize/normalize.hpp"

#include "normalize/rules/rules.hpp"
#include "util/strings.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <array>

namespace fib {
namespace {

using enum RuleLevel;

// In the order normalize_definition calls their `apply` (after the decisions file's answers). A row
// without an `apply` names who carries it out; see NormalizeRule::applied_by.
constexpr std::array k_rules = std::to_array<NormalizeRule>({
    {"N16", human, codes::k_normalize_n16, "Missing reference",
     "A definition without a `reference` cannot pass the schema. Reported with its `status:` tag; "
     "the reference rules are skipped. The file is left as it is otherwise (never deleted).",
     &apply_n16_missing_reference},
    {"R2", mechanical, codes::k_normalize_r2, "Head counts from captured shapes",
     "With --evidence (a Level-10 dump of the same pass): a gqa_paged or gqa_ragged definition "
     "whose num_qo_heads and num_kv_heads do not fit together (kv above q, or q not a multiple "
     "of kv) takes the counts that every captured call of its API shows (q's heads, and the KV "
     "heads of k_cache or k), when its other const axes agree with those calls. The name's "
     "`_h<q>` and `_kv<kv>` follow, status:verified becomes status:unverified, and the "
     "description records the old name.",
     &apply_r2_captured_head_counts},
    {"R3", mechanical, codes::k_normalize_r3, "Scalars from captured calls",
     "With --evidence: an input declared with shape [] (a 0-D tensor, as older dumps give eps and "
     "sm_scale) that every captured call of the definition's API passed as a Python number or "
     "bool becomes a scalar (shape null); an `unknown` dtype becomes float32 (any float), bool "
     "(all bools) or int32 (int64 when a value needs it). Before N8, so a float64 one becomes "
     "float32 there. A call that passed a tensor, or a value of another kind, leaves the shape "
     "as it is.",
     &apply_r3_captured_scalars},
    {"N8", mechanical, codes::k_normalize_n8, "float64 scalars",
     "A scalar input (shape null) with dtype `float64` becomes `float32`, which flashinfer-bench "
     "accepts and which a Python float fits.",
     &apply_n8_float64_scalars},
    {"R1", mechanical, codes::k_normalize_r1, "Dtypes from captured tensors",
     "With --evidence: an `unknown` input dtype becomes the dtype of the tensor every captured "
     "call of the definition's API (its const axes agreeing) passed for it. Disagreeing calls "
     "leave it to the rules below.",
     &apply_r1_captured_dtypes},
    {"A3b-2", mechanical, codes::k_normalize_a3b_2, "Plan-time index dtypes",
     "`unknown` on kv_indptr, kv_indices, qo_indptr, paged_kv_indptr, paged_kv_indices or "
     "kv_last_page_len (given to plan(), invisible to the dumper) becomes `int32`.",
     &apply_a3b_2_unknown_dtypes},
    {"N4", mechanical, codes::k_normalize_n4, "Dtype from the same-named output",
     "An `unknown` input that has an output of the same name with a known dtype (an in-place "
     "buffer) takes that dtype.",
     nullptr, "A3b-2"},
    {"N5", heuristic, codes::k_normalize_n5, "Index-like unknown dtypes",
     "`unknown` on another index-like name (…indptr, …indices, …_ids, positions, page_table, "
     "block_tables, seq_lens, last_page_len, cu_seqlens, indices) becomes `int32`.",
     nullptr, "A3b-2"},
    {"N6", heuristic, codes::k_normalize_n6, "Unknown optional inputs",
     "An optional input with dtype `unknown` was absent at trace time: it is dropped, and the "
     "`run` wrapper passes None for it when the entry requires it (its default applies "
     "otherwise). When the reference already has its own `run`, a human decides "
     "(`input_dtypes`).",
     nullptr, "A3b-2"},
    {"N7", human, codes::k_normalize_n7, "Unknown required inputs",
     "A required input with dtype `unknown` (a conceptual input, a Python scalar in a tensor slot, "
     "a "
     "stale dump) needs a dtype from a human: `input_dtypes`.",
     nullptr, "A3b-2"},
    {"N9", heuristic, codes::k_normalize_n9, "Non-numeric optional scalars",
     "An optional scalar of dtype `string` or `dtype` is dropped when the entry has a default for "
     "it (or does not take it); otherwise a human decides.",
     &apply_n9_non_numeric_scalars},
    {"N10", heuristic, codes::k_normalize_n10, "Packed FP4 data",
     "A `uint8` tensor whose description mentions fp4 or e2m1 (and neither it nor its name a "
     "scale) "
     "becomes `float4_e2m1`, keeping the packed shape (bench's float4_e2m1 is the x2-packed torch "
     "dtype, byte-compatible).",
     &apply_n10_unsupported_dtypes},
    {"N11", human, codes::k_normalize_n11, "Scales, buffers and other dtypes",
     "`uint32` on an index-like name becomes `int32` (a warning). Everything else flashinfer-bench "
     "has no dtype for — UE8M0 / E4M3 scale bytes, workspace and semaphore buffers, bit masks, "
     "`string` or `dtype` required scalars, float64 tensors — needs a human: `input_dtypes`, "
     "`output_dtypes` or `drop_inputs`.",
     nullptr, "N10"},
    {"N12", heuristic, codes::k_normalize_n12, "Shape names that are not axes",
     "A shape name of the form X_div_Y or X_mul_Y (X and Y const axes or integers) gets a const "
     "axis with the computed value; an integer literal such as \"1\" is renamed `one` with a "
     "const axis of that value. Anything else needs a human.",
     &apply_n12_shape_names_not_axes},
    {"N13", heuristic, codes::k_normalize_n13, "Const axes without value",
     "A const axis with no `value` (the dumper could not extract it) becomes a var axis when some "
     "input binds it; otherwise a human gives the value (`axis_values`). Never guessed from the "
     "name.",
     &apply_n13_const_axes_without_value},
    {"N14", heuristic, codes::k_normalize_n14, "Output-only var axes",
     "A var axis that no input binds becomes const when a constraint determines it from const "
     "axes (e.g. `K_packed == K // 2`); otherwise a human decides (`axis_values`).",
     &apply_n14_output_only_var_axes},
    {"A3b-3", heuristic, codes::k_normalize_a3b_3, "In-place outputs",
     "Outputs that share an input's name: when the entry returns as many values as there are "
     "outputs, the shared ones are renamed `<name>_out`; when it returns that many fewer, they are "
     "dropped; otherwise a human decides (`rename_outputs`, `drop_outputs`).",
     &apply_a3b_3_in_place_outputs},
    {"N1", mechanical, codes::k_normalize_n1, "Import preamble",
     "A reference that reads `torch`, `math` or `F` without importing them gets the missing "
     "imports, after its docstring and `from __future__` imports.",
     &apply_n1_import_preamble},
    {"N22", mechanical, codes::k_normalize_n22, "Helpers from FlashInfer's source",
     "Names the reference reads but never binds are looked up in the trace template modules "
     "(flashinfer/trace/templates/*.py) of FlashInfer's source: --flashinfer-src DIR, else "
     "FIB_FLASHINFER_SRC, else the installed flashinfer package (found, never imported). The "
     "top-level functions, classes, constants and imports they need are inlined, transitively "
     "(imports from inside the package are followed to their module), in source order, after the "
     "reference's docstring and leading imports; a name the reference binds itself is never "
     "replaced. Names not found (or needing a compiled module) are left to N3, with the reason.",
     &apply_n22_flashinfer_helpers},
    {"A3b-1", mechanical, codes::k_normalize_a3b_1, "Entry point `run`",
     "Without a top-level `def run`, the entry (the def after `# ----- reference -----`, else "
     "the last top-level def, found with Python's own parser) gets a wrapper `def run(<inputs in "
     "definition order>)` appended, which forwards by keyword. The entry keeps its name, so "
     "recursion and helpers stay valid.",
     &apply_a3b_1_entry_point},
    {"N2", heuristic, codes::k_normalize_n2, "Binding repair",
     "Inside the wrapper: inputs the entry does not take are accepted and ignored; a required "
     "parameter with no input of its name takes the input at the same position when that input "
     "has no parameter of its own. A required parameter still unbound (such as a tuple "
     "`paged_kv_cache` for `k_cache`, `v_cache`) needs a human: `run_arguments` gives its Python "
     "expression.",
     &apply_n2_binding_repair},
    {"N3", human, codes::k_normalize_n3, "Unresolved names",
     "Names the reference reads but never binds (found with `symtable`: helpers that were not "
     "inlined) make it fail with NameError when run. Those N22 could not inline are reported, "
     "each with why (not defined in the templates, no FlashInfer source found, needs a compiled "
     "module); the reference must be completed by hand.",
     &apply_n3_unresolved_names},
    {"N15", human, codes::k_normalize_n15, "Head-count plausibility",
     "num_qo_heads / num_q_heads / num_heads not divisible by num_kv_heads: the const axes "
     "were probably read from the wrong cache layout. Reported for a human.",
     &apply_n15_head_counts},
    {"N17", heuristic, codes::k_normalize_n17, "Semantic scalars",
     "A scalar that flashinfer-bench would randomize but that controls semantics (a bool-like "
     "int32 flag, a scalar named like an axis) is reported; the fix is a pinned value in the "
     "workloads. Nothing is changed.",
     &apply_n17_semantic_scalars},
    {"N18", mechanical, codes::k_normalize_n18, "Extras",
     "`init`, `check`, `optional` and `param` are kept (Trace Apply and the smoke check use them); "
     "--strip-extras removes them. A `check` that mentions flashinfer is noted as not "
     "standalone.",
     &apply_n18_extras},
    {"N19", human, codes::k_normalize_n19, "Names",
     "`name` is FlashInfer's routing key and the dedup key: never renamed unless the decisions "
     "file says so (`name`). Names with upper-case letters are reported.",
     &apply_n19_names},
    {"N20", heuristic, codes::k_normalize_n20, "Staging conflicts",
     "Applied by `fib stage`, not by normalize: dumps that share a name but differ in more than "
     "their Python sources are a conflict.",
     nullptr, k_applied_by_stage},
    {"N21", human, codes::k_normalize_n21, "Output dtype sanity",
     "An output described as quantized / FP8 / FP4 / e4m3 (not dequantized, not a scale) but "
     "declared bfloat16, float16 or float32 is reported (`output_dtypes` answers it).",
     &apply_n21_output_dtype_sanity},
    {"N0", mechanical, codes::k_normalize_n0, "Canonical JSON",
     "Every dumper generation (v1–v4) is read in any key order; the result is written with 2-space "
     "indent, UTF-8 as is, keys in their order, and a trailing newline. A second run changes "
     "nothing.",
     nullptr, k_applied_when_written},
});

} // namespace

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

const NormalizeRule* applying_rule(const NormalizeRule& rule) {
  if (rule.apply != nullptr) {
    return &rule;
  }
  const NormalizeRule* other = find_normalize_rule(rule.applied_by);
  return other != nullptr && other->apply != nullptr ? other : nullptr;
}

std::string render_normalize_rules_markdown() {
  std::string out = "| id | level | code | rule | applied in | what it does |\n"
                    "|---|---|---|---|---|---|\n";
  for (const auto& rule : k_rules) {
    std::string applied_in = "its own pass";
    if (rule.applied_by == k_applied_when_written) {
      applied_in = "writing the text";
    } else if (rule.applied_by == k_applied_by_stage) {
      applied_in = "`fib stage`";
    } else if (!rule.applied_by.empty()) {
      applied_in = fmt::format("{}'s pass", rule.applied_by);
    }
    out += fmt::format("| {} | {} | `{}` | {} | {} | {} |\n", rule.id, to_string(rule.level),
                       rule.code, rule.title, applied_in, rule.text);
  }
  return out;
}

} // namespace fib
