// `fib run`: evaluates solutions against the reference on the dataset's workloads and writes
// traces.

#include "commands.hpp"
#include "exit_status.hpp"
#include "option_checks.hpp"
#include "render.hpp"
#include "run_progress.hpp"

#include <fib/base/codes.hpp>
#include <fib/run/run.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

namespace fib::app {

struct RunCommand {
  CLI::App* subcommand = nullptr;
  std::string dataset;
  std::vector<std::string> definitions;
  std::vector<std::string> solutions;
  std::string device = "cpu";
  int warmup = 3;
  int iterations = 10;
  double atol = 1e-2;
  double rtol = 1e-2;
  bool tolerance_table = false;
  int trials = 1;
  double required_matched_ratio = 1.0;
  std::string evaluator = "auto";
  int sampling_validation_trials = 100;
  std::int64_t sampling_samples = 0;
  double sampling_tvd_threshold = 0.2;
  std::string config;
  bool cold_cache = false;
  double stop_at_ci = 0.0;
  double timeout_seconds = 300;
  std::uintmax_t memory_limit = k_default_worker_address_space;
  std::uint64_t scratch_limit = k_default_scratch_bytes;
  bool dry_run = false;
  bool resume = false;
  std::string shard;
  std::string devices;
  bool quiet = false;
  bool unsafe_no_sandbox = false;
};

namespace {

constexpr const char* k_run_footer =
    R"TXT(Each selected solution runs on every workload of its definition inside
fib-worker (libtorch + the Python that has torch): python and triton solutions
are imported, cpp/cuda solutions with binding "torch" are compiled (g++ and
nvcc) into an extension, those with binding "tvm-ffi" by the worker's tvm_ffi
package where it has one; builds are cached under fib's cache root
($FIB_CACHE_DIR, else $FIB_CACHE_PATH, else $XDG_CACHE_HOME/fib, else
~/.cache/fib) by content hash, with a file lock. The reference runs on the same
inputs in another worker; fib compares the outputs itself (count, shape, dtype,
values within --atol/--rtol, or the per-dtype table of --tolerance-table) and
times both with its own clock (--warmup, then the median of --iterations, or
fewer with --stop-at-ci; the quartiles go into performance.extra; with
--num-trials N, N trials on inputs drawn with their own seeds, all of which
must pass, and the mean of their medians). Quantized kernels (op_type moe, a
quant: tag, float8/float4 tensors) get the low-bit evaluator: 95% of each
float output's values within the tolerance (--required-matched-ratio), the
share recorded. Sampling kernels (op_type sampling, a probs or logits input)
get the sampling evaluator: every sample inside its row's top-k/top-p/min-p
support, and the frequencies of --sampling-samples draws per row within a
total variation distance of 0.2 (--sampling-tvd-threshold) of the expected
distribution, beyond what sampling noise gives. --config FILE sets these per
op_type and per definition (and, at its top, scratch_limit in bytes).
Each timed call gets new values for the random inputs (reordered), and the call
fib draws is judged against the reference on that call's own inputs.
A PASSED solution is also run on other random inputs, in the same tensors and in
new ones: outputs that do not follow the inputs (results reused or memoized on
input addresses) are INCORRECT. Sources with red flags (side streams, torch
fallbacks in kernels, the reference, try/except) get run.red-flag warnings.
Compile errors, exceptions, crashes and timeouts become COMPILE_ERROR,
RUNTIME_ERROR and TIMEOUT evaluations; the run goes on. Every worker runs in a
sandbox (bubblewrap): the dataset read-only, no network, no home directory, a
private /tmp of --scratch-limit bytes in memory; a solution is built by a worker
of its own and runs with its cache entry read-only, so nothing it writes
outlives its worker. Without bubblewrap nothing runs unless --unsafe-no-sandbox.
Each trace is written to DATASET/traces/<author>/<op_type>/<definition>.jsonl as
soon as its evaluation ends (atomically, under a lock), with the settings it was
made with; it replaces an older trace of the same solution, workload and
settings. An interrupted run keeps what it finished: --resume skips what is
traced already. --shard K/N runs one of N disjoint parts (by definition and
solution) for N machines or jobs; merge their datasets with `fib report merge`.
--devices cuda:0,cuda:1 runs one worker per GPU of this machine, each taking
whole definitions.
On a terminal a status line shows progress and the time left.

Exit status: 0 every evaluation PASSED, 1 some did not (or a workload could not
be run), 2 usage, 3 I/O or environment (no worker, unwritable dataset).)TXT";

// A compiler's line without the directories of the file it names ("/cache/…/src/main.cpp:3:1:
// error: …" becomes "main.cpp:3:1: error: …"), so that the error itself fits the line.
std::string without_directories(const std::string& line) {
  const std::size_t colon = line.find(':');
  const std::size_t space = line.find(' ');
  const std::size_t slash = line.rfind('/', colon);
  if (colon == std::string::npos || slash == std::string::npos || slash == 0 ||
      (space != std::string::npos && space < colon)) {
    return line;
  }
  return line.substr(slash + 1);
}

// The settings flags the command line gave: they override the settings file; the others stay
// empty, so that the file (or fib's defaults) decides.
EvaluationOverrides settings_flags(const RunCommand& command) {
  const auto given = [&](const char* flag) { return command.subcommand->count(flag) > 0; };
  EvaluationOverrides out;
  if (given("--warmup")) {
    out.warmup = command.warmup;
  }
  if (given("--iterations")) {
    out.iterations = command.iterations;
  }
  if (given("--num-trials")) {
    out.trials = command.trials;
  }
  if (given("--atol")) {
    out.atol = command.atol;
  }
  if (given("--rtol")) {
    out.rtol = command.rtol;
  }
  if (given("--tolerance-table")) {
    out.tolerance = command.tolerance_table ? ToleranceTable::on : ToleranceTable::off;
  }
  if (given("--required-matched-ratio")) {
    out.required_matched_ratio = command.required_matched_ratio;
  }
  if (given("--cold-cache")) {
    out.cold_cache = command.cold_cache ? ColdCache::yes : ColdCache::no;
  }
  if (given("--stop-at-ci")) {
    out.stop_at_ci = command.stop_at_ci;
  }
  if (given("--evaluator")) {
    out.evaluator = parse_enum<EvaluatorChoice>(command.evaluator);
  }
  if (given("--sampling-validation-trials")) {
    out.sampling_validation_trials = command.sampling_validation_trials;
  }
  if (given("--sampling-samples")) {
    out.sampling_samples = command.sampling_samples;
  }
  if (given("--sampling-tvd-threshold")) {
    out.sampling_tvd_threshold = command.sampling_tvd_threshold;
  }
  return out;
}

// One evaluation's line on standard output (none with --quiet).
void print_evaluation(const RunCommand& command, RunProgress& progress, const RunEvaluation& e) {
  progress.finished();
  if (command.quiet) {
    return;
  }
  const Json& evaluation = e.trace["evaluation"];
  std::string detail;
  if (evaluation.contains("performance") && evaluation["performance"].is_object()) {
    const auto& p = evaluation["performance"];
    detail =
        fmt::format("{:.4f} ms, reference {:.4f} ms, speedup {:.2f}x", p.value("latency_ms", 0.0),
                    p.value("reference_latency_ms", 0.0), p.value("speedup_factor", 0.0));
  } else if (evaluation.contains("correctness") && evaluation["correctness"].is_object()) {
    const auto& c = evaluation["correctness"];
    detail = fmt::format("max abs error {:g}, max rel error {:g}",
                         c.value("max_absolute_error", 0.0), c.value("max_relative_error", 0.0));
  } else {
    // The line that says what went wrong (a compiler's first error, not ninja's last words).
    detail = text_excerpt(without_directories(first_error_line(evaluation.value("log", ""))));
    if (e.log_file) {
      detail += fmt::format(" (whole log: {})", e.log_file->string());
    }
  }
  progress.print_result(stdout, fmt::format("{:<20}{} / {} / {}  {}",
                                            evaluation.value("status", "?"), e.definition,
                                            e.solution, e.workload_uuid.substr(0, 8), detail));
}

// The runners' devices: --devices, else the one of --device (which must agree when both are
// given).
Expected<RunDevices> devices_of(const RunCommand& command, SmokeDevice device) {
  if (command.subcommand->count("--devices") == 0) {
    return RunDevices{device, {std::nullopt}};
  }
  auto parsed = parse_run_devices(command.devices);
  if (parsed && command.subcommand->count("--device") > 0 && parsed->device != device) {
    return unexpected(
        make_diagnostic(codes::k_usage, fmt::format("--device {} and --devices {} disagree",
                                                    command.device, command.devices)));
  }
  return parsed;
}

} // namespace

Subcommand register_run(CLI::App& app) {
  auto command = std::make_shared<RunCommand>();
  CLI::App* sub = app.add_subcommand(
      "run", "Evaluate solutions against the reference on the workloads and write traces");
  command->subcommand = sub;
  sub->add_option("--dataset", command->dataset, "The dataset root")->required();
  sub->add_option("--definitions", command->definitions, "Only these definitions");
  sub->add_option("--solutions", command->solutions, "Only these solutions");
  sub->add_option("--device", command->device, "cpu (default) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  sub->add_option("--warmup", command->warmup, "Untimed runs first (default 3)")
      ->check(CLI::Range(0, 100000));
  sub->add_option("--iterations", command->iterations, "Timed runs; the median counts (default 10)")
      ->check(CLI::Range(1, 100000));
  sub->add_option("--atol", command->atol, "Absolute tolerance (default 1e-2)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--rtol", command->rtol, "Relative tolerance (default 1e-2)")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--tolerance-table", command->tolerance_table,
                "Per-dtype tolerances (fp32 1e-5, fp16 1e-3, bf16 8e-3/1e-2, fp8 1e-1/2e-1 with "
                "85% of values)");
  sub->add_option("--num-trials", command->trials,
                  "Trials, each on inputs drawn with its own seed; all must pass, and the latency "
                  "is the mean of their medians (default 1)")
      ->check(CLI::Range(1, 1000));
  sub->add_option("--required-matched-ratio", command->required_matched_ratio,
                  "The share of each float output's values that must be within the tolerance "
                  "(above 0, at most 1; default all, 0.95 for the low-bit evaluator)")
      ->check(CLI::Range(0.0, 1.0))
      ->check(positive_number("ratio"));
  sub->add_option("--evaluator", command->evaluator,
                  "How outputs are judged: auto (default: sampling for sampling kernels, low-bit "
                  "for quantized ones), standard, low-bit or sampling")
      ->check(CLI::IsMember({"auto", "standard", "low-bit", "sampling"}));
  sub->add_option("--sampling-samples", command->sampling_samples,
                  "Sampling evaluator: samples drawn per row for the distribution (default "
                  "500000 on cuda, 5000 on cpu)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100'000'000}));
  sub->add_option("--sampling-validation-trials", command->sampling_validation_trials,
                  "Sampling evaluator: calls whose every sample must be in its row's support "
                  "(default 100)")
      ->check(CLI::Range(1, 100000));
  sub->add_option("--sampling-tvd-threshold", command->sampling_tvd_threshold,
                  "Sampling evaluator: the largest total variation distance allowed beyond the "
                  "noise of the samples drawn (default 0.2)")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_flag("--cold-cache", command->cold_cache,
                "Flush the caches before each timed call (the GPU's L2 on cuda, the CPU's "
                "last-level cache on cpu), outside the timed region");
  sub->add_option("--stop-at-ci", command->stop_at_ci,
                  "Stop a solution's timed calls early (after at least 5) once the 95% confidence "
                  "interval of their median is within this share of it, e.g. 0.02")
      ->check(CLI::Range(1e-9, 0.999999));
  sub->add_option("--config", command->config,
                  "Settings per op_type and definition (JSON, or TOML by the .toml extension); "
                  "the flags given override it")
      ->check(CLI::ExistingFile);
  sub->add_option(
         "--timeout", command->timeout_seconds,
         "Seconds one evaluation may run (default 300; a build has its own 15-minute limit)")
      ->check(positive_number("number of seconds"));
  sub->add_option("--memory-limit", command->memory_limit,
                  "Address-space limit of the worker in bytes (default 8 GiB; none with cuda)")
      ->check(positive_number("number of bytes"));
  sub->add_option("--scratch-limit", command->scratch_limit,
                  "Bytes a worker may write in all, into its private /tmp: inputs, kept outputs "
                  "and what the code writes (default 4 GiB; past it: RUNTIME_ERROR)")
      ->check(positive_number("number of bytes"));
  sub->add_flag("--dry-run", command->dry_run, "Evaluate and print; write no trace");
  sub->add_flag("--resume", command->resume,
                "Skip the evaluations already traced with the same settings");
  sub->add_option("--devices", command->devices,
                  "Several devices at once, one worker each: cuda:0,cuda:1 (or cpu,cpu); each "
                  "takes whole definitions");
  sub->add_option("--shard", command->shard,
                  "Run part K of N (K/N): the (definition, solution) pairs of that shard");
  sub->add_flag("--unsafe-no-sandbox", command->unsafe_no_sandbox,
                "Run solutions and references without the sandbox, with your full rights");
  sub->add_flag("--quiet", command->quiet,
                "No line per evaluation and no progress; diagnostics and the summary only");
  sub->footer(k_run_footer);
  return {command->subcommand, [command](PythonFrontend& /*python*/) { return run_run(*command); }};
}

int run_run(const RunCommand& command) {
  RunShard shard;
  if (!command.shard.empty()) {
    auto parsed = parse_run_shard(command.shard);
    if (!parsed) {
      write_diagnostic(stderr, parsed.error());
      return k_exit_usage;
    }
    shard = *parsed;
  }
  RunOptions options;
  if (!command.config.empty()) {
    DiagnosticList problems;
    auto config = load_run_config(command.config, problems);
    for (const auto& d : problems.items()) {
      write_diagnostic(stderr, d);
    }
    if (!config) {
      return k_exit_usage;
    }
    options.config = std::move(*config);
  }
  ReferenceRunnerOptions runner_options;
  runner_options.job_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(command.timeout_seconds * 1000.0));
  runner_options.device = command.device == "cuda" ? SmokeDevice::cuda : SmokeDevice::cpu;
  auto devices = devices_of(command, runner_options.device);
  if (!devices) {
    write_diagnostic(stderr, devices.error());
    return k_exit_usage;
  }
  runner_options.device = devices->device;
  runner_options.address_space = command.memory_limit;
  runner_options.scratch_bytes = command.scratch_limit;
  if (options.config.scratch_limit && command.subcommand->count("--scratch-limit") == 0) {
    runner_options.scratch_bytes = *options.config.scratch_limit;
  }
  if (runner_options.device == SmokeDevice::cuda &&
      command.subcommand->count("--memory-limit") == 0) {
    runner_options.address_space = 0;
  }
  if (command.unsafe_no_sandbox) {
    runner_options.sandbox = SandboxMode::unsafe_disabled;
    write_diagnostic(stderr, unsafe_sandbox_warning());
  }
  std::vector<std::unique_ptr<ReferenceRunner>> runners;
  std::vector<ReferenceRunner*> runner_pointers;
  for (const std::optional<int>& gpu : devices->gpus) {
    ReferenceRunnerOptions own = runner_options;
    own.cuda_device = gpu;
    runners.push_back(std::make_unique<ReferenceRunner>(own));
    runner_pointers.push_back(runners.back().get());
  }
  options.dataset = command.dataset;
  options.definitions = command.definitions;
  options.solutions = command.solutions;
  options.command_line = settings_flags(command);
  options.evaluate.cache = default_build_cache();
  options.dry_run = command.dry_run ? DryRun::yes : DryRun::no;
  options.device = runner_options.device;
  options.resume = command.resume ? Resume::yes : Resume::no;
  options.shard = shard;
  RunProgress progress(command.quiet ? ProgressStyle::none : progress_style_for(stderr), stderr);
  RunObserver observer;
  observer.planned = [&progress](const RunPlanCounts& counts) { progress.planned(counts); };
  observer.starting = [&progress](const RunStep& step) { progress.starting(step); };
  observer.evaluated = [&command, &progress](const RunEvaluation& e) {
    print_evaluation(command, progress, e);
  };
  const RunResult result = run_solutions(options, runner_pointers, observer);
  progress.clear();
  for (const auto& d : result.diagnostics) {
    write_diagnostic(stderr, d);
  }
  std::string counts;
  for (const auto& [status, count] : result.statuses) {
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", count, status);
  }
  std::string extra;
  if (result.not_run > 0) {
    counts +=
        fmt::format("{}{} could not run (see above)", counts.empty() ? "" : "; ", result.not_run);
  }
  if (result.replaced > 0) {
    extra += fmt::format("; {} older trace{} of the same evaluation replaced", result.replaced,
                         result.replaced == 1 ? "" : "s");
  }
  write_line(stderr, fmt::format("fib run: {} evaluation{}{}{}; {} trace file{} written{}{}",
                                 result.evaluations, result.evaluations == 1 ? "" : "s",
                                 counts.empty() ? "" : ": ", counts, result.trace_files.size(),
                                 result.trace_files.size() == 1 ? "" : "s", extra,
                                 command.dry_run ? " (dry run)" : ""));
  const bool all_passed = result.statuses.size() == 1 && result.statuses.count("PASSED") == 1;
  const Outcome outcome = result.evaluations > 0 && !all_passed ? Outcome::failed : Outcome::clean;
  return exit_status(result.diagnostics, Strictness::normal, outcome);
}

} // namespace fib::app
