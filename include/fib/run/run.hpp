#pragma once
// `fib run`: evaluates a dataset's solutions against their definitions' references on every
// workload, in the reference worker (docs/run.md), and appends the traces to
// `traces/<author>/<op_type>/<definition>.jsonl` in the dataset's own format.

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/solution.hpp>
#include <fib/run/run_config.hpp>
#include <fib/util/atomic_file.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// --resume: skip the evaluations the dataset already has a trace of (same definition, solution,
// workload and settings: TraceIdentity).
enum class Resume { no, yes };

// One part of a run split N ways (`--shard K/N`, docs/run.md "Sharding"): the (definition,
// solution) pairs whose shard_of is K. Shards are disjoint and together cover every pair, whatever
// the selection, the order of files or the machine.
struct RunShard {
  std::size_t index = 1; // K, 1-based
  std::size_t count = 1; // N
};

// "K/N" with 1 <= K <= N <= 10000 (decimal digits only); the error text says what is wrong.
Expected<RunShard> parse_run_shard(std::string_view text);

// The shard (1..count) of a (definition, solution) pair: the first 8 bytes of the SHA-256 of
// "<definition>\n<solution>", read big-endian, modulo count, plus 1.
std::size_t shard_of(std::string_view definition, std::string_view solution, std::size_t count);

// `--devices LIST`: the runners of one run, one per entry ("cpu", "cuda", "cuda:N"; "cuda" is
// "cuda:0"). Every entry is of one kind; a GPU is named once; "cpu" may repeat (several CPU
// runners, whose timings then share the machine's cores).
struct RunDevices {
  SmokeDevice device = SmokeDevice::cpu;
  std::vector<std::optional<int>> gpus; // one per runner: the CUDA index, nullopt for "cpu"
};

// Reads the comma-separated list of --devices (at most 64 entries); the error (`cli.usage`)
// says what is wrong.
Expected<RunDevices> parse_run_devices(std::string_view text);

struct RunOptions {
  std::filesystem::path dataset;
  std::vector<std::string> definitions; // empty: every definition with solutions
  std::vector<std::string> solutions;   // empty: every solution of those definitions
  // fib's defaults and the options that are not settings (cache, build timeout); dataset_root is
  // set from `dataset`. Each definition's settings are evaluation_for(evaluate, config,
  // command_line, definition).
  EvaluateOptions evaluate;
  RunConfig config;                      // --config; empty when none
  EvaluationOverrides command_line;      // the settings flags given (the others stay empty)
  SmokeDevice device = SmokeDevice::cpu; // the runner's device, as the settings record it
  DryRun dry_run = DryRun::no;           // yes: evaluate, print, write no trace
  Resume resume = Resume::no;
  RunShard shard;
};

// The settings of a definition's evaluations, recorded in each trace (`evaluation.settings`) and
// compared by --resume: {"device", "warmup", "iterations", "trials", "cold_cache": a boolean,
// "atol", "rtol", "tolerance":
// "fixed" or "per-dtype", "evaluator": "standard", "low-bit" or "sampling",
// "required_matched_ratio": a number or null, "perturbed_inputs": true (the outputs were checked
// on perturbed inputs too)}, and for the sampling evaluator "sampling_validation_trials",
// "sampling_samples" (per row, as drawn on `device`) and "sampling_tvd_threshold". Only what
// changes a result is in it (not the timeout, the memory limit or the sandbox).
Json run_settings(const EvaluateOptions& evaluate, SmokeDevice device);

// How the run's evaluations divide before the first one starts.
struct RunPlanCounts {
  std::size_t to_run = 0;       // evaluations this run makes
  std::size_t resumed = 0;      // skipped by --resume: already traced with the same settings
  std::size_t other_shards = 0; // left to the other shards of --shard
};

enum class BuildsFirst { no, yes };

// An evaluation about to start (the number-th of `total`, 1-based).
struct RunStep {
  std::string definition;
  std::string solution;
  std::string workload_uuid;
  std::size_t number = 0;
  std::size_t total = 0;
  // yes: the first evaluation of a cpp/cuda solution in this run, which compiles it first.
  BuildsFirst builds = BuildsFirst::no;
  Language language = Language::python;
};

// One evaluation as it happened: the trace line (the dataset's Trace JSON) and where it goes.
struct RunEvaluation {
  std::string definition;
  std::string solution;
  std::string author;
  std::string workload_uuid;
  Json trace;                       // {"definition", "workload", "solution", "evaluation"}
  std::filesystem::path trace_file; // relative to the dataset root
  std::size_t number = 0;           // as in RunStep
  std::size_t total = 0;
  // A COMPILE_ERROR's whole build log (SolutionEvaluation::log_file).
  std::optional<std::filesystem::path> log_file;
};

// What run_solutions says while it works; any member may be empty.
struct RunObserver {
  std::function<void(const RunPlanCounts&)> planned;   // once, before the first evaluation
  std::function<void(const RunStep&)> starting;        // before each evaluation
  std::function<void(const RunEvaluation&)> evaluated; // after each, once its trace is written
};

struct RunResult {
  std::map<std::string, std::size_t> statuses; // evaluation status → count
  std::size_t evaluations = 0;
  RunPlanCounts plan;
  std::size_t replaced = 0; // older traces of the same evaluation that a new one replaced
  // Evaluations that made no trace (their inputs or reference failed: the diagnostics say why).
  // A diagnostic that would repeat for the same definition is given once, with "(the same for N
  // more evaluations)" appended.
  std::size_t not_run = 0;
  std::vector<std::filesystem::path> trace_files; // written (relative to the dataset root)
  // The dataset, inputs, references, writes. The caller tells "could not run" (the dataset
  // unreadable, no worker, a failed write) from findings by their codes (count_diagnostics).
  std::vector<Diagnostic> diagnostics;
};

// Loads the dataset (as the old tool's TraceSet does) and plans the evaluations: definitions in
// name order, each selected solution of the shard (load order) on every workload line (file
// order), less those --resume finds traced; each definition with its own settings
// (evaluation_for). Warns (`run.settings`) when a warm-up of 0 or a single iteration make the
// timings meaningless (once per run), when PASSED latencies are below twice the timing overhead
// of a call (once per run, with a count), when the settings file names a definition the dataset
// lacks,
// and about the red flags in the sources of each solution that runs (`run.red-flag`,
// red_flags.hpp). Then evaluates them one by one, and writes each trace as soon as it is made with
// record_trace_line (trace_append.hpp: atomic, never through a symbolic link, under the lock of the
// file's directory, replacing an older trace of the same evaluation), so that a run killed at any
// moment keeps every evaluation it finished. A failed write ends the run (what follows could not be
// kept either). Never throws.
RunResult run_solutions(const RunOptions& options, ReferenceRunner& runner,
                        const RunObserver& observer);

// The same on several runners at once (`--devices`, one per device): each takes the next
// definition not yet taken and evaluates all of its pairs, in its own thread, so that a
// definition's reference runs stay on one device and each trace file is written by one runner in
// plan order (the traces are those of a run on one runner; their order across files and the
// progress numbering may differ). The observer is called from those threads, one call at a time.
// A problem that ends the run on one runner stops the others after their current evaluation.
RunResult run_solutions(const RunOptions& options, const std::vector<ReferenceRunner*>& runners,
                        const RunObserver& observer);

} // namespace fib
