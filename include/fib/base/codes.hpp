#pragma once
// The codes table: every diagnostic code fib can emit, with its default severity, where the check
// comes from and a one-line summary. docs/diagnostics.md is generated from this table
// (FIB_UPDATE_DOCS=1 with the CodesTable.DiagnosticsDocIsCurrent test), and that test fails
// when the checked-in file is stale.

#include <fib/base/diagnostic.hpp>

#include <span>
#include <string>
#include <string_view>

namespace fib {

// --- Interface ---

// Who owns a check: `legacy` checks reproduce a verdict of flashinfer-bench (same accept/reject
// and, where it has one, the same message); `fib` checks are fib's own additions.
enum class CheckOrigin { legacy, fib };

// How a code affects the exit status: `finding` is about the data (exit 1 when an error),
// `environment` means fib could not do its job (I/O, Python start-up; exit 3), `usage` is a bad
// command line (exit 2).
enum class ExitClass { finding, environment, usage };

// How the old tool's pydantic error text shows a legacy error of this code inside dataset mode's
// `parse error: …` messages: `field` errors with their dotted location, `model` errors (its
// model validators) as "Value error, <message>" without one.
enum class ErrorScope { field, model };

struct CodeInfo {
  std::string_view code;
  Severity severity;
  CheckOrigin origin;
  ExitClass exit_class;
  std::string_view summary;
  ErrorScope scope = ErrorScope::field;
};

// Every code, sorted by code.
std::span<const CodeInfo> all_codes();

// The entry for `code`, or nullptr when there is none.
const CodeInfo* find_code(std::string_view code);

// `code` as the table's own static text, or "" when the table lacks it: lets a long-lived record
// keep a code as a string_view without owning a copy.
std::string_view table_code(std::string_view code);

// The exit class of a diagnostic's code; `finding` for a code that is not in the table.
ExitClass exit_class_of(const Diagnostic& diagnostic);

// True when `diagnostic` is an error that means fib could not do its job (its code is of the
// environment exit class): the caller exits 3 rather than 1.
bool is_environment_failure(const Diagnostic& diagnostic);

// docs/diagnostics.md, rendered from the table.
std::string render_codes_markdown();

// Code names, shared by the checks and the tests so that they cannot drift apart.
namespace codes {
inline constexpr std::string_view k_io_read = "io.read";
inline constexpr std::string_view k_io_not_found = "io.not-found";
inline constexpr std::string_view k_io_too_large = "io.too-large";
inline constexpr std::string_view k_io_unsafe_path = "io.unsafe-path";
inline constexpr std::string_view k_io_write = "io.write";
inline constexpr std::string_view k_io_lock_timeout = "io.lock-timeout";
inline constexpr std::string_view k_json_parse = "json.parse";
inline constexpr std::string_view k_json_too_deep = "json.too-deep";
inline constexpr std::string_view k_json_too_large = "json.too-large";
inline constexpr std::string_view k_json_duplicate_key = "json.duplicate-key";
inline constexpr std::string_view k_file_kind_unknown = "file.kind-unknown";
inline constexpr std::string_view k_schema_required = "schema.required";
inline constexpr std::string_view k_schema_type = "schema.type";
inline constexpr std::string_view k_schema_empty = "schema.empty";
inline constexpr std::string_view k_schema_choice = "schema.choice";
inline constexpr std::string_view k_schema_range = "schema.range";
inline constexpr std::string_view k_schema_too_short = "schema.too-short";
inline constexpr std::string_view k_schema_coerced = "schema.coerced";
inline constexpr std::string_view k_schema_unknown_key = "schema.unknown-key";
inline constexpr std::string_view k_reference_syntax = "definition.reference.syntax";
inline constexpr std::string_view k_reference_no_run = "definition.reference.no-run";
inline constexpr std::string_view k_run_arity = "definition.run.arity";
inline constexpr std::string_view k_io_overlap = "definition.io.overlap";
inline constexpr std::string_view k_constraint_syntax = "definition.constraint.syntax";
inline constexpr std::string_view k_axis_undefined = "definition.axis.undefined";
inline constexpr std::string_view k_shape_expression = "definition.shape.expression";
inline constexpr std::string_view k_dtype_invalid = "definition.dtype.invalid";
inline constexpr std::string_view k_axis_unbound = "definition.axis.unbound";
inline constexpr std::string_view k_axis_unused = "definition.axis.unused";
inline constexpr std::string_view k_tag_format = "definition.tag.format";
inline constexpr std::string_view k_description_missing = "definition.description.missing";
inline constexpr std::string_view k_source_duplicate = "solution.source.duplicate";
inline constexpr std::string_view k_source_absolute = "solution.source.absolute";
inline constexpr std::string_view k_source_traversal = "solution.source.traversal";
inline constexpr std::string_view k_entry_format = "solution.entry.format";
inline constexpr std::string_view k_entry_missing_source = "solution.entry.missing-source";
inline constexpr std::string_view k_correctness_missing = "evaluation.correctness.missing";
inline constexpr std::string_view k_correctness_unexpected = "evaluation.correctness.unexpected";
inline constexpr std::string_view k_performance_missing = "evaluation.performance.missing";
inline constexpr std::string_view k_performance_unexpected = "evaluation.performance.unexpected";
inline constexpr std::string_view k_workload_not_workload_only = "workload.not-workload-only";
inline constexpr std::string_view k_trace_not_evaluated = "trace.not-evaluated";
inline constexpr std::string_view k_trace_settings_ignored = "trace.settings-ignored";
inline constexpr std::string_view k_shape_missing_axis_value = "shape.missing-axis-value";
inline constexpr std::string_view k_shape_rank_mismatch = "shape.rank-mismatch";
inline constexpr std::string_view k_shape_axis_conflict = "shape.axis-conflict";
inline constexpr std::string_view k_shape_missing_axes = "shape.missing-axes";
inline constexpr std::string_view k_call_too_many_arguments = "call.too-many-arguments";
inline constexpr std::string_view k_call_duplicate_argument = "call.duplicate-argument";
inline constexpr std::string_view k_trace_set_duplicate_definition =
    "trace-set.duplicate-definition";
inline constexpr std::string_view k_trace_set_duplicate_solution = "trace-set.duplicate-solution";
inline constexpr std::string_view k_trace_set_misplaced_line = "trace-set.misplaced-line";
inline constexpr std::string_view k_score_no_baseline = "score.no-baseline";
inline constexpr std::string_view k_score_multiple_baselines = "score.multiple-baselines";
inline constexpr std::string_view k_score_invalid_performance = "score.invalid-performance";
inline constexpr std::string_view k_score_scope_conflict = "score.scope-conflict";
inline constexpr std::string_view k_score_unknown_definition = "score.unknown-definition";
inline constexpr std::string_view k_merge_conflict = "merge.conflict";
inline constexpr std::string_view k_merge_not_copied = "merge.not-copied";
inline constexpr std::string_view k_merge_output_is_input = "merge.output-is-input";
inline constexpr std::string_view k_python_unavailable = "python.unavailable";
inline constexpr std::string_view k_dataset_root_missing = "dataset.root-missing";
inline constexpr std::string_view k_dataset_definition_duplicate = "dataset.definition.duplicate";
inline constexpr std::string_view k_dataset_definition_name_mismatch =
    "dataset.definition.name-mismatch";
inline constexpr std::string_view k_dataset_definition_op_type_mismatch =
    "dataset.definition.op-type-mismatch";
inline constexpr std::string_view k_dataset_definition_not_loaded = "dataset.definition.not-loaded";
inline constexpr std::string_view k_dataset_definition_head_ratio = "dataset.definition.head-ratio";
inline constexpr std::string_view k_dataset_definition_name_convention =
    "dataset.definition.name-convention";
inline constexpr std::string_view k_dataset_definition_reference_not_run =
    "dataset.definition.reference-not-run";
inline constexpr std::string_view k_dataset_workload_no_file = "dataset.workload.no-file";
inline constexpr std::string_view k_dataset_workload_op_type_mismatch =
    "dataset.workload.op-type-mismatch";
inline constexpr std::string_view k_dataset_workload_definition_mismatch =
    "dataset.workload.definition-mismatch";
inline constexpr std::string_view k_dataset_workload_duplicate_uuid =
    "dataset.workload.duplicate-uuid";
inline constexpr std::string_view k_dataset_workload_blob_outside = "dataset.workload.blob-outside";
inline constexpr std::string_view k_dataset_workload_missing_axes = "dataset.workload.missing-axes";
inline constexpr std::string_view k_dataset_workload_extra_axes = "dataset.workload.extra-axes";
inline constexpr std::string_view k_dataset_workload_axis_value = "dataset.workload.axis-value";
inline constexpr std::string_view k_dataset_workload_missing_inputs =
    "dataset.workload.missing-inputs";
inline constexpr std::string_view k_dataset_workload_extra_inputs = "dataset.workload.extra-inputs";
inline constexpr std::string_view k_dataset_workload_input_kind = "dataset.workload.input-kind";
inline constexpr std::string_view k_dataset_workload_tensor_key = "dataset.workload.tensor-key";
inline constexpr std::string_view k_dataset_workload_blob_shape = "dataset.workload.blob-shape";
inline constexpr std::string_view k_dataset_workload_blob_dtype = "dataset.workload.blob-dtype";
inline constexpr std::string_view k_dataset_workload_constraint_violated =
    "dataset.workload.constraint-violated";
inline constexpr std::string_view k_dataset_workload_constraint_not_evaluated =
    "dataset.workload.constraint-not-evaluated";
inline constexpr std::string_view k_dataset_workload_valid_count = "dataset.workload.valid-count";
inline constexpr std::string_view k_dataset_solution_none = "dataset.solution.none";
inline constexpr std::string_view k_dataset_solution_count = "dataset.solution.count";
inline constexpr std::string_view k_dataset_solution_author_mismatch =
    "dataset.solution.author-mismatch";
inline constexpr std::string_view k_dataset_solution_definition_mismatch =
    "dataset.solution.definition-mismatch";
inline constexpr std::string_view k_dataset_solution_name_mismatch =
    "dataset.solution.name-mismatch";
inline constexpr std::string_view k_dataset_solution_op_type_mismatch =
    "dataset.solution.op-type-mismatch";
inline constexpr std::string_view k_dataset_trace_none = "dataset.trace.none";
inline constexpr std::string_view k_dataset_trace_op_type_mismatch =
    "dataset.trace.op-type-mismatch";
inline constexpr std::string_view k_dataset_trace_definition_mismatch =
    "dataset.trace.definition-mismatch";
inline constexpr std::string_view k_dataset_trace_unknown_solution =
    "dataset.trace.unknown-solution";
inline constexpr std::string_view k_dataset_trace_coverage = "dataset.trace.coverage";
inline constexpr std::string_view k_dataset_trace_unknown_workload =
    "dataset.trace.unknown-workload";
inline constexpr std::string_view k_dataset_trace_duplicate = "dataset.trace.duplicate";
inline constexpr std::string_view k_dataset_baseline_none = "dataset.baseline.none";
inline constexpr std::string_view k_dataset_baseline_solutions = "dataset.baseline.solutions";
inline constexpr std::string_view k_dataset_baseline_build_ok = "dataset.baseline.build-ok";
inline constexpr std::string_view k_dataset_baseline_build_failed = "dataset.baseline.build-failed";
inline constexpr std::string_view k_dataset_baseline_build_not_run =
    "dataset.baseline.build-not-run";
inline constexpr std::string_view k_dataset_baseline_trace_missing =
    "dataset.baseline.trace-missing";
inline constexpr std::string_view k_dataset_baseline_foreign_solution =
    "dataset.baseline.foreign-solution";
inline constexpr std::string_view k_dataset_baseline_trace_failing =
    "dataset.baseline.trace-failing";
inline constexpr std::string_view k_dataset_baseline_trace_passed = "dataset.baseline.trace-passed";
inline constexpr std::string_view k_dataset_baseline_trace_covered =
    "dataset.baseline.trace-covered";
inline constexpr std::string_view k_dataset_baseline_trace_coverage =
    "dataset.baseline.trace-coverage";
inline constexpr std::string_view k_dataset_benchmark_no_workloads =
    "dataset.benchmark.no-workloads";
inline constexpr std::string_view k_dataset_benchmark_no_baseline = "dataset.benchmark.no-baseline";
inline constexpr std::string_view k_dataset_benchmark_baseline_failed =
    "dataset.benchmark.baseline-failed";
inline constexpr std::string_view k_dataset_benchmark_reference_failed =
    "dataset.benchmark.reference-failed";
inline constexpr std::string_view k_dataset_benchmark_baseline_passed =
    "dataset.benchmark.baseline-passed";
inline constexpr std::string_view k_dataset_benchmark_reference_passed =
    "dataset.benchmark.reference-passed";
inline constexpr std::string_view k_dataset_orphan = "dataset.orphan";
inline constexpr std::string_view k_dataset_shadowed = "dataset.shadowed";
inline constexpr std::string_view k_dataset_misplaced = "dataset.misplaced";
inline constexpr std::string_view k_dataset_old_schema = "dataset.old-schema";
inline constexpr std::string_view k_dataset_unread_file = "dataset.unread-file";
inline constexpr std::string_view k_usage = "cli.usage";
inline constexpr std::string_view k_filter_unmatched = "cli.filter-unmatched";
inline constexpr std::string_view k_config_invalid = "config.invalid";
inline constexpr std::string_view k_shard_duplicate = "shard.duplicate";
inline constexpr std::string_view k_shard_foreign = "shard.foreign";
inline constexpr std::string_view k_shard_missing = "shard.missing";
inline constexpr std::string_view k_baseline_invalid = "baseline.invalid";
inline constexpr std::string_view k_baseline_suppressed = "baseline.suppressed";
inline constexpr std::string_view k_baseline_fixed = "baseline.fixed";
inline constexpr std::string_view k_report_exists = "report.exists";
inline constexpr std::string_view k_report_invalid = "report.invalid";
inline constexpr std::string_view k_python_exception = "python.exception";
inline constexpr std::string_view k_blob_not_found = "blob.not-found";
inline constexpr std::string_view k_blob_lfs_pointer = "blob.lfs-pointer";
inline constexpr std::string_view k_blob_malformed = "blob.malformed";
inline constexpr std::string_view k_blob_unreadable = "blob.unreadable";
inline constexpr std::string_view k_normalize_a3b_1 = "normalize.a3b-1";
inline constexpr std::string_view k_normalize_a3b_2 = "normalize.a3b-2";
inline constexpr std::string_view k_normalize_a3b_3 = "normalize.a3b-3";
inline constexpr std::string_view k_normalize_n0 = "normalize.n0";
inline constexpr std::string_view k_normalize_n1 = "normalize.n1";
inline constexpr std::string_view k_normalize_n2 = "normalize.n2";
inline constexpr std::string_view k_normalize_n3 = "normalize.n3";
inline constexpr std::string_view k_normalize_n4 = "normalize.n4";
inline constexpr std::string_view k_normalize_n5 = "normalize.n5";
inline constexpr std::string_view k_normalize_n6 = "normalize.n6";
inline constexpr std::string_view k_normalize_n7 = "normalize.n7";
inline constexpr std::string_view k_normalize_n8 = "normalize.n8";
inline constexpr std::string_view k_normalize_r1 = "normalize.r1";
inline constexpr std::string_view k_normalize_r2 = "normalize.r2";
inline constexpr std::string_view k_normalize_r3 = "normalize.r3";
inline constexpr std::string_view k_normalize_n9 = "normalize.n9";
inline constexpr std::string_view k_normalize_n10 = "normalize.n10";
inline constexpr std::string_view k_normalize_n11 = "normalize.n11";
inline constexpr std::string_view k_normalize_n12 = "normalize.n12";
inline constexpr std::string_view k_normalize_n13 = "normalize.n13";
inline constexpr std::string_view k_normalize_n14 = "normalize.n14";
inline constexpr std::string_view k_normalize_n15 = "normalize.n15";
inline constexpr std::string_view k_normalize_n16 = "normalize.n16";
inline constexpr std::string_view k_normalize_n17 = "normalize.n17";
inline constexpr std::string_view k_normalize_n18 = "normalize.n18";
inline constexpr std::string_view k_normalize_n19 = "normalize.n19";
inline constexpr std::string_view k_normalize_n20 = "normalize.n20";
inline constexpr std::string_view k_normalize_n21 = "normalize.n21";
inline constexpr std::string_view k_normalize_n22 = "normalize.n22";
inline constexpr std::string_view k_normalize_decision = "normalize.decision";
inline constexpr std::string_view k_normalize_decision_outputs = "normalize.decision-outputs";
inline constexpr std::string_view k_normalize_decision_unused = "normalize.decision-unused";
inline constexpr std::string_view k_normalize_decisions_invalid = "normalize.decisions-invalid";
inline constexpr std::string_view k_normalize_not_definition = "normalize.not-a-definition";
inline constexpr std::string_view k_normalize_output_collision = "normalize.output-collision";
inline constexpr std::string_view k_child_launch_failed = "child.launch-failed";
inline constexpr std::string_view k_cache_unavailable = "cache.unavailable";
inline constexpr std::string_view k_cache_unwritable = "cache.unwritable";
inline constexpr std::string_view k_collect_axis_mismatch = "collect.axis-mismatch";
inline constexpr std::string_view k_collect_axis_unbound = "collect.axis-unbound";
inline constexpr std::string_view k_collect_binding_invalid = "collect.binding-invalid";
inline constexpr std::string_view k_collect_blob_too_large = "collect.blob-too-large";
inline constexpr std::string_view k_collect_call_incomplete = "collect.call-incomplete";
inline constexpr std::string_view k_collect_dtype_mismatch = "collect.dtype-mismatch";
inline constexpr std::string_view k_collect_graph_pending = "collect.graph-pending";
inline constexpr std::string_view k_collect_input_missing = "collect.input-missing";
inline constexpr std::string_view k_collect_link_not_followed = "collect.link-not-followed";
inline constexpr std::string_view k_collect_metadata_cut = "collect.metadata-cut";
inline constexpr std::string_view k_collect_metadata_invalid = "collect.metadata-invalid";
inline constexpr std::string_view k_collect_no_api = "collect.no-api";
inline constexpr std::string_view k_collect_no_metadata = "collect.no-metadata";
inline constexpr std::string_view k_collect_no_workloads = "collect.no-workloads";
inline constexpr std::string_view k_collect_not_a_dump = "collect.not-a-dump";
inline constexpr std::string_view k_collect_recovered = "collect.recovered";
inline constexpr std::string_view k_collect_scalar_invalid = "collect.scalar-invalid";
inline constexpr std::string_view k_collect_scalar_missing = "collect.scalar-missing";
inline constexpr std::string_view k_collect_tensor_file = "collect.tensor-file";
inline constexpr std::string_view k_collect_torch_format = "collect.torch-format";
inline constexpr std::string_view k_dump_child_failed = "dump.child-failed";
inline constexpr std::string_view k_dump_left_processes = "dump.left-processes";
inline constexpr std::string_view k_dump_not_clean = "dump.not-clean";
inline constexpr std::string_view k_dump_nothing_dumped = "dump.nothing-dumped";
inline constexpr std::string_view k_dump_timeout = "dump.timeout";
inline constexpr std::string_view k_reference_build_failed = "reference.build-failed";
inline constexpr std::string_view k_reference_ok = "reference.ok";
inline constexpr std::string_view k_run_config_invalid = "run.config-invalid";
inline constexpr std::string_view k_run_evaluator_unfit = "run.evaluator-unfit";
inline constexpr std::string_view k_run_inputs = "run.inputs";
inline constexpr std::string_view k_run_reference = "run.reference";
inline constexpr std::string_view k_run_red_flag = "run.red-flag";
inline constexpr std::string_view k_run_settings = "run.settings";
inline constexpr std::string_view k_sandbox_disabled = "sandbox.disabled";
inline constexpr std::string_view k_sandbox_unavailable = "sandbox.unavailable";
inline constexpr std::string_view k_smoke_exception = "smoke.exception";
inline constexpr std::string_view k_smoke_missing_helper = "smoke.missing-helper";
inline constexpr std::string_view k_smoke_output_count = "smoke.output-count";
inline constexpr std::string_view k_smoke_output_dtype = "smoke.output-dtype";
inline constexpr std::string_view k_smoke_output_shape = "smoke.output-shape";
inline constexpr std::string_view k_smoke_skipped = "smoke.skipped";
inline constexpr std::string_view k_smoke_timeout = "smoke.timeout";
inline constexpr std::string_view k_worker_crashed = "worker.crashed";
inline constexpr std::string_view k_worker_protocol = "worker.protocol";
inline constexpr std::string_view k_worker_unavailable = "worker.unavailable";
inline constexpr std::string_view k_stage_case_clash = "stage.case-clash";
inline constexpr std::string_view k_stage_conflict = "stage.conflict";
inline constexpr std::string_view k_stage_name_taken = "stage.name-taken";
inline constexpr std::string_view k_stage_not_definition = "stage.not-a-definition";
inline constexpr std::string_view k_stage_overwrite_breaks = "stage.overwrite-breaks";
inline constexpr std::string_view k_stage_unsafe_name = "stage.unsafe-name";
inline constexpr std::string_view k_tag_clash = "tag.clash";
inline constexpr std::string_view k_tag_conflict = "tag.conflict";
inline constexpr std::string_view k_tag_malformed = "tag.malformed";
inline constexpr std::string_view k_tag_manifest_invalid = "tag.manifest-invalid";
inline constexpr std::string_view k_tag_not_definition = "tag.not-a-definition";
inline constexpr std::string_view k_tag_unknown_namespace = "tag.unknown-namespace";
inline constexpr std::string_view k_tag_unknown_value = "tag.unknown-value";
} // namespace codes

} // namespace fib
