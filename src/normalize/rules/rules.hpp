#pragma once
// The `apply` of each row of the rules table (rules_table.cpp), grouped by what they repair:
// rules/dtypes.cpp, rules/axes.cpp, rules/outputs.cpp, rules/reference.cpp, rules/helpers.cpp,
// rules/metadata.cpp. Each reads and rewrites the document in the NormalizeContext and adds its
// findings there. Private to src/normalize.

namespace fib {

struct NormalizeContext;

// --- Interface ---

// rules/reference.cpp
void apply_n16_missing_reference(NormalizeContext& context);
void apply_n1_import_preamble(NormalizeContext& context);
// Builds the wrapper `run` (with N2's binding repairs, which apply_n2_binding_repair reports).
void apply_a3b_1_entry_point(NormalizeContext& context);
void apply_n2_binding_repair(NormalizeContext& context);

// rules/helpers.cpp
// Inlines the helpers the reference calls from FlashInfer's trace templates.
void apply_n22_flashinfer_helpers(NormalizeContext& context);
// Asks about the names N1 and N22 left unresolved, with N22's reason for each.
void apply_n3_unresolved_names(NormalizeContext& context);

// rules/evidence.cpp (both do nothing without NormalizeOptions::evidence)
void apply_r2_captured_head_counts(NormalizeContext& context);
void apply_r3_captured_scalars(NormalizeContext& context);
void apply_r1_captured_dtypes(NormalizeContext& context);

// rules/dtypes.cpp
void apply_n8_float64_scalars(NormalizeContext& context);
// One pass over the `unknown` inputs: A3b-2, N4, N5, N6 and N7, the first that fits each input.
void apply_a3b_2_unknown_dtypes(NormalizeContext& context);
void apply_n9_non_numeric_scalars(NormalizeContext& context);
// One pass over the dtypes flashinfer-bench lacks: N10, then N11, for each tensor.
void apply_n10_unsupported_dtypes(NormalizeContext& context);

// rules/axes.cpp
void apply_n12_shape_names_not_axes(NormalizeContext& context);
void apply_n13_const_axes_without_value(NormalizeContext& context);
void apply_n14_output_only_var_axes(NormalizeContext& context);
void apply_n15_head_counts(NormalizeContext& context);

// rules/outputs.cpp
void apply_a3b_3_in_place_outputs(NormalizeContext& context);
void apply_n21_output_dtype_sanity(NormalizeContext& context);

// rules/metadata.cpp
void apply_n17_semantic_scalars(NormalizeContext& context);
void apply_n18_extras(NormalizeContext& context);
void apply_n19_names(NormalizeContext& context);

} // namespace fib
