#include "fib/exec/worker_client.hpp"

#include "scratch_files.hpp"
#include "worker_process.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/io/safetensors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <random>
#include <unistd.h>

// FIB_WORKER_FROM_BINDIR: where `cmake --install` puts the worker relative to where it puts fib
// ("../libexec/fib/fib-worker" in the GNU layout), defined by cmake/FibInstall.cmake.

namespace fib {
namespace {

std::string human_bytes(std::uintmax_t bytes) {
  if (bytes >= (std::uintmax_t{1} << 30)) {
    return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
  }
  if (bytes >= (std::uintmax_t{1} << 20)) {
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  }
  return fmt::format("{} bytes", bytes);
}

// Where one evaluation's files go: the job directory's name in the workers' scratch directories
// (fresh for each job) and fib's own judging directory (never bound into a sandbox).
struct JudgingPlace {
  std::string job;
  std::filesystem::path directory;
};

// What the reference's run on one workload left for the solution's: copies of its inputs and
// outputs in fib's own judging directory, the scalar inputs, and its latency by fib's clock.
struct ReferenceRun {
  std::filesystem::path inputs;
  std::filesystem::path expected;
  Json scalars;
  double latency_ms = 0.0;
};

// Removes a file of fib's when the scope ends.
struct RemovedAtExit {
  std::filesystem::path path;
  ~RemovedAtExit() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

std::uint64_t random_word() {
  static std::mt19937_64 generator{std::random_device{}()};
  return generator();
}

} // namespace

std::optional<std::filesystem::path> find_worker_executable() {
  if (const char* configured = std::getenv("FIB_WORKER"); configured != nullptr && *configured) {
    return std::filesystem::path(configured);
  }
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return std::nullopt;
  }
  const auto directory = self.parent_path();
  std::vector<std::filesystem::path> candidates{
      (directory / FIB_WORKER_FROM_BINDIR).lexically_normal(), directory / "fib-worker"};
  // CMake gives every build directory with targets a CMakeFiles/ folder; an installed bin/ has
  // none, so an installed fib never reaches into a build tree.
  if (std::filesystem::is_directory(directory / "CMakeFiles", ec)) {
    candidates.push_back(directory.parent_path() / "fib-worker" / "fib-worker");
    candidates.push_back(directory.parent_path() / "apps" / "fib-worker" / "fib-worker");
  }
  for (const auto& candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

class ReferenceRunner::Impl {
public:
  explicit Impl(ReferenceRunnerOptions options)
      : m_options(std::move(options)),
        m_reference(detail::WorkerProcessOptions{m_options, {}, {}}) {}

  ~Impl() { retire_solution_worker(); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const ReferenceRunnerOptions& options() const { return m_options; }

  // The worker of build checks and smoke runs (nothing of the host bound).
  detail::WorkerProcess& reference() { return m_reference; }

  // The worker that runs references on workloads: the dataset bound read-only.
  detail::WorkerProcess& workload_reference(const std::filesystem::path& dataset_root) {
    if (!m_workload_reference || m_workload_root != dataset_root) {
      std::vector<std::filesystem::path> read_only;
      std::error_code ec;
      if (!dataset_root.empty() && std::filesystem::is_directory(dataset_root, ec)) {
        read_only.push_back(std::filesystem::absolute(dataset_root, ec));
      }
      m_workload_reference = std::make_unique<detail::WorkerProcess>(
          detail::WorkerProcessOptions{m_options, std::move(read_only), {}});
      m_workload_root = dataset_root;
    }
    return *m_workload_reference;
  }

  // The worker of one solution: its build cache entry (created here) the only writable bind.
  // A worker for another solution is stopped first. nullopt with a diagnostic when the entry
  // cannot be created.
  Expected<detail::WorkerProcess*> solution_worker(const std::string& key,
                                                   const std::filesystem::path& cache) {
    if (m_solution && m_solution_key == key && m_solution_cache == cache) {
      return m_solution.get();
    }
    retire_solution_worker();
    std::error_code ec;
    const std::filesystem::path entry = std::filesystem::absolute(cache / "solutions" / key, ec);
    std::filesystem::create_directories(entry, ec);
    if (ec) {
      return unexpected(make_diagnostic(
          codes::k_worker_unavailable,
          fmt::format("cannot create the build cache entry {}: {}", entry.string(), ec.message())));
    }
    m_solution = std::make_unique<detail::WorkerProcess>(
        detail::WorkerProcessOptions{m_options, {}, {entry}, "the solution's worker"});
    m_solution_key = key;
    m_solution_cache = cache;
    m_solution_entry = entry;
    return m_solution.get();
  }

  std::size_t starts() const {
    return m_reference.starts() + m_retired_starts +
           (m_workload_reference ? m_workload_reference->starts() : 0) +
           (m_solution ? m_solution->starts() : 0);
  }
  void retire_solution_worker() {
    if (m_solution) {
      m_retired_starts += m_solution->starts();
      m_solution.reset();
      strip_set_id_bits(m_solution_entry);
    }
  }

  const std::optional<WorkerInfo>& info() const {
    if (m_reference.info() || !m_workload_reference) {
      return m_reference.info();
    }
    return m_workload_reference->info();
  }

  std::map<std::string, std::string> failed_builds; // solution hash → compile log

  // The reference's run on `workload` of `definition`, when this runner made it; runs of another
  // definition are forgotten (and their files removed) when a new one is asked for.
  const ReferenceRun* cached_reference(const std::string& definition, const std::string& workload) {
    if (definition != m_reference_definition) {
      for (const auto& [uuid, run] : m_reference_runs) {
        std::error_code ec;
        std::filesystem::remove(run.inputs, ec);
        std::filesystem::remove(run.expected, ec);
      }
      m_reference_runs.clear();
      m_reference_definition = definition;
    }
    const auto it = m_reference_runs.find(workload);
    return it == m_reference_runs.end() ? nullptr : &it->second;
  }
  const ReferenceRun& remember_reference(const std::string& workload, ReferenceRun run) {
    return m_reference_runs[workload] = std::move(run);
  }

  // A fresh job name and fib's private judging directory (made on first use).
  Expected<JudgingPlace> judging_place() {
    if (!m_judging) {
      auto made = ScratchDirectory::create();
      if (!made) {
        return unexpected(made.error());
      }
      m_judging = std::move(*made);
    }
    // Unguessable, so that code in a sandbox cannot put something in the next job's way.
    return JudgingPlace{fmt::format("job-{}-{:016x}", ++m_next_job, random_word()),
                        m_judging->path()};
  }

private:
  ReferenceRunnerOptions m_options;
  detail::WorkerProcess m_reference;
  std::unique_ptr<detail::WorkerProcess> m_workload_reference;
  std::filesystem::path m_workload_root;
  std::unique_ptr<detail::WorkerProcess> m_solution;
  std::string m_solution_key;
  std::filesystem::path m_solution_cache;
  std::filesystem::path m_solution_entry;
  std::size_t m_retired_starts = 0;
  std::optional<ScratchDirectory> m_judging;
  std::size_t m_next_job = 0;
  std::string m_reference_definition;
  std::map<std::string, ReferenceRun> m_reference_runs; // by workload uuid
};

ReferenceRunner::ReferenceRunner(ReferenceRunnerOptions options)
    : m_impl(std::make_unique<Impl>(std::move(options))) {}

ReferenceRunner::~ReferenceRunner() = default;

namespace {

Json names_of(const OrderedMap<TensorSpec>& specs) {
  Json out = Json::array();
  for (const auto& [name, spec] : specs) {
    out.push_back(name);
  }
  return out;
}

std::vector<std::string> names_of_vector(const OrderedMap<TensorSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& [name, spec] : specs) {
    out.push_back(name);
  }
  return out;
}

} // namespace

ReferenceOutcome ReferenceRunner::check_build(const Definition& definition) {
  Json request{{"job", "build"},
               {"name", definition.name},
               {"reference", definition.reference},
               {"inputs", names_of(definition.inputs)},
               {"outputs", names_of(definition.outputs)}};
  return m_impl->reference().run_job(std::move(request), m_impl->options().job_timeout).outcome;
}

ReferenceOutcome ReferenceRunner::smoke_run(const Definition& definition, std::string_view init) {
  // A skip decided here still reports the build, which the worker job would have done.
  const auto skipped_after_build = [&](Diagnostic reason) {
    ReferenceOutcome outcome = check_build(definition);
    if (outcome.verdict == ReferenceVerdict::ok) {
      outcome.verdict = ReferenceVerdict::skipped;
      outcome.diagnostics.push_back(std::move(reason));
    }
    return outcome;
  };
  auto plan = plan_smoke_run(definition);
  if (!plan) {
    return skipped_after_build(plan.error());
  }
  const auto& options = m_impl->options();
  const std::uintmax_t bytes = plan->input_bytes + plan->output_bytes;
  if (bytes > options.max_bytes) {
    Diagnostic d = make_diagnostic(
        codes::k_smoke_skipped,
        fmt::format("smoke run skipped: inputs and outputs need {} with the smallest axis values, "
                    "above --max-bytes {}",
                    human_bytes(bytes), human_bytes(options.max_bytes)));
    d.hint = "the const axes stay at their declared values; raise --max-bytes to run it";
    return skipped_after_build(std::move(d));
  }
  Json request{{"job", "smoke"},
               {"name", definition.name},
               {"reference", definition.reference},
               {"inputs", names_of(definition.inputs)},
               {"outputs", names_of(definition.outputs)},
               {"plan", to_json(*plan)},
               {"const_axes", definition.const_axes()},
               {"init", std::string(init)}};
  return m_impl->reference().run_job(std::move(request), options.job_timeout).outcome;
}

namespace {

// The CPU's model name, for evaluations fib writes itself (timeouts, crashes).
std::string cpu_model() {
  if (std::FILE* info = std::fopen("/proc/cpuinfo", "re")) {
    char line[512];
    while (std::fgets(line, sizeof line, info) != nullptr) {
      std::string_view text(line);
      if (text.starts_with("model name")) {
        std::fclose(info);
        text = text.substr(text.find(':') + 1);
        while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
          text.remove_prefix(1);
        }
        while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
          text.remove_suffix(1);
        }
        return std::string(text);
      }
    }
    std::fclose(info);
  }
  return "cpu";
}

// The solution as the worker's build_solution/evaluate jobs take it.
Json solution_request(const Solution& solution) {
  Json sources = Json::array();
  for (const auto& source : solution.sources) {
    sources.push_back(Json{{"path", source.path}, {"content", source.content}});
  }
  const std::string binding =
      solution.spec.binding ? std::string(to_string(*solution.spec.binding)) : std::string();
  return Json{{"key", solution.content_hash()},
              {"language", std::string(to_string(solution.spec.language))},
              {"binding", binding.empty() ? Json(nullptr) : Json(binding)},
              {"entry_file", solution.spec.entry_file()},
              {"entry_symbol", solution.spec.entry_symbol()},
              {"dps", solution.spec.destination_passing_style == DestinationPassing::yes},
              {"sources", sources}};
}

std::string now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &local);
  return buffer;
}

// An evaluation as fib writes it: the environment is what the workers said about themselves at
// start, before any untrusted code ran; the timestamp is fib's clock.
Json evaluation_by_fib(const std::optional<WorkerInfo>& info, SmokeDevice device,
                       std::string status, std::string log) {
  Json libs = Json::object();
  if (info && !info->torch_version.empty()) {
    libs["torch"] = info->torch_version;
  }
  if (info && !info->python_version.empty()) {
    libs["python"] = info->python_version;
  }
  const bool cuda = device == SmokeDevice::cuda && info && info->cuda;
  if (cuda && !info->cuda_version.empty()) {
    libs["cuda"] = info->cuda_version;
  }
  const std::string hardware =
      cuda ? (info->device_name.empty() ? std::string("CUDA device") : info->device_name)
           : cpu_model();
  Json environment{{"hardware", hardware}, {"libs", libs}};
  return Json{{"status", std::move(status)}, {"environment", std::move(environment)},
              {"timestamp", now_iso8601()},  {"log", std::move(log)},
              {"correctness", nullptr},      {"performance", nullptr}};
}

// The log of a COMPILE_ERROR when the build job failed (ran past its limit, crashed the worker,
// or did not compile); nullopt when it built or the worker could not be used.
std::optional<std::string> compile_error_log(const ReferenceOutcome& built, const Json& reply,
                                             std::chrono::milliseconds build_timeout) {
  for (const auto& d : built.diagnostics) {
    if (d.code == codes::k_smoke_timeout) {
      return fmt::format("the build ran past {:g} s and was stopped",
                         static_cast<double>(build_timeout.count()) / 1000.0);
    }
    if (d.code == codes::k_worker_crashed) {
      return d.message;
    }
  }
  if (built.verdict == ReferenceVerdict::failed) {
    return detail::clip_text(detail::string_field(reply, "log"),
                             detail::k_max_worker_message_bytes);
  }
  return std::nullopt;
}

double median(std::vector<double> values) {
  if (values.empty()) {
    return 0.0;
  }
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2.0;
}

// Why the timings a worker reported cannot be believed, by fib's clock: a call cannot take
// longer than fib saw it take, and a median under half of fib's (less 1 ms for the round trip)
// is not an honest measurement. nullopt when they agree.
std::optional<std::string> timing_disagreement(const detail::TimedCalls& timing,
                                               std::size_t expected_calls) {
  if (timing.fib_ms.size() != expected_calls) {
    return fmt::format("{} timed calls instead of {}", timing.fib_ms.size(), expected_calls);
  }
  for (std::size_t i = 0; i < timing.fib_ms.size(); ++i) {
    if (timing.reported_ms[i] > timing.fib_ms[i] * 1.01 + 0.05) {
      return fmt::format("call {} was reported as {:.4f} ms, but fib's clock saw {:.4f} ms", i,
                         timing.reported_ms[i], timing.fib_ms[i]);
    }
  }
  const double reported = median(timing.reported_ms);
  const double seen = median(timing.fib_ms);
  if (reported < seen * 0.5 - 1.0) {
    return fmt::format("a median of {:.4f} ms was reported, but fib's clock saw {:.4f} ms",
                       reported, seen);
  }
  return std::nullopt;
}

Json output_specs(const std::filesystem::path& expected, const OrderedMap<TensorSpec>& outputs) {
  Json specs = Json::array();
  auto header = read_safetensors_header(expected);
  if (!header) {
    return specs;
  }
  for (const auto& [name, spec] : outputs) {
    const auto entry = header->tensors.find(name);
    if (entry != header->tensors.end()) {
      specs.push_back(Json::array({entry->second.shape, entry->second.dtype}));
    }
  }
  return specs;
}

// The reference on the workload's inputs, in the dataset-reading worker. A diagnostic (the
// reference raised or timed out, its timings disagree, the worker misbehaved) when it gives no
// outputs to compare with.
Expected<ReferenceRun> run_reference(detail::WorkerProcess& worker, const Definition& definition,
                                     const SmokePlan& plan, const EvaluateOptions& options,
                                     const JudgingPlace& judging,
                                     std::vector<Diagnostic>& diagnostics) {
  // The scratch directory exists once the worker runs.
  if (auto problem = worker.start()) {
    diagnostics.push_back(*problem);
    return unexpected(std::move(*problem));
  }
  const std::string directory = judging.job;
  if (auto made = detail::make_job_directory(worker.scratch(), directory); !made) {
    diagnostics.push_back(made.error());
    return unexpected(made.error());
  }
  Json request{{"job", "reference_outputs"},
               {"name", definition.name},
               {"reference", definition.reference},
               {"inputs", names_of(definition.inputs)},
               {"outputs", names_of(definition.outputs)},
               {"plan", to_json(plan)},
               {"directory", (worker.scratch_inside() / directory).string()},
               {"warmup", options.warmup},
               {"iterations", options.iterations}};
  detail::JobResult result = worker.run_job(std::move(request), worker.options().job_timeout);
  if (result.outcome.verdict != ReferenceVerdict::ok) {
    for (auto& d : result.outcome.diagnostics) {
      if (d.code == codes::k_smoke_timeout || d.code == codes::k_worker_crashed) {
        d.message = "the reference: " + d.message;
      }
      if (d.code == codes::k_reference_build_failed || d.code == codes::k_smoke_timeout ||
          d.code == codes::k_worker_crashed) {
        d.code = std::string(codes::k_run_reference);
      }
      diagnostics.push_back(std::move(d));
    }
    return unexpected(make_diagnostic(codes::k_run_reference, "no reference outputs"));
  }
  const std::size_t calls = static_cast<std::size_t>(std::max(options.iterations, 1));
  if (auto disagreement = timing_disagreement(result.timing, calls)) {
    diagnostics.push_back(make_diagnostic(
        codes::k_run_reference,
        "the reference's timings cannot be believed, so nothing was compared: " + *disagreement));
    return unexpected(diagnostics.back());
  }
  ReferenceRun run;
  for (auto [name, into] : {std::pair{"inputs.safetensors", &run.inputs},
                            std::pair{"expected.safetensors", &run.expected}}) {
    auto taken = detail::take_file(worker.scratch(), directory, name, judging.directory / name);
    if (!taken) {
      diagnostics.push_back(taken.error());
      return unexpected(taken.error());
    }
    *into = *taken;
  }
  run.scalars = detail::field(result.reply, "scalars");
  run.latency_ms = median(result.timing.fib_ms);
  if (!run.scalars.is_object()) {
    diagnostics.push_back(make_diagnostic(
        codes::k_worker_protocol, "the reference worker sent scalars that are not an object"));
    return unexpected(diagnostics.back());
  }
  return run;
}

} // namespace

class EvaluationSteps {
public:
  EvaluationSteps(ReferenceRunner::Impl& impl, const Definition& definition,
                  const Solution& solution, const EvaluateOptions& options)
      : m_impl(impl), m_definition(definition), m_solution(solution), m_options(options) {}
  SolutionEvaluation run(const Workload& workload);

private:
  Json by_fib(std::string status, std::string log) const {
    return evaluation_by_fib(m_impl.info(), m_impl.options().device, std::move(status),
                             std::move(log));
  }
  std::optional<Json> build(detail::WorkerProcess& worker, SolutionEvaluation& out);
  SolutionEvaluation judge(detail::WorkerProcess& worker, const ReferenceRun& reference,
                           const JudgingPlace& judging, const detail::JobResult& result);

  ReferenceRunner::Impl& m_impl;
  const Definition& m_definition;
  const Solution& m_solution;
  const EvaluateOptions& m_options;
};

// The build as its own job, once per solution (a failure is remembered): the solution request,
// or nullopt when `out` is already the answer.
std::optional<Json> EvaluationSteps::build(detail::WorkerProcess& worker, SolutionEvaluation& out) {
  const std::string key = m_solution.content_hash();
  if (const auto failed = m_impl.failed_builds.find(key); failed != m_impl.failed_builds.end()) {
    out.evaluation = by_fib("COMPILE_ERROR", failed->second);
    return std::nullopt;
  }
  Json solution_json = solution_request(m_solution);
  Json build_request{
      {"job", "build_solution"},          {"name", m_definition.name}, {"reference", ""},
      {"inputs", Json::array()},          {"outputs", Json::array()},  {"solution", solution_json},
      {"cache", m_options.cache.string()}};
  detail::JobResult built = worker.run_job(std::move(build_request), m_options.build_timeout);
  if (auto log = compile_error_log(built.outcome, built.reply, m_options.build_timeout)) {
    m_impl.failed_builds[key] = *log;
    out.evaluation = by_fib("COMPILE_ERROR", std::move(*log));
    return std::nullopt;
  }
  if (built.outcome.verdict == ReferenceVerdict::unavailable) {
    out.diagnostics = std::move(built.outcome.diagnostics);
    if (!out.diagnostics.empty() && out.diagnostics.front().code == codes::k_worker_protocol) {
      m_impl.failed_builds[key] = "[fib] worker.protocol: " + out.diagnostics.front().message;
      out.evaluation = by_fib("COMPILE_ERROR", m_impl.failed_builds[key]);
    }
    return std::nullopt;
  }
  return solution_json;
}

SolutionEvaluation EvaluationSteps::run(const Workload& workload) {
  SolutionEvaluation out;
  auto plan = plan_workload_run(m_definition, workload, m_options.dataset_root);
  if (!plan) {
    out.diagnostics.push_back(plan.error());
    return out;
  }
  if (const auto failed = m_impl.failed_builds.find(m_solution.content_hash());
      failed != m_impl.failed_builds.end()) {
    out.evaluation = by_fib("COMPILE_ERROR", failed->second);
    return out;
  }
  auto judging = m_impl.judging_place();
  if (!judging) {
    out.diagnostics.push_back(judging.error());
    return out;
  }
  // The reference runs once per workload, and never while solution code runs: its worker (and
  // anything it left running) is stopped first, so it cannot slow the reference's timing.
  const ReferenceRun* reference = m_impl.cached_reference(m_definition.name, workload.uuid);
  if (reference == nullptr) {
    m_impl.retire_solution_worker();
    auto ran = run_reference(m_impl.workload_reference(m_options.dataset_root), m_definition, *plan,
                             m_options, *judging, out.diagnostics);
    if (!ran) {
      if (out.diagnostics.empty()) {
        out.diagnostics.push_back(ran.error());
      }
      return out;
    }
    reference = &m_impl.remember_reference(workload.uuid, std::move(*ran));
  }
  auto worker = m_impl.solution_worker(m_solution.content_hash(), m_options.cache);
  if (!worker) {
    out.diagnostics.push_back(worker.error());
    return out;
  }
  auto solution_json = build(**worker, out);
  if (!solution_json) {
    return out;
  }
  detail::WorkerProcess& solution_worker = **worker;
  const auto handed = [&]() -> Expected<std::filesystem::path> {
    FIB_TRY(detail::make_job_directory(solution_worker.scratch(), judging->job));
    return detail::put_file(reference->inputs, solution_worker.scratch(), judging->job,
                            "inputs.safetensors");
  }();
  if (!handed) {
    out.diagnostics.push_back(handed.error());
    return out;
  }
  Json request{{"job", "solution_outputs"},
               {"name", m_definition.name},
               {"reference", ""},
               {"inputs", names_of(m_definition.inputs)},
               {"outputs", names_of(m_definition.outputs)},
               {"solution", std::move(*solution_json)},
               {"cache", m_options.cache.string()},
               {"directory", (solution_worker.scratch_inside() / judging->job).string()},
               {"scalars", reference->scalars},
               {"output_specs", output_specs(reference->expected, m_definition.outputs)},
               {"warmup", m_options.warmup},
               {"iterations", m_options.iterations}};
  const detail::JobResult result =
      solution_worker.run_job(std::move(request), m_impl.options().job_timeout);
  return judge(solution_worker, *reference, *judging, result);
}

// The evaluation of the solution's job: its end (timeout, crash, protocol), its own report
// (compile or runtime error), then fib's comparison of the outputs and fib's timings.
SolutionEvaluation EvaluationSteps::judge(detail::WorkerProcess& worker,
                                          const ReferenceRun& reference,
                                          const JudgingPlace& judging,
                                          const detail::JobResult& result) {
  SolutionEvaluation out;
  for (const auto& d : result.outcome.diagnostics) {
    if (d.code == codes::k_smoke_timeout) {
      out.evaluation =
          by_fib("TIMEOUT",
                 fmt::format("the solution ran past the {:g} s timeout; its worker was stopped",
                             static_cast<double>(m_impl.options().job_timeout.count()) / 1000.0));
      return out;
    }
    if (d.code == codes::k_worker_crashed) {
      out.evaluation = by_fib("RUNTIME_ERROR", d.message);
      return out;
    }
  }
  const Json verdict = detail::field(result.reply, "result");
  if (result.outcome.verdict != ReferenceVerdict::ok || !verdict.is_object()) {
    out.diagnostics = result.outcome.diagnostics;
    if (out.diagnostics.empty()) {
      out.diagnostics.push_back(make_diagnostic(
          codes::k_worker_protocol, "the solution's worker sent a reply without a result object"));
    }
    // Breaking the protocol is the solution's failure, not a way to leave a workload unjudged.
    if (out.diagnostics.front().code == codes::k_worker_protocol) {
      out.evaluation =
          by_fib("RUNTIME_ERROR", "[fib] worker.protocol: " + out.diagnostics.front().message);
    }
    return out;
  }
  const auto text = [&](const char* key) {
    return detail::clip_text(detail::string_field(verdict, key),
                             detail::k_max_worker_message_bytes);
  };
  if (verdict.contains("compile_error")) {
    m_impl.failed_builds[m_solution.content_hash()] = text("compile_error");
    out.evaluation = by_fib("COMPILE_ERROR", text("compile_error"));
    return out;
  }
  if (verdict.contains("runtime_error")) {
    out.evaluation = by_fib("RUNTIME_ERROR", text("runtime_error"));
    return out;
  }
  const Json kinds = detail::field(verdict, "kinds");
  if (!kinds.is_array() ||
      !std::all_of(kinds.begin(), kinds.end(), [](const Json& k) { return k.is_string(); })) {
    out.diagnostics.push_back(make_diagnostic(
        codes::k_worker_protocol, "the solution's worker sent a result without its output kinds"));
    return out;
  }
  const std::filesystem::path got_copy = judging.directory / (judging.job + "-got.safetensors");
  const RemovedAtExit removed{got_copy};
  auto got = detail::take_file(worker.scratch(), judging.job, "got.safetensors", got_copy);
  if (!got) {
    out.evaluation =
        by_fib("RUNTIME_ERROR", "[fib] the solution's outputs: " + got.error().message);
    return out;
  }
  const OutputComparison compared =
      compare_outputs(reference.expected, names_of_vector(m_definition.outputs), *got,
                      kinds.get<std::vector<std::string>>(), m_options.atol, m_options.rtol,
                      m_options.tolerance_table);
  if (compared.unreadable) {
    out.evaluation = by_fib("RUNTIME_ERROR", "[fib] " + *compared.unreadable);
    return out;
  }
  const Json correctness{{"max_relative_error", compared.max_relative_error},
                         {"max_absolute_error", compared.max_absolute_error},
                         {"extra", nullptr}};
  if (!compared.status.empty()) {
    out.evaluation = by_fib(compared.status, compared.log);
    if (compared.status == "INCORRECT_NUMERICAL") {
      (*out.evaluation)["correctness"] = correctness;
    }
    return out;
  }
  const std::size_t calls = static_cast<std::size_t>(std::max(m_options.iterations, 1));
  if (auto disagreement = timing_disagreement(result.timing, calls)) {
    out.evaluation = by_fib("RUNTIME_ERROR",
                            "[fib] the solution's timings cannot be believed: " + *disagreement);
    return out;
  }
  const double latency = median(result.timing.fib_ms);
  out.evaluation = by_fib("PASSED", text("log"));
  (*out.evaluation)["correctness"] = correctness;
  (*out.evaluation)["performance"] =
      Json{{"latency_ms", latency},
           {"reference_latency_ms", reference.latency_ms},
           {"speedup_factor", latency > 0 ? reference.latency_ms / latency : 0.0}};
  return out;
}

SolutionEvaluation ReferenceRunner::evaluate(const Definition& definition, const Solution& solution,
                                             const Workload& workload,
                                             const EvaluateOptions& options) {
  return EvaluationSteps(*m_impl, definition, solution, options).run(workload);
}

ReferenceRunner::BuildResult ReferenceRunner::build_solution(const Solution& solution,
                                                             const std::filesystem::path& cache) {
  BuildResult result;
  auto worker = m_impl->solution_worker(solution.content_hash(), cache);
  if (!worker) {
    result.diagnostics.push_back(worker.error());
    return result;
  }
  Json request{{"job", "build_solution"},  {"name", solution.definition},
               {"reference", ""},          {"inputs", Json::array()},
               {"outputs", Json::array()}, {"solution", solution_request(solution)},
               {"cache", cache.string()}};
  detail::JobResult built = (*worker)->run_job(std::move(request), std::chrono::minutes(15));
  result.verdict = built.outcome.verdict;
  result.diagnostics = std::move(built.outcome.diagnostics);
  if (built.outcome.verdict == ReferenceVerdict::failed) {
    result.log = detail::clip_text(detail::string_field(built.reply, "log"),
                                   detail::k_max_worker_message_bytes);
    if (result.log.empty() && !result.diagnostics.empty()) {
      result.log = result.diagnostics.front().message;
    }
  }
  return result;
}

const std::optional<WorkerInfo>& ReferenceRunner::worker_info() const {
  return m_impl->info();
}

std::size_t ReferenceRunner::worker_starts() const {
  return m_impl->starts();
}

std::vector<Diagnostic> run_reference_checks(const Definition& definition, ReferenceChecks checks,
                                             ReferenceRunner& runner, std::string_view init) {
  std::vector<Diagnostic> out;
  if (checks == ReferenceChecks::none) {
    return out;
  }
  // A smoke job builds the reference first and reports both: one trip to the worker.
  return checks == ReferenceChecks::build_and_smoke ? runner.smoke_run(definition, init).diagnostics
                                                    : runner.check_build(definition).diagnostics;
}

std::filesystem::path default_build_cache() {
  if (const char* configured = std::getenv("FIB_CACHE_PATH"); configured && *configured) {
    return configured;
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr ? home : "/tmp") / ".cache" / "fib";
}

} // namespace fib
