#pragma once
// Running untrusted code for real (docs/execution.md): the build check and the smoke run of
// references, and the evaluation of solutions, done by `fib-worker`, a separate process that
// links libtorch and embeds Python with torch, run inside the sandbox of exec/sandbox.hpp. fib
// itself never loads libtorch; this class starts workers, speaks their line protocol and survives
// them: every wait has a deadline, a job past its timeout gets the worker's whole process tree
// killed (and a new worker for the next job), a worker that dies or says something malformed is a
// diagnostic, never a crash or a hang of fib.
//
// Protocol (one JSON object per line over a socket that is the worker's standard input):
//   worker → fib, once at start: {"fib_worker": 1, "torch": "1.13.0a0", "python": "3.11.2",
//                                  "cuda": false, "float8": false[, "device_name": "..."]}
//   fib → worker: {"id": <random>, "job": "build" | "smoke" | "build_solution" | "load_solution" |
//                  "reference_outputs" | "solution_outputs", "name": "...", "reference": "...",
//                  "inputs": ["x", ...], "outputs": ["y", ...], "device": "cpu", "seed": 0, ...}
//   worker → fib, during reference_outputs / solution_outputs, per timed call:
//                 {"id", "timing": "prepare", "iteration": i}; fib answers {"id", "seed": S};
//                 {"id", "timing": "ready", "iteration": i}; fib answers {"id", "go": i, "key"}
//                 and holds the clock until {"id", "timing": "done", "iteration": i, "ms": ...,
//                 "commit": SHA-256 of the key and the outputs}; fib answers {"id", "keep": true}
//                 (and "stop": true when its adaptive stop ends the calls); a solution with a
//                 setup() says {"id", "timing": "setup", "iteration": i} between (no answer)
//   worker → fib: {"id": <the same>, "outcome": "ok" | "failed" | "skipped",
//                  "diagnostics": [{"code", "severity", "message", "pointer", "hint"}], ...}
//
// Judging: `evaluate` runs the reference in one sandboxed worker and the solution in another (one
// per solution, its build cache entry read-only; a C++ or CUDA solution is built before by a
// worker of its own that has the entry writable and never loads the build);
// the outputs cross as safetensors files that fib compares itself (exec/compare.hpp), and the
// latencies are fib's own clock over each timed call. What the solution's process reports is
// only cross-checked.

#include <fib/base/diagnostic.hpp>
#include <fib/base/enum_names.hpp>
#include <fib/exec/compare.hpp>
#include <fib/exec/sandbox.hpp>
#include <fib/exec/smoke.hpp>
#include <fib/model/definition.hpp>
#include <fib/model/solution.hpp>
#include <fib/model/workload.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fib {

// --- Interface ---

inline constexpr std::uintmax_t k_default_smoke_max_bytes = std::uintmax_t{256} << 20;
// The byte with which fib-worker hands fib its scratch directory's descriptor (send_descriptor,
// include/fib/util/subprocess.hpp), right after it connects and before Python starts.
inline constexpr char k_scratch_descriptor_tag = 'S';

inline constexpr std::uintmax_t k_default_worker_address_space = std::uintmax_t{8} << 30;
// The default of --scratch-limit: what one sandboxed worker may write in all (its inputs, kept
// outputs and anything the code under test writes), in memory (a tmpfs).
inline constexpr std::uint64_t k_default_scratch_bytes = std::uint64_t{4} << 30;

enum class SmokeDevice { cpu, cuda };

template <> struct EnumNames<SmokeDevice> {
  static constexpr std::array k_table = std::to_array<EnumName<SmokeDevice>>({
      {SmokeDevice::cpu, "cpu"},
      {SmokeDevice::cuda, "cuda"},
  });
};

// "cpu", "cuda".
inline std::string_view to_string(SmokeDevice device) {
  return enum_name(device);
}

struct ReferenceRunnerOptions {
  // The worker executable; empty: find_worker_executable().
  std::filesystem::path worker;
  std::chrono::milliseconds job_timeout{60'000};
  std::chrono::milliseconds startup_timeout{120'000}; // starting Python and importing torch
  std::uintmax_t address_space = k_default_worker_address_space; // RLIMIT_AS of the worker
  SmokeDevice device = SmokeDevice::cpu;
  // `fib run --devices`: the workers see only this GPU (CUDA_VISIBLE_DEVICES set to this index,
  // or to the index-th entry of fib's own CUDA_VISIBLE_DEVICES when it has one); nullopt: every
  // GPU fib sees.
  std::optional<int> cuda_device;
  std::uintmax_t max_bytes = k_default_smoke_max_bytes; // inputs + outputs of one smoke run
  std::uint64_t seed = 0;
  SandboxMode sandbox = SandboxMode::enforced;
  // Limits of each worker and everything it starts (exec/sandbox.hpp for how they are kept).
  std::uint64_t max_processes = 1024;                     // tasks: processes and threads
  std::uint64_t max_file_bytes = std::uint64_t{16} << 30; // RLIMIT_FSIZE of one file
  std::uint64_t max_open_files = 4096;                    // RLIMIT_NOFILE
  // All a sandboxed worker may write: the size of its /tmp, a tmpfs of its own (--scratch-limit).
  std::uint64_t scratch_bytes = k_default_scratch_bytes;
  std::size_t output_cap = std::size_t{1} << 20; // worker stdout+stderr bytes passed to fib's
};

// What the worker said about itself at start.
struct WorkerInfo {
  std::string torch_version;
  std::string python_version;
  bool cuda = false;
  bool float8 = false;
  std::string device_name;  // CUDA device 0, when the worker was started for --device cuda
  std::string cuda_version; // torch.version.cuda, likewise
  // What its commitment to a call's outputs costs on its device: (output bytes, seconds), by size,
  // the best of a few, measured before any untrusted code ran; empty when it did not say. The
  // cost fib subtracts from each timed call.
  std::vector<std::pair<std::uint64_t, double>> commit_cost;
  // How fast the device copies memory: (bytes copied, bytes read and written per second), by
  // size, measured likewise; empty when it did not say. fib's plausibility floor reads it.
  std::vector<std::pair<std::uint64_t, double>> copy_bandwidth;
};

enum class ReferenceVerdict { ok, failed, skipped, unavailable };

struct ReferenceOutcome {
  ReferenceVerdict verdict = ReferenceVerdict::unavailable;
  // Errors (build failed, mismatch, exception, timeout, crash), notes (skipped, ok) and the
  // environment error when the worker could not be used. No `file` set.
  std::vector<Diagnostic> diagnostics;
};

// The worker, found from the running executable (/proc/self/exe), first executable wins:
//   1. $FIB_WORKER when set and not empty (returned as given, not checked);
//   2. the installed layout: `<prefix>/libexec/fib/fib-worker` for `<prefix>/bin/fib` (the
//      relative path GNUInstallDirs gives at configure time);
//   3. `fib-worker` beside the running executable;
//   4. only when the executable's directory is a CMake build directory (it holds CMakeFiles/): the
//      build tree's `apps/fib-worker/fib-worker`, seen from `apps/fib/` or from `tests/`.
// nullopt when none exists. An installed fib never falls back to a build tree.
std::optional<std::filesystem::path> find_worker_executable();

// The solution build cache: the cache root (util/cache_root.hpp; /tmp/.cache/fib when none can be
// formed), whose `solutions/` holds one entry per solution.
std::filesystem::path default_build_cache();

// The sampling evaluator's settings (docs/run.md, "Sampling kernels"): the calls on the
// workload's inputs whose every sample must be inside its row's support, the samples per row
// drawn for the distribution (0: k_sampling_samples_cuda on cuda, k_sampling_samples_cpu on the
// CPU) and the largest total variation distance allowed beyond the noise of that many samples.
struct SamplingSettings {
  int validation_trials = 100;
  std::int64_t samples_per_row = 0;
  double tvd_threshold = 0.2;
};
inline constexpr std::int64_t k_sampling_samples_cuda = 500'000; // the old tool's count
inline constexpr std::int64_t k_sampling_samples_cpu = 5'000;

// The samples per row drawn on `device`: the settings' count, else the device's default.
inline std::int64_t sampling_samples_on(const SamplingSettings& settings, SmokeDevice device) {
  if (settings.samples_per_row > 0) {
    return settings.samples_per_row;
  }
  return device == SmokeDevice::cuda ? k_sampling_samples_cuda : k_sampling_samples_cpu;
}

// How `fib run` evaluates a solution on one workload.
// yes: the caches are flushed before each timed call, outside the timed region (a buffer twice
// the size of the GPU's L2 cache on CUDA, of the last-level CPU cache on the CPU), so that
// kernels are timed as they run inside a model, with their inputs not already cached.
enum class ColdCache { no, yes };

struct EvaluateOptions {
  int warmup = 3;
  int iterations = 10;
  double atol = 1e-2; // the old tool's default
  double rtol = 1e-2;
  // on: per-dtype atol/rtol of the old tool's tolerance table instead (fp32 1e-5, fp16 1e-3, bf16
  // 8e-3/1e-2, fp8 1e-1/2e-1 with an 85% hit ratio).
  ToleranceTable tolerance_table = ToleranceTable::off;
  // The share of each floating-point output's values that must be close (compare_outputs);
  // nullopt: all of them, or the tolerance table's ratio.
  std::optional<double> required_matched_ratio;
  // How the outputs are judged; low_bit records the matched ratio in correctness.extra, sampling
  // the distance between distributions (SamplingSettings).
  Evaluator evaluator = Evaluator::standard;
  SamplingSettings sampling;
  // Each trial runs the reference and the solution on inputs drawn with its own seed (trial t:
  // seed t); every trial must pass, and the latency is the mean of the trials' medians.
  int trials = 1;
  // The adaptive stop: a solution's timed calls end once their median's 95% confidence interval
  // is within this share of it (at least 5 calls, at most `iterations`); nullopt: all of them.
  // The reference always makes all `iterations`.
  std::optional<double> stop_at_ci;
  ColdCache cold_cache = ColdCache::no;
  std::filesystem::path cache;        // builds go to CACHE/solutions/<content hash>/
  std::filesystem::path dataset_root; // safetensors paths are relative to it
  // The build of a solution is its own job with this limit (compiling a torch extension takes
  // tens of seconds); the evaluation after it has the runner's job timeout.
  std::chrono::milliseconds build_timeout{900'000};
};

// An evaluation as the dataset stores it (status, environment, timestamp, log, and
// correctness/performance where the status has them), or why there is none.
struct SolutionEvaluation {
  std::optional<Json> evaluation; // {"status", "environment", "timestamp", "log", ...}
  // Why nothing could be evaluated (`run.inputs`, `run.reference`, `worker.unavailable`, …).
  std::vector<Diagnostic> diagnostics;
  // A COMPILE_ERROR's whole build log, as fib wrote it (compile_log_path); nullopt when it could
  // not be written or the status is another.
  std::optional<std::filesystem::path> log_file;
  // PASSED: the median over the timed calls of fib's interval less the worker's own measurement
  // (the round trip between fib and the worker that every latency includes); nullopt otherwise.
  std::optional<double> timing_overhead_ms;
};

// Where fib keeps the build log of a solution whose build failed:
// CACHE/logs/<content hash>.compile.log. Outside the solution's cache entry, so no code of the
// solution's can change it.
std::filesystem::path compile_log_path(const std::filesystem::path& cache,
                                       const std::string& content_hash);

// The line of a build log that says what went wrong: the first one containing "error:" in any
// case (a compiler's `file:line: error: …`, nvcc's `file(line): error: …`, Python's
// `SyntaxError: …`), else the last line that is not blank; "" for a blank log. The line is given
// without its end-of-line.
std::string first_error_line(std::string_view log);

class EvaluationSteps;

class ReferenceRunner {
public:
  explicit ReferenceRunner(ReferenceRunnerOptions options);
  ~ReferenceRunner();
  ReferenceRunner(const ReferenceRunner&) = delete;
  ReferenceRunner& operator=(const ReferenceRunner&) = delete;

  // The old tool's reference build (the last step of its definition checks): the reference imports
  // in a fresh namespace, `run` exists and is callable, binds len(inputs) positional arguments, and
  // a return annotation fits the outputs. Errors: `reference.build-failed`, `smoke.timeout`,
  // `worker.crashed`; `worker.unavailable` / `worker.protocol` when the worker cannot be used.
  ReferenceOutcome check_build(const Definition& definition);

  // The smoke run: plans tiny inputs (plan_smoke_run), skips above max_bytes, and has the worker
  // build them, call `run`, and compare count, shapes and dtypes with `outputs`. With an `init`
  // source (the dumper's extra key; "" when none) the worker first tries the inputs it builds
  // (dumper notes §4.4: device "cpu", the seed, the planned var axes it requires, every const
  // axis it accepts; names mapped to the definition's inputs); when init cannot run or map,
  // the synthesized inputs are used and the note says why. The build check runs first (in the
  // same worker job) and its note or error comes first in the outcome.
  ReferenceOutcome smoke_run(const Definition& definition, std::string_view init = "");

  // Builds `solution` (cached by its content hash; python/triton imported, cpp/cuda with binding
  // torch compiled into an extension, .cu files by nvcc) in its own sandboxed worker, runs the
  // reference on the inputs of `workload` in another, and the solution on the same inputs; fib
  // compares the outputs (count, shape, dtype, values within atol/rtol: compare_outputs) and
  // times both with its own clock (the median of the timed calls). A compile error, an exception
  // or a crash of the solution's worker (RUNTIME_ERROR), its job timeout (TIMEOUT; the worker is
  // restarted), and timings its process reported that disagree with fib's clock (RUNTIME_ERROR,
  // with the reason) all become evaluations; the run goes on. The reference failing, or its
  // worker misbehaving, is a diagnostic (`run.reference`, `worker.protocol`) and no evaluation.
  // The environment, timestamp and performance of the evaluation are fib's, never the worker's.
  SolutionEvaluation evaluate(const Definition& definition, const Solution& solution,
                              const Workload& workload, const EvaluateOptions& options);

  // Runs the reference on each of `workloads` ahead of the solutions, with no solution code
  // running (a solution's worker still alive is stopped first), and keeps the runs (their files
  // in a private directory of fib's) for evaluate() on the same definition; another definition
  // forgets them. Stops running ahead past 2 GiB of kept files: evaluate() runs the rest itself,
  // stopping the solution's worker for each. Failures are kept too and reported by evaluate().
  void prepare_references(const Definition& definition,
                          const std::vector<const Workload*>& workloads,
                          const EvaluateOptions& options);

  // Builds `solution` as `evaluate` would (same cache) and loads it into its worker, without
  // running it: ok, or failed with the compile log in the outcome's `log`; unavailable when the
  // worker cannot be used.
  struct BuildResult {
    ReferenceVerdict verdict = ReferenceVerdict::unavailable;
    std::string log;
    std::vector<Diagnostic> diagnostics;
  };
  BuildResult build_solution(const Solution& solution, const std::filesystem::path& cache);

  // Set once the worker has started (nullopt before, or when it could not start).
  const std::optional<WorkerInfo>& worker_info() const;

  // How many times a worker process was started (restarts after timeouts and crashes count).
  std::size_t worker_starts() const;

private:
  friend class EvaluationSteps;
  class Impl;
  std::unique_ptr<Impl> m_impl;
};

enum class ReferenceChecks { none, build, build_and_smoke };

// The build check, then (ReferenceChecks::build_and_smoke, and only when the build passed) the
// smoke run; their diagnostics in order. Nothing for ReferenceChecks::none.
// `init` as for smoke_run.
std::vector<Diagnostic> run_reference_checks(const Definition& definition, ReferenceChecks checks,
                                             ReferenceRunner& runner, std::string_view init = "");

} // namespace fib
