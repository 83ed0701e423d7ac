#include "fib/base/codes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace fib {
namespace {

using enum Severity;
constexpr auto L = CheckOrigin::legacy;
constexpr auto F = CheckOrigin::fib;
constexpr auto D = ExitClass::finding;
constexpr auto E = ExitClass::environment;
constexpr auto U = ExitClass::usage;
constexpr auto M = ErrorScope::model; // the default is ErrorScope::field

// Keep sorted by code (a test checks it).
constexpr std::array k_code_table = std::to_array<CodeInfo>({
    {codes::k_baseline_fixed, note, F, D,
     "a baseline entry matches fewer findings than it counts: fixed, and --write-baseline drops "
     "it"},
    {codes::k_baseline_invalid, error, F, U,
     "a baseline file is not one fib wrote (a directory, not JSON, a wrong version, a missing or "
     "mistyped field, a repeated key)"},
    {codes::k_baseline_suppressed, note, F, D,
     "how many findings the baseline suppressed (they are left out of the report)"},
    {codes::k_blob_lfs_pointer, error, L, D,
     "a blob is a Git LFS pointer file, not the tensor data"},
    {codes::k_blob_malformed, error, L, D, "a blob is not a valid safetensors file"},
    {codes::k_blob_not_found, error, L, D, "a safetensors blob named by a workload does not exist"},
    {codes::k_blob_unreadable, error, F, E, "a blob could not be read"},
    {codes::k_cache_unavailable, note, F, D,
     "the result cache directory cannot be created or read: the run goes on without the cache"},
    {codes::k_cache_unwritable, note, F, D,
     "the result cache cannot be written (read-only, full, or no longer a directory): this run's "
     "new results are not kept"},
    {codes::k_call_duplicate_argument, error, L, D,
     "a keyword argument repeats a positional one when building a call"},
    {codes::k_call_too_many_arguments, error, L, D,
     "more positional arguments than the definition has inputs and outputs"},
    {codes::k_child_launch_failed, error, F, E, "a child process could not be started"},
    {codes::k_filter_unmatched, error, F, U,
     "an --op-types or --definitions value matches no definition of the dataset (a warning with "
     "--exit-zero)"},
    {codes::k_usage, error, F, U,
     "the command line asks for something that does not exist (an unknown check name, a bad "
     "--shard)"},
    {codes::k_collect_axis_mismatch, warning, F, D,
     "a dumped call's tensors disagree with the definition (a rank, a const axis, or two values "
     "of one var axis): the call is not a workload of it"},
    {codes::k_collect_axis_unbound, warning, F, D,
     "no tensor a dumped call bound gives this var axis, so no workload can be made of the call"},
    {codes::k_collect_binding_invalid, warning, F, D,
     "a dumped index buffer is not usable: an indptr that does not start at 0, decreases, or ends "
     "past its indices"},
    {codes::k_collect_blob_too_large, warning, F, D,
     "a tensor of a dumped call is larger than the blob limit of `fib collect`: the workload "
     "generates it (`random`) instead"},
    {codes::k_collect_call_incomplete, warning, F, D,
     "a dumped call has only its inputs record (`inputs_saved`): the API raised, the process died "
     "in the call or is still running; it never becomes a workload"},
    {codes::k_collect_dtype_mismatch, warning, F, D,
     "a tensor of a dumped call has another dtype than the definition declares: the call is not a "
     "workload of it"},
    {codes::k_collect_graph_pending, warning, F, D,
     "a call captured in a CUDA graph was never replayed or flushed, so no tensor of it was "
     "written"},
    {codes::k_collect_input_missing, warning, F, D,
     "an input that a workload must store from the call (an integer or index tensor) is in neither "
     "the call nor its plan"},
    {codes::k_collect_link_not_followed, warning, F, D,
     "an entry of a dump is a symbolic link: fib does not follow links out of a dump"},
    {codes::k_collect_metadata_cut, warning, F, D,
     "a call's metadata.jsonl ends in a cut line (the process was killed while appending it)"},
    {codes::k_collect_metadata_invalid, warning, F, D,
     "a call's metadata.jsonl cannot be read, is not JSON Lines, or lacks a field of FlashInfer's "
     "Level-10 record"},
    {codes::k_collect_no_api, warning, F, D,
     "a definition selected for collection has no usable `fi_api:` tag, so no dumped call can be "
     "matched to it"},
    {codes::k_collect_no_metadata, warning, F, D,
     "a directory of a dump has no metadata.jsonl (FlashInfer failed to write the call's "
     "tensors, or it is not a call's directory)"},
    {codes::k_collect_no_workloads, error, F, D,
     "no dumped call became a workload of a selected definition (each call's reason is reported)"},
    {codes::k_collect_not_a_dump, error, F, U,
     "a dump directory given to fib does not exist, is not a directory or holds no call"},
    {codes::k_collect_recovered, note, F, D,
     "blobs that an interrupted `fib collect` wrote but never listed in a workload file were "
     "removed"},
    {codes::k_collect_scalar_invalid, warning, F, D,
     "a dumped scalar argument is not a number or a bool (a dtype, a string, a tensor of several "
     "elements)"},
    {codes::k_collect_scalar_missing, warning, F, D,
     "a scalar input was not passed to the dumped call, so its value is unknown: fib asks for it "
     "(`--scalar NAME=VALUE`) and never makes one up"},
    {codes::k_collect_tensor_file, warning, F, D,
     "a call's inputs or outputs safetensors file is missing, unreadable, malformed, or lacks a "
     "tensor its metadata lists"},
    {codes::k_collect_torch_format, error, F, D,
     "a call was dumped with torch.save (`.pt`), which fib does not read: dump again with "
     "FLASHINFER_DUMP_SAFETENSORS=1"},
    {codes::k_config_invalid, error, F, U,
     "fib.toml or [tool.fib] cannot be read: a TOML syntax error, an unknown key, a value of the "
     "wrong type, or a code pattern that names no finding code"},
    {codes::k_dataset_baseline_build_failed, error, L, D, "a baseline solution failed to build"},
    {codes::k_dataset_baseline_build_not_run, note, F, D,
     "the baseline builds did not run: the reference worker is not available"},
    {codes::k_dataset_baseline_build_ok, note, L, D,
     "a baseline solution built (`build NAME: ok`)"},
    {codes::k_dataset_baseline_foreign_solution, error, L, D,
     "the baseline trace file names a solution that is not a baseline solution"},
    {codes::k_dataset_baseline_none, warning, L, D,
     "a definition has no solution by the `baseline` author"},
    {codes::k_dataset_baseline_solutions, note, L, D,
     "the baseline solutions found (`solution: a, b`)"},
    {codes::k_dataset_baseline_trace_coverage, warning, L, D,
     "the baseline trace misses some workloads"},
    {codes::k_dataset_baseline_trace_covered, note, L, D,
     "the baseline trace covers every workload"},
    {codes::k_dataset_baseline_trace_failing, warning, L, D,
     "baseline trace entries whose evaluation did not pass"},
    {codes::k_dataset_baseline_trace_missing, warning, L, D,
     "there are baseline solutions but no baseline trace file"},
    {codes::k_dataset_baseline_trace_passed, note, L, D, "every baseline trace entry passed"},
    {codes::k_dataset_benchmark_baseline_failed, error, L, D,
     "a baseline solution did not pass on a workload"},
    {codes::k_dataset_benchmark_baseline_passed, note, L, D,
     "every baseline solution passed on every workload"},
    {codes::k_dataset_benchmark_no_baseline, warning, L, D,
     "there are no parsed baseline solutions to benchmark"},
    {codes::k_dataset_benchmark_no_workloads, warning, L, D, "there are no workloads to benchmark"},
    {codes::k_dataset_benchmark_reference_failed, error, L, D,
     "the reference, run as a solution, did not pass on a workload"},
    {codes::k_dataset_benchmark_reference_passed, note, L, D,
     "the reference passed on every workload"},
    {codes::k_dataset_definition_duplicate, error, L, D,
     "two definition files have the same name (stem); the later one is kept and the definition "
     "fails to load"},
    {codes::k_dataset_definition_head_ratio, warning, F, D,
     "query heads are not a whole multiple of KV heads (const axes probably read from the wrong "
     "tensor layout)"},
    {codes::k_dataset_definition_name_convention, warning, F, D,
     "the name lacks a const axis value its naming convention (`gqa_paged_`, `rmsnorm_`, …) "
     "expects"},
    {codes::k_dataset_definition_name_mismatch, error, L, D,
     "a definition's `name` differs from its file name"},
    {codes::k_dataset_definition_not_loaded, error, L, D,
     "the workload or benchmark category cannot run because the definition failed to load"},
    {codes::k_dataset_definition_op_type_mismatch, error, L, D,
     "a definition's `op_type` differs from its op_type directory"},
    {codes::k_dataset_definition_reference_not_run, note, F, D,
     "the reference build did not run: the reference worker is not available"},
    {codes::k_dataset_misplaced, warning, F, D,
     "a .json or .jsonl file where the scan does not look (wrong depth, or the other extension)"},
    {codes::k_dataset_old_schema, error, F, D,
     "the dataset holds files of the Aug 2025 schema (`type` for `op_type`, capitalised "
     "languages, traces/workloads/*.workload.jsonl with `\"solution\": \"\"` lines): one "
     "message per tree with counts and what to rename; a warning when other definitions load"},
    {codes::k_dataset_orphan, warning, F, D,
     "a workload, solution or trace file whose definition is not in the dataset"},
    {codes::k_dataset_root_missing, error, F, E,
     "the dataset root does not exist or is not a directory"},
    {codes::k_dataset_shadowed, warning, F, D,
     "a workload or trace file replaced by a later file with the same name"},
    {codes::k_dataset_solution_author_mismatch, error, L, D,
     "a solution's `author` differs from its author directory"},
    {codes::k_dataset_solution_count, note, L, D,
     "how many of a definition's solutions parsed (`N solutions`)"},
    {codes::k_dataset_solution_definition_mismatch, error, L, D,
     "a solution's `definition` differs from its definition directory"},
    {codes::k_dataset_solution_name_mismatch, error, L, D,
     "a solution's `name` differs from its file name"},
    {codes::k_dataset_solution_none, note, L, D, "a definition has no solutions"},
    {codes::k_dataset_solution_op_type_mismatch, error, L, D,
     "a solution lies in another op_type directory than its definition"},
    {codes::k_dataset_trace_coverage, warning, L, D,
     "a trace file has no line for some of the definition's workloads"},
    {codes::k_dataset_trace_definition_mismatch, error, L, D,
     "a trace line names another definition than its file (the first such line)"},
    {codes::k_dataset_trace_duplicate, warning, F, D,
     "trace lines repeat an earlier line's (solution, workload, settings): the same evaluation "
     "is counted twice"},
    {codes::k_dataset_trace_none, note, L, D, "a definition has no trace files"},
    {codes::k_dataset_trace_op_type_mismatch, error, L, D,
     "a trace file lies in another op_type directory than its definition"},
    {codes::k_dataset_trace_unknown_solution, error, L, D,
     "a trace line names a solution that is not among the definition's parsed solutions"},
    {codes::k_dataset_trace_unknown_workload, warning, F, D,
     "trace lines name workload uuids that are not in the workload file"},
    {codes::k_dataset_unread_file, note, F, D, "a file that no check reads (not .json or .jsonl)"},
    {codes::k_dataset_workload_axis_value, error, L, D,
     "a workload's axis value is zero or negative"},
    {codes::k_dataset_workload_blob_dtype, error, F, D,
     "a blob tensor's dtype differs from the definition's"},
    {codes::k_dataset_workload_blob_outside, warning, F, D,
     "a blob path is absolute or has a `..` component, so it points outside the dataset"},
    {codes::k_dataset_workload_blob_shape, error, L, D,
     "a blob tensor's shape differs from the shape the definition gives for the workload's axes"},
    {codes::k_dataset_workload_constraint_not_evaluated, note, F, D,
     "a constraint could not be evaluated on some workloads (absent blob data, syntax fib does "
     "not evaluate)"},
    {codes::k_dataset_workload_constraint_violated, error, F, D,
     "a definition's constraint is false for a workload"},
    {codes::k_dataset_workload_definition_mismatch, error, L, D,
     "a workload line names another definition than its file (the first such line)"},
    {codes::k_dataset_workload_duplicate_uuid, warning, F, D,
     "two lines of a workload file have the same uuid"},
    {codes::k_dataset_workload_extra_axes, error, L, D,
     "a workload gives values for axes that are not var axes"},
    {codes::k_dataset_workload_extra_inputs, error, L, D,
     "a workload has inputs the definition does not have"},
    {codes::k_dataset_workload_input_kind, error, L, D,
     "a scalar input where the definition expects a tensor, or a random or safetensors one where "
     "it expects a scalar"},
    {codes::k_dataset_workload_missing_axes, error, L, D,
     "a workload gives no value for some var axes"},
    {codes::k_dataset_workload_missing_inputs, error, L, D,
     "a workload lacks some of the definition's inputs"},
    {codes::k_dataset_workload_no_file, warning, L, D, "a definition has no workload file"},
    {codes::k_dataset_workload_op_type_mismatch, error, L, D,
     "a workload file lies in another op_type directory than its definition"},
    {codes::k_dataset_workload_tensor_key, error, L, D,
     "a blob has no tensor under the workload's `tensor_key`"},
    {codes::k_dataset_workload_valid_count, note, L, D,
     "how many workload lines passed the checks (`N valid`, `k/N valid`)"},
    {codes::k_axis_unbound, warning, F, D,
     "a var axis appears in no input shape, so no input can bind its value"},
    {codes::k_axis_undefined, error, L, D,
     "a shape entry names an axis that `axes` does not define", M},
    {codes::k_axis_unused, note, F, D, "an axis is used by no input or output shape"},
    {codes::k_constraint_syntax, error, L, D, "a constraint does not parse as a Python expression",
     M},
    {codes::k_description_missing, warning, L, D,
     "the definition, an axis, an input or an output has no description"},
    {codes::k_dtype_invalid, error, L, D,
     "a dtype is not one of the eleven allowed names (the dumper writes \"unknown\")"},
    {codes::k_io_overlap, error, L, D, "the same name is both an input and an output", M},
    {codes::k_reference_no_run, error, L, D,
     "the reference has no top-level plain `def run` (async, nested, lambda and class do not "
     "count)",
     M},
    {codes::k_reference_syntax, error, L, D, "the reference does not parse as a Python module", M},
    {codes::k_run_arity, error, F, D,
     "`run` cannot take exactly one positional argument per input (the old tool finds this only "
     "when building)"},
    {codes::k_shape_expression, error, L, D,
     "a shape entry is an expression such as \"a + b\", not an axis name", M},
    {codes::k_tag_format, note, F, D,
     "a tag `fib tag add` would call malformed (whitespace, an empty namespace or value, `tp:02`)"},
    {codes::k_dump_child_failed, error, F, D,
     "dump: the traced command exited non-zero or was ended by a signal"},
    {codes::k_dump_left_processes, warning, F, D,
     "dump: the traced command left processes behind; they were terminated"},
    {codes::k_dump_not_clean, error, F, U,
     "dump: --clean refused: the output directory holds more than *.json files"},
    {codes::k_dump_nothing_dumped, error, F, D, "dump: the traced command wrote no definition"},
    {codes::k_dump_timeout, error, F, D,
     "dump: the traced command ran past --timeout and was killed"},
    {codes::k_correctness_missing, error, L, D,
     "the evaluation status needs correctness (PASSED, INCORRECT_NUMERICAL)", M},
    {codes::k_correctness_unexpected, error, L, D,
     "the evaluation status forbids correctness (all but PASSED and INCORRECT_NUMERICAL)", M},
    {codes::k_performance_missing, error, L, D, "a PASSED evaluation has no performance", M},
    {codes::k_performance_unexpected, error, L, D,
     "the evaluation status forbids performance (all but PASSED)", M},
    {codes::k_file_kind_unknown, error, F, D,
     "fib cannot tell whether a file is a definition, solution, workload or trace file"},
    {codes::k_io_lock_timeout, error, F, E,
     "the directory of a file fib edits (a trace file, a definition) stayed locked by another "
     "process past the deadline; the file was not written"},
    {codes::k_io_not_found, error, F, E,
     "a file or directory named on the command line does not exist"},
    {codes::k_io_read, error, F, E, "a file could not be read"},
    {codes::k_io_too_large, error, F, D, "a file is larger than fib's size limit for one document"},
    {codes::k_io_unsafe_path, error, F, E,
     "a write would go through a symbolic link or leave the target directory; nothing is written"},
    {codes::k_io_write, error, F, E, "a file could not be written"},
    {codes::k_json_duplicate_key, warning, F, D,
     "an object repeats a key; the last value wins, as in Python"},
    {codes::k_json_parse, error, L, D,
     "the text is not JSON (NaN, Infinity and -Infinity are allowed)"},
    {codes::k_json_too_deep, error, F, D, "the document nests deeper than fib's limit"},
    {codes::k_json_too_large, error, F, D,
     "the document holds more objects and arrays than fib's limit (4,194,304)"},
    {codes::k_merge_conflict, error, F, D,
     "report merge: an input's copy of a file differs from the copy already kept (the first wins)"},
    {codes::k_merge_not_copied, warning, F, D,
     "report merge: a symbolic link or special file inside an input is neither followed nor "
     "copied"},
    {codes::k_merge_output_is_input, error, F, U,
     "report merge: the output is an input, lies inside one or contains one"},
    {codes::k_normalize_a3b_1, note, F, D,
     "normalize: the reference gets a top-level `def run` that forwards to its entry function"},
    {codes::k_normalize_a3b_2, note, F, D,
     "normalize: an `unknown` plan-time index tensor becomes int32"},
    {codes::k_normalize_a3b_3, warning, F, D,
     "normalize: outputs that share an input's name are renamed or dropped by the reference's "
     "return arity"},
    {codes::k_normalize_decision, note, F, D,
     "normalize: an answer from the decisions file was applied"},
    {codes::k_normalize_decision_outputs, error, F, D,
     "normalize: after the decisions file's answers the definition has fewer outputs than its "
     "reference returns values"},
    {codes::k_normalize_decision_unused, warning, F, D,
     "normalize: an entry of the decisions file matches no input (a misspelt name or path?)"},
    {codes::k_normalize_decisions_invalid, error, F, U,
     "normalize: the decisions file has an unknown key or a value of the wrong type"},
    {codes::k_normalize_n0, note, F, D, "normalize: the definition is written as canonical JSON"},
    {codes::k_normalize_n1, note, F, D,
     "normalize: missing imports of torch, math or F are added to the reference"},
    {codes::k_normalize_n10, warning, F, D, "normalize: uint8 packed FP4 data becomes float4_e2m1"},
    {codes::k_normalize_n11, warning, F, D,
     "normalize: a dtype flashinfer-bench lacks (scales, buffers, uint32, …)"},
    {codes::k_normalize_n12, warning, F, D,
     "normalize: a shape name that is not an axis gets a derived const axis"},
    {codes::k_normalize_n13, warning, F, D, "normalize: a const axis without a value"},
    {codes::k_normalize_n14, warning, F, D, "normalize: a var axis bound by no input"},
    {codes::k_normalize_n15, warning, F, D,
     "normalize: query heads not divisible by KV heads (const axes probably mis-extracted)"},
    {codes::k_normalize_n16, warning, F, D, "normalize: the definition has no reference"},
    {codes::k_normalize_n17, warning, F, D,
     "normalize: a scalar input that controls semantics would be randomized"},
    {codes::k_normalize_n18, note, F, D,
     "normalize: extra keys (init, check, optional, param) kept or stripped"},
    {codes::k_normalize_n19, warning, F, D,
     "normalize: a name that FlashInfer routes by but the naming convention would not produce"},
    {codes::k_normalize_n2, warning, F, D,
     "normalize: the `run` wrapper repairs how inputs bind to the entry's parameters"},
    {codes::k_normalize_n20, warning, F, D,
     "normalize: two dumps share a name but differ (reported by fib stage)"},
    {codes::k_normalize_n21, warning, F, D,
     "normalize: an output dtype that contradicts its description"},
    {codes::k_normalize_n22, note, F, D,
     "normalize: helpers the reference calls are inlined from FlashInfer's trace templates"},
    {codes::k_normalize_n3, warning, F, D,
     "normalize: the reference reads names it never defines (helpers that were not inlined)"},
    {codes::k_normalize_n4, note, F, D,
     "normalize: an `unknown` input dtype is copied from the same-named output"},
    {codes::k_normalize_n5, warning, F, D,
     "normalize: an `unknown` dtype on an index-like input becomes int32"},
    {codes::k_normalize_n6, warning, F, D,
     "normalize: an optional input with `unknown` dtype (absent at trace time) is dropped"},
    {codes::k_normalize_n7, warning, F, D, "normalize: a required input has dtype `unknown`"},
    {codes::k_normalize_n8, note, F, D, "normalize: a float64 scalar becomes float32"},
    {codes::k_normalize_n9, warning, F, D,
     "normalize: an optional string or dtype scalar is dropped (or needs a decision)"},
    {codes::k_normalize_not_definition, error, F, D,
     "normalize: the file is not a definition (not a JSON object with inputs and outputs)"},
    {codes::k_normalize_output_collision, error, F, E,
     "normalize: two inputs would be written to the same output file"},
    {codes::k_normalize_r1, note, F, D,
     "normalize: an unknown dtype is set from the tensors a Level-10 dump captured (--evidence)"},
    {codes::k_normalize_r2, note, F, D,
     "normalize: GQA head counts that do not fit together are set from captured shapes, and the "
     "name follows (--evidence)"},
    {codes::k_normalize_r3, note, F, D,
     "normalize: an input declared as a 0-D tensor that the captured calls passed as a Python "
     "number becomes a scalar (--evidence)"},
    {codes::k_python_exception, error, F, E, "the embedded Python raised unexpectedly"},
    {codes::k_python_unavailable, error, F, E,
     "the embedded Python could not start, so Python-exact checks did not run"},
    {codes::k_reference_build_failed, error, L, D,
     "the reference does not import, has no callable `run`, or `run` cannot take one positional "
     "argument per input (run by the worker)"},
    {codes::k_reference_ok, note, F, D,
     "the reference built (\"reference build: ok\") or its smoke run matched `outputs`"},
    {codes::k_report_exists, error, F, E,
     "a file fib never replaces exists: every report name of the run's second is taken "
     "(report-TS.json, then -2 … -1000), or another process wrote the file meanwhile"},
    {codes::k_report_invalid, error, L, D, "a report JSON does not match the report model"},
    {codes::k_run_config_invalid, error, F, U,
     "run --config: the settings file cannot be read: a syntax error, an unknown key, a value of "
     "the wrong type or out of range"},
    {codes::k_run_evaluator_unfit, error, F, D,
     "run: the evaluator named for a definition cannot judge it (the sampling evaluator needs a "
     "probs or logits input and integer samples with the batch axis first)"},
    {codes::k_run_inputs, error, F, D,
     "run: a workload's inputs cannot be built (a blob is missing or does not fit the shape)"},
    {codes::k_run_red_flag, warning, F, D,
     "run: a solution's source does something that games or escapes the timing (a side stream or "
     "thread, torch ops or the reference inside a compiled kernel, a try/except fallback)"},
    {codes::k_run_reference, error, F, D,
     "run: the definition's reference does not build, so its solutions cannot be evaluated"},
    {codes::k_run_settings, warning, F, D,
     "run: the settings make the timings meaningless (no warm-up, a single timed call)"},
    {codes::k_sandbox_disabled, warning, F, D,
     "--unsafe-no-sandbox: untrusted code runs with the user's full rights (said once per run)"},
    {codes::k_sandbox_unavailable, error, F, E,
     "untrusted code was not run: this machine cannot give it the sandbox (bubblewrap missing, "
     "no user namespaces, no process-count limit); --unsafe-no-sandbox runs it anyway"},
    {codes::k_schema_choice, error, L, D, "a value is not one of the allowed names"},
    {codes::k_schema_coerced, warning, F, D,
     "a value of the wrong JSON type was accepted by lax coercion (\"7\" or 7.0 for 7)"},
    {codes::k_schema_empty, error, L, D, "a string that must be non-empty is empty"},
    {codes::k_schema_range, error, L, D,
     "a number is out of range (negative, or NaN where not allowed)"},
    {codes::k_schema_required, error, L, D, "a required key is missing"},
    {codes::k_schema_too_short, error, L, D, "a list has fewer items than required"},
    {codes::k_schema_type, error, L, D, "a value has the wrong JSON type"},
    {codes::k_schema_unknown_key, note, F, D,
     "a key the model does not know; it is ignored (the dumper's extras are not reported)"},
    {codes::k_score_invalid_performance, error, L, D,
     "a PASSED trace has no usable latency, so it cannot be scored"},
    {codes::k_score_multiple_baselines, error, L, D,
     "the baseline author owns more than one solution of a definition"},
    {codes::k_score_no_baseline, error, L, D,
     "the baseline author owns no solution of a definition"},
    {codes::k_score_scope_conflict, error, L, D,
     "both an op_type and a definition scope were given"},
    {codes::k_score_unknown_definition, error, L, D, "a scoring scope names an unknown definition"},
    {codes::k_shape_axis_conflict, error, L, D, "two inputs give different values for one axis"},
    {codes::k_shape_missing_axes, error, L, D,
     "some var axes are bound by none of the given inputs"},
    {codes::k_shape_missing_axis_value, error, L, D, "no value was given for a var axis"},
    {codes::k_shape_rank_mismatch, error, L, D, "an input's rank differs from its definition"},
    {codes::k_shard_duplicate, error, F, U,
     "validate-merge: two reports are the same shard K/N (a warning with --allow-partial)"},
    {codes::k_shard_foreign, error, F, U,
     "validate-merge: a report is not a shard of the same run (no shard record, another shard "
     "count, dataset, fib version or configuration; a warning with --allow-partial)"},
    {codes::k_shard_missing, error, F, U,
     "validate-merge: some shards K of N have no report (a warning with --allow-partial)"},
    {codes::k_smoke_exception, error, F, D,
     "smoke run: the reference raised (the traceback points into the reference text)"},
    {codes::k_smoke_missing_helper, error, F, D,
     "smoke run: the reference calls a name it never defines (a helper that was not inlined)"},
    {codes::k_smoke_output_count, error, F, D,
     "smoke run: the reference returned another number of values than `outputs` declares"},
    {codes::k_smoke_output_dtype, error, F, D,
     "smoke run: an output's dtype differs from its declaration"},
    {codes::k_smoke_output_shape, error, F, D,
     "smoke run: an output's shape differs from its declaration"},
    {codes::k_smoke_skipped, note, F, D,
     "smoke run: skipped, with the reason (torch too old for a dtype, over --max-bytes, no "
     "CUDA, unsatisfiable constraints)"},
    {codes::k_smoke_timeout, error, F, D,
     "smoke run or build check: the reference ran past --timeout (the worker was restarted)"},
    {codes::k_entry_format, error, L, D, "the entry point is not `<file>::<function>`"},
    {codes::k_entry_missing_source, error, L, D, "the entry point's file is not among the sources",
     M},
    {codes::k_source_absolute, error, L, D, "a source path is absolute"},
    {codes::k_source_duplicate, error, L, D, "two sources have the same path", M},
    {codes::k_source_traversal, error, L, D, "a source path has a `..` component"},
    {codes::k_stage_case_clash, warning, F, D,
     "stage: two definition names differ only in case (their files clash on case-insensitive "
     "file systems)"},
    {codes::k_stage_conflict, error, F, D,
     "stage: a definition differs from the staged file of its name, or from another input of "
     "its name"},
    {codes::k_stage_name_taken, error, F, D,
     "stage: the name is already staged under another op_type directory"},
    {codes::k_stage_not_definition, error, F, D,
     "stage: an input is not a JSON object with a string `name` and `op_type`"},
    {codes::k_stage_overwrite_breaks, error, F, D,
     "stage: replacing a staged definition would break workloads, solutions or traces that name "
     "it (refused without --force)"},
    {codes::k_stage_unsafe_name, error, F, D,
     "stage: `name` or `op_type` is not a single safe path segment"},
    {codes::k_tag_clash, warning, F, D, "tag: a `model:` tag sits beside a different `model:` tag"},
    {codes::k_tag_conflict, warning, F, D,
     "tag: a single-valued namespace (`status:`, `stage:`) has two different values on one "
     "definition"},
    {codes::k_tag_malformed, error, F, D,
     "tag: a tag is not `namespace:value` or a bare flag without whitespace, or its value lacks "
     "the form its namespace requires (`tp:` an integer, `model:` a slug)"},
    {codes::k_tag_manifest_invalid, error, F, U,
     "tag: the --manifest file is not a stage manifest"},
    {codes::k_tag_not_definition, error, F, D,
     "tag: a selected file is not a JSON object with a list of string tags"},
    {codes::k_tag_unknown_namespace, warning, F, D, "tag: a tag's namespace is not a known one"},
    {codes::k_tag_unknown_value, warning, F, D,
     "tag: a known namespace with a fixed vocabulary (`status:`, `stage:`, `quantization:`) does "
     "not list the value"},
    {codes::k_trace_set_duplicate_definition, error, L, D,
     "two definitions of a loaded trace set share a name"},
    {codes::k_trace_set_duplicate_solution, error, L, D,
     "two solutions of a loaded trace set share a name"},
    {codes::k_trace_set_misplaced_line, error, L, D,
     "a workloads/ line has a solution or evaluation, or a traces/ line has neither"},
    {codes::k_trace_not_evaluated, error, L, D,
     "a line of a trace file has no solution or no evaluation"},
    {codes::k_trace_settings_ignored, warning, F, D,
     "a trace's `evaluation.settings` is not an object, so it is ignored"},
    {codes::k_worker_crashed, error, F, D,
     "the reference worker died while running a reference (a crash in native code, the memory "
     "limit); it was restarted"},
    {codes::k_worker_protocol, error, F, E, "the reference worker sent something unexpected"},
    {codes::k_worker_unavailable, error, F, E,
     "the reference worker (fib-worker, built with torch) could not be found or started"},
    {codes::k_workload_not_workload_only, error, L, D,
     "a workload line carries a solution or an evaluation"},
});

} // namespace

std::span<const CodeInfo> all_codes() {
  return k_code_table;
}

const CodeInfo* find_code(std::string_view code) {
  const auto it = std::find_if(k_code_table.begin(), k_code_table.end(),
                               [&](const CodeInfo& info) { return info.code == code; });
  return it == k_code_table.end() ? nullptr : &*it;
}

std::string_view table_code(std::string_view code) {
  const CodeInfo* info = find_code(code);
  return info == nullptr ? std::string_view() : info->code;
}

ExitClass exit_class_of(const Diagnostic& diagnostic) {
  const CodeInfo* info = find_code(diagnostic.code);
  return info == nullptr ? ExitClass::finding : info->exit_class;
}

bool is_environment_failure(const Diagnostic& diagnostic) {
  return diagnostic.severity == Severity::error &&
         exit_class_of(diagnostic) == ExitClass::environment;
}

std::string render_codes_markdown() {
  std::string out =
      "# Diagnostic codes\n\n"
      "<!-- Generated from src/base/codes.cpp; do not edit by hand. Regenerate with "
      "FIB_UPDATE_DOCS=1 "
      "build/tests/fib_core_tests --gtest_filter=CodesTable.DiagnosticsDocIsCurrent -->\n\n"
      "Every problem fib reports carries one of these stable codes. *Origin* `legacy` means the\n"
      "check reproduces a verdict of `flashinfer-bench validate` (same accept/reject, same "
      "message\n"
      "where it has one); `fib` marks fib's own checks (see compatibility.md). *Exit* tells which\n"
      "exit status an error of that code leads to: `1` for findings in the data, `2` for a\n"
      "bad command line, `3` when fib could not do its job (I/O, Python start-up).\n\n"
      "| code | severity | origin | exit | meaning |\n"
      "|---|---|---|---|---|\n";
  for (const CodeInfo& info : k_code_table) {
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", info.code, to_string(info.severity),
                       info.origin == CheckOrigin::legacy ? "legacy" : "fib",
                       info.exit_class == ExitClass::finding
                           ? "1"
                           : (info.exit_class == ExitClass::environment ? "3" : "2"),
                       info.summary);
  }
  return out;
}

} // namespace fib
