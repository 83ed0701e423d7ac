// ReferenceRunner's evaluation of solutions (include/fib/exec/worker_client.hpp): the reference
// and the solution in separate sandboxed workers, their outputs compared by fib, fib's clock.

#include "evaluation_steps.hpp"
#include "gpu_state.hpp"
#include "timed_calls.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/io/safetensors.hpp>
#include <fib/util/atomic_file.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace fib {

using detail::has_random_input;
using detail::median;
using detail::names_of;
using detail::names_of_vector;
using detail::ReferenceJob;
using detail::RemovedAtExit;
using detail::run_reference;
using detail::timing_disagreement;

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

// The sampling evaluator holds every row's expected distribution as doubles: a workload whose
// distribution input has more than k_max_compared_elements values is a `run.evaluator-unfit`
// diagnostic, before anything runs. nullopt otherwise (and for the other evaluators).
std::optional<Diagnostic> too_large_to_judge(const Definition& definition,
                                             const EvaluateOptions& options, const SmokePlan& plan,
                                             const Workload& workload) {
  if (options.evaluator != Evaluator::sampling) {
    return std::nullopt;
  }
  const auto layout = sampling_layout(definition);
  if (!layout) {
    return std::nullopt; // EvaluationSteps::run reports it
  }
  for (const PlannedInput& input : plan.inputs) {
    std::uint64_t values = 1;
    for (const std::int64_t d : input.shape) {
      values *= static_cast<std::uint64_t>(std::max<std::int64_t>(d, 0));
    }
    if (input.name == layout->distribution && values > k_max_compared_elements) {
      return make_diagnostic(
          codes::k_run_evaluator_unfit,
          fmt::format("the sampling evaluator cannot judge workload {}: its '{}' has {} values, "
                      "more than the {} fib holds to judge samples",
                      workload.uuid, input.name, values, k_max_compared_elements));
    }
  }
  return std::nullopt;
}

} // namespace

// The build (and the load into the solution's worker) as jobs of their own, once per solution
// (a failure is remembered): the solution request, or nullopt when `out` is already the answer.
std::optional<Json> EvaluationSteps::build(SolutionEvaluation& out) {
  const std::string key = m_solution.content_hash();
  if (const auto failed = m_impl.failed_builds.find(key); failed != m_impl.failed_builds.end()) {
    out.evaluation = by_fib("COMPILE_ERROR", failed->second);
    if (const auto file = m_impl.failed_build_logs.find(key);
        file != m_impl.failed_build_logs.end()) {
      out.log_file = file->second;
    }
    return std::nullopt;
  }
  Json solution_json = solution_request(m_solution);
  detail::JobResult built =
      m_impl.ready_solution(key, solution_json, m_options.cache, m_options.build_timeout);
  if (auto log = compile_error_log(built.outcome, built.reply, m_options.build_timeout)) {
    m_impl.failed_builds[key] = *log;
    if (auto written = write_file_atomically(compile_log_path(m_options.cache, key), *log,
                                             Overwrite::allowed)) {
      m_impl.failed_build_logs[key] = *written;
      out.log_file = *written;
    }
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
  if (m_options.evaluator == Evaluator::sampling) {
    auto layout = sampling_layout(m_definition);
    if (!layout) {
      out.diagnostics.push_back(layout.error());
      return out;
    }
    m_sampling = std::move(*layout);
  }
  auto plan = plan_workload_run(m_definition, workload, m_options.dataset_root);
  if (!plan) {
    out.diagnostics.push_back(plan.error());
    return out;
  }
  if (auto unfit = too_large_to_judge(m_definition, m_options, *plan, workload)) {
    out.diagnostics.push_back(std::move(*unfit));
    return out;
  }
  if (const auto failed = m_impl.failed_builds.find(m_solution.content_hash());
      failed != m_impl.failed_builds.end()) {
    out.evaluation = by_fib("COMPILE_ERROR", failed->second);
    if (const auto file = m_impl.failed_build_logs.find(failed->first);
        file != m_impl.failed_build_logs.end()) {
      out.log_file = file->second;
    }
    return out;
  }
  auto judging = m_impl.judging_place();
  if (!judging) {
    out.diagnostics.push_back(judging.error());
    return out;
  }
  // The reference runs once per workload, and never while solution code runs: a solution's
  // worker (and anything it left running) is stopped first, so it cannot slow the reference.
  const CachedReference* cached = m_impl.cached_reference(m_definition.name, workload.uuid);
  if (cached == nullptr) {
    m_impl.retire_solution_worker();
    cached = &m_impl.remember_reference(
        workload.uuid, reference_on(m_impl, m_definition, *plan, m_options, *judging));
  }
  if (!cached->run) {
    out.diagnostics = cached->diagnostics;
    return out;
  }
  auto solution_json = build(out);
  if (!solution_json) {
    return out;
  }
  detail::WorkerProcess& solution_worker =
      m_impl.solution_worker(m_solution.content_hash(), m_options.cache);
  const ReferenceRun* perturbed = cached->perturbed ? &*cached->perturbed : nullptr;
  detail::JobResult result;
  SolutionEvaluation judged =
      run_trial(solution_worker, *cached->run, *judging, *solution_json, perturbed, result);
  if (!judged.evaluation || judged.evaluation->value("status", "") != "PASSED") {
    if (judged.evaluation && m_options.trials > 1) {
      (*judged.evaluation)["log"] = fmt::format("[fib] trial 1 of {}: {}", m_options.trials,
                                                judged.evaluation->value("log", ""));
    }
    return judged;
  }
  if (perturbed != nullptr) {
    if (auto failed = check_same_addresses(solution_worker, *perturbed, *judging, result)) {
      return std::move(*failed);
    }
    if (auto failed = check_perturbed(solution_worker, *perturbed, *solution_json)) {
      return std::move(*failed);
    }
  }
  if (auto failed = check_distribution(solution_worker, *cached->run, *solution_json, judged)) {
    return std::move(*failed);
  }
  return later_trials(solution_worker, *cached, *solution_json, std::move(judged));
}

SolutionEvaluation
EvaluationSteps::run_trial(detail::WorkerProcess& worker, const ReferenceRun& reference,
                           const JudgingPlace& judging, const Json& solution_json,
                           const ReferenceRun* perturbed, detail::JobResult& result) {
  SolutionEvaluation out;
  const auto handed = [&]() -> Expected<std::filesystem::path> {
    FIB_TRY(detail::make_job_directory(worker.scratch(), judging.job));
    if (perturbed != nullptr) {
      FIB_TRY(detail::put_file(perturbed->inputs, worker.scratch(), judging.job,
                               "perturbed.safetensors"));
    }
    return detail::put_file(reference.inputs, worker.scratch(), judging.job, "inputs.safetensors");
  }();
  if (!handed) {
    out.diagnostics.push_back(handed.error());
    return out;
  }
  Json request = outputs_request(worker, reference, judging, solution_json, m_options.warmup,
                                 m_options.iterations);
  request["perturbed"] = perturbed != nullptr;
  result = worker.run_job(std::move(request), m_impl.options().job_timeout);
  return judge(worker, reference, judging, result,
               static_cast<std::size_t>(std::max(m_options.iterations, 1)));
}

namespace {

// Two trials' performance.extra as one: the calls counted together, the extremes over both, the
// quartiles summed (later_trials divides them by the trials, as it does the latencies), the
// higher floor.
Json merged_extra(const Json& so_far, const Json& next) {
  Json out = so_far;
  out["timed_calls"] = so_far.value("timed_calls", 0) + next.value("timed_calls", 0);
  out["latency_min_ms"] =
      std::min(so_far.value("latency_min_ms", 0.0), next.value("latency_min_ms", 0.0));
  out["latency_max_ms"] =
      std::max(so_far.value("latency_max_ms", 0.0), next.value("latency_max_ms", 0.0));
  for (const char* key :
       {"latency_q1_ms", "latency_q3_ms", "kernel_latency_ms", "setup_latency_ms"}) {
    if (next.contains(key)) {
      out[key] = so_far.value(key, 0.0) + next.value(key, 0.0);
    }
  }
  if (next.contains("plausibility_floor_ms")) {
    out["plausibility_floor_ms"] = std::max(so_far.value("plausibility_floor_ms", 0.0),
                                            next.value("plausibility_floor_ms", 0.0));
  }
  return out;
}

} // namespace

SolutionEvaluation EvaluationSteps::later_trials(detail::WorkerProcess& worker,
                                                 const CachedReference& cached,
                                                 const Json& solution_json,
                                                 SolutionEvaluation first) {
  const int trials = std::max(m_options.trials, 1);
  if (trials == 1) {
    return first;
  }
  Json& performance = (*first.evaluation)["performance"];
  Json& correctness = (*first.evaluation)["correctness"];
  double latency = performance.value("latency_ms", 0.0);
  double reference_latency = performance.value("reference_latency_ms", 0.0);
  Json extra = performance.value("extra", Json::object());
  for (int trial = 1; trial < trials; ++trial) {
    const std::size_t index = static_cast<std::size_t>(trial) - 1;
    const ReferenceRun& reference =
        index < cached.later_trials.size() ? cached.later_trials[index] : *cached.run;
    auto judging = m_impl.judging_place();
    if (!judging) {
      SolutionEvaluation out;
      out.diagnostics.push_back(judging.error());
      return out;
    }
    detail::JobResult result;
    SolutionEvaluation next =
        run_trial(worker, reference, *judging, solution_json, nullptr, result);
    if (!next.evaluation || next.evaluation->value("status", "") != "PASSED") {
      if (next.evaluation) {
        (*next.evaluation)["log"] =
            fmt::format("[fib] trial {} of {} (inputs drawn with seed {}): {}", trial + 1, trials,
                        trial, next.evaluation->value("log", ""));
      }
      return next;
    }
    if (auto failed = check_distribution(worker, reference, solution_json, next)) {
      if (failed->evaluation) {
        (*failed->evaluation)["log"] =
            fmt::format("[fib] trial {} of {} (inputs drawn with seed {}): {}", trial + 1, trials,
                        trial, failed->evaluation->value("log", ""));
      }
      return std::move(*failed);
    }
    const Json& got = (*next.evaluation)["performance"];
    latency += got.value("latency_ms", 0.0);
    reference_latency += got.value("reference_latency_ms", 0.0);
    extra = merged_extra(extra, got.value("extra", Json::object()));
    const Json& errors = (*next.evaluation)["correctness"];
    for (const char* key : {"max_relative_error", "max_absolute_error"}) {
      correctness[key] = std::max(correctness.value(key, 0.0), errors.value(key, 0.0));
    }
    if (errors["extra"].is_object() && errors["extra"].contains("tvd_excess")) {
      if (!correctness["extra"].is_object() || errors["extra"].value("tvd_excess", 0.0) >
                                                   correctness["extra"].value("tvd_excess", 0.0)) {
        correctness["extra"] = errors["extra"]; // the worst trial's distances
      }
    } else if (errors["extra"].is_object() && correctness["extra"].is_object()) {
      correctness["extra"]["matched_ratio"] =
          std::min(correctness["extra"].value("matched_ratio", 1.0),
                   errors["extra"].value("matched_ratio", 1.0));
    }
  }
  latency /= trials;
  reference_latency /= trials;
  for (const char* key :
       {"latency_q1_ms", "latency_q3_ms", "kernel_latency_ms", "setup_latency_ms"}) {
    if (extra.contains(key)) {
      extra[key] = extra.value(key, 0.0) / trials;
    }
  }
  const double floor_ms = extra.value("plausibility_floor_ms", 0.0);
  extra.erase("implausible");
  if (latency < floor_ms) {
    extra["implausible"] = true;
  }
  performance = Json{{"latency_ms", latency},
                     {"reference_latency_ms", reference_latency},
                     {"speedup_factor", latency > 0 ? reference_latency / latency : 0.0},
                     {"extra", std::move(extra)}};
  return first;
}

Json EvaluationSteps::by_fib(std::string status, std::string log) const {
  return evaluation_by_fib(m_impl.info(), m_impl.options().device, std::move(status),
                           std::move(log));
}

Json EvaluationSteps::correctness_of(const OutputComparison& compared) const {
  Json extra = nullptr;
  if (m_options.evaluator == Evaluator::low_bit || m_options.required_matched_ratio) {
    extra = Json{{"matched_ratio", compared.matched_ratio}};
  }
  return Json{{"max_relative_error", compared.max_relative_error},
              {"max_absolute_error", compared.max_absolute_error},
              {"extra", std::move(extra)}};
}

namespace {

// The seeds of a reference run's timed calls, for the solution's calls on the same inputs.
Json seeds_json(const std::vector<std::optional<std::uint64_t>>& seeds) {
  Json out = Json::array();
  for (const auto& seed : seeds) {
    out.push_back(seed ? Json(*seed) : Json());
  }
  return out;
}

} // namespace

Json EvaluationSteps::outputs_request(detail::WorkerProcess& worker, const ReferenceRun& reference,
                                      const JudgingPlace& judging, Json solution_json, int warmup,
                                      int iterations) const {
  return Json{{"job", "solution_outputs"},
              {"name", m_definition.name},
              {"reference", ""},
              {"inputs", names_of(m_definition.inputs)},
              {"outputs", names_of(m_definition.outputs)},
              {"solution", std::move(solution_json)},
              {"cache", m_options.cache.string()},
              {"directory", (worker.scratch_inside() / judging.job).string()},
              {"scalars", reference.scalars},
              {"output_specs", output_specs(reference.expected, m_definition.outputs)},
              {"warmup", warmup},
              {"iterations", iterations},
              {"cold_cache", m_options.cold_cache == ColdCache::yes},
              {"fresh_inputs", reference.fresh_inputs},
              {"timed_seeds", seeds_json(reference.seeds)},
              {"stop_at_ci", m_options.stop_at_ci ? Json(*m_options.stop_at_ci) : Json()}};
}

// The evaluation of a solution job that did not give results: its end (timeout, crash,
// protocol), its own report (compile or runtime error). nullopt when it gave a result object.
std::optional<SolutionEvaluation> EvaluationSteps::failed_job(const detail::JobResult& result) {
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
  return std::nullopt;
}

// The evaluation of the solution's outputs job: failed_job, then fib's comparison of the
// outputs (compare_call) and fib's timings.
SolutionEvaluation EvaluationSteps::judge(detail::WorkerProcess& worker,
                                          const ReferenceRun& reference,
                                          const JudgingPlace& judging,
                                          const detail::JobResult& result, std::size_t calls) {
  if (worker.scratch_full()) {
    // Whatever the job said: the code wrote all the sandbox lets it. Its worker (and with it
    // everything it wrote) goes; the next job starts a new one.
    worker.stop();
    SolutionEvaluation out;
    out.evaluation =
        by_fib("RUNTIME_ERROR",
               fmt::format("[fib] the solution filled its scratch directory to the limit of {} "
                           "(--scratch-limit); its worker was stopped",
                           detail::human_bytes(m_impl.options().scratch_bytes)));
    return out;
  }
  if (auto failed = failed_job(result)) {
    return std::move(*failed);
  }
  SolutionEvaluation out;
  const Json verdict = detail::field(result.reply, "result");
  const auto text = [&](const char* key) {
    return detail::clip_text(detail::string_field(verdict, key),
                             detail::k_max_worker_message_bytes);
  };
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
  const OutputComparison compared = compare_call(reference, reference.inputs, *got, kinds);
  if (compared.unreadable) {
    out.evaluation = by_fib("RUNTIME_ERROR", "[fib] " + *compared.unreadable);
    return out;
  }
  const Json correctness = correctness_of(compared);
  if (!compared.status.empty()) {
    out.evaluation = by_fib(compared.status, compared.log);
    if (compared.status == "INCORRECT_NUMERICAL" && !m_sampling) {
      (*out.evaluation)["correctness"] = correctness;
    }
    return out;
  }
  if (auto disagreement = timing_disagreement(result.timing, calls)) {
    out.evaluation = by_fib("RUNTIME_ERROR",
                            "[fib] the solution's timings cannot be believed: " + *disagreement);
    return out;
  }
  std::vector<std::uint64_t> output_bytes;
  if (auto timed_problem =
          check_timed_calls(worker, reference, judging, result, kinds, output_bytes)) {
    return std::move(*timed_problem);
  }
  const detail::CallLatencies latencies = detail::call_latencies(
      result.timing, output_bytes, detail::commitment_cost_of(worker.info()), &reference.prep_ms);
  const std::array<double, 5> spread = detail::quartiles(latencies.ms);
  const double latency = spread[2];
  out.timing_overhead_ms = latencies.overhead_ms;
  std::string log = text("log");
  const double floor_ms = plausibility_check(
      worker, reference, output_bytes.empty() ? 0 : output_bytes[0], latency, out, log);
  if (latencies.charged_calls > 0) {
    // Work before fib's "go" on inputs already known (the call's seed arrives with its
    // preparation) is timed all the same.
    const std::string note = fmt::format(
        "[fib] the solution's worker took {:.3f} ms longer than the reference's to prepare {} of "
        "its {} timed calls (the same inputs); that time was added to those calls' latencies",
        latencies.prep_excess_ms, latencies.charged_calls, latencies.ms.size());
    log = log.empty() ? note : log + "\n" + note;
  }
  out.evaluation = by_fib("PASSED", log);
  if (m_impl.options().device == SmokeDevice::cuda) {
    // Read by fib right after the timed calls: the clocks they ran at.
    const unsigned index = detail::nvml_index_of(
        static_cast<unsigned>(m_impl.options().cuda_device.value_or(0)),
        std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "");
    if (auto state = detail::read_gpu_state(index)) {
      (*out.evaluation)["environment"]["device_state"] = detail::to_json(*state);
    }
  }
  (*out.evaluation)["correctness"] = correctness;
  (*out.evaluation)["performance"] =
      Json{{"latency_ms", latency},
           {"reference_latency_ms", reference.latency_ms},
           {"speedup_factor", latency > 0 ? reference.latency_ms / latency : 0.0},
           {"extra", detail::performance_extra(spread, latencies.ms.size(), floor_ms)}};
  detail::add_split_timing((*out.evaluation)["performance"]["extra"], latencies.ms,
                           result.timing.setup_ms);
  return out;
}

CachedReference EvaluationSteps::reference_on(ReferenceRunner::Impl& impl,
                                              const Definition& definition, const SmokePlan& plan,
                                              const EvaluateOptions& options,
                                              const JudgingPlace& judging) {
  CachedReference cached;
  detail::WorkerProcess& worker = impl.workload_reference(options.dataset_root);
  auto ran = run_reference(worker, definition, plan, options, judging, cached.diagnostics);
  if (ran) {
    cached.run = std::move(*ran);
  } else if (cached.diagnostics.empty()) {
    cached.diagnostics.push_back(ran.error());
  }
  // Trials 2..n on inputs drawn with seeds 1..n-1, timed as the first. A failure there is the
  // reference's: no evaluation on this workload.
  if (cached.run && has_random_input(plan)) {
    for (int trial = 1; trial < options.trials; ++trial) {
      auto place = impl.judging_place();
      if (!place) {
        cached.diagnostics.push_back(place.error());
        cached.run.reset();
        break;
      }
      auto later = run_reference(worker, definition, plan, options, *place, cached.diagnostics,
                                 ReferenceJob{static_cast<std::uint64_t>(trial)});
      if (!later) {
        for (auto& d : cached.diagnostics) {
          d.message = fmt::format("trial {} of {} (seed {}): {}", trial + 1, options.trials, trial,
                                  d.message);
        }
        if (cached.diagnostics.empty()) {
          cached.diagnostics.push_back(later.error());
        }
        cached.run.reset();
        break;
      }
      cached.later_trials.push_back(std::move(*later));
    }
  }
  // The same workload with other random inputs, for check_perturbed: outputs only (one untimed
  // call and one timed call, as the protocol has it). A failure there only skips the check.
  if (cached.run && has_random_input(plan)) {
    if (auto place = impl.judging_place()) {
      EvaluateOptions once = options;
      once.warmup = 0;
      once.iterations = 1;
      std::vector<Diagnostic> ignored;
      if (auto perturbed =
              run_reference(worker, definition, plan, once, *place, ignored,
                            ReferenceJob{k_perturbed_seed, detail::VaryTimedInputs::no})) {
        cached.perturbed = std::move(*perturbed);
      }
    }
  }
  return cached;
}

void ReferenceRunner::prepare_references(const Definition& definition,
                                         const std::vector<const Workload*>& workloads,
                                         const EvaluateOptions& options) {
  m_impl->retire_solution_worker();
  for (const Workload* workload : workloads) {
    if (m_impl->reference_bytes() > detail::k_reference_cache_bytes) {
      return; // the rest runs when evaluate() needs it
    }
    if (m_impl->cached_reference(definition.name, workload->uuid) != nullptr) {
      continue;
    }
    auto plan = plan_workload_run(definition, *workload, options.dataset_root);
    if (!plan || too_large_to_judge(definition, options, *plan, *workload)) {
      continue; // evaluate() reports it
    }
    auto judging = m_impl->judging_place();
    if (!judging) {
      continue;
    }
    m_impl->remember_reference(workload->uuid, EvaluationSteps::reference_on(
                                                   *m_impl, definition, *plan, options, *judging));
  }
}

SolutionEvaluation ReferenceRunner::evaluate(const Definition& definition, const Solution& solution,
                                             const Workload& workload,
                                             const EvaluateOptions& options) {
  return EvaluationSteps(*m_impl, definition, solution, options).run(workload);
}

ReferenceRunner::BuildResult ReferenceRunner::build_solution(const Solution& solution,
                                                             const std::filesystem::path& cache) {
  BuildResult result;
  detail::JobResult built = m_impl->ready_solution(
      solution.content_hash(), solution_request(solution), cache, std::chrono::minutes(15));
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

std::filesystem::path compile_log_path(const std::filesystem::path& cache,
                                       const std::string& content_hash) {
  return cache / "logs" / (content_hash + ".compile.log");
}

std::string first_error_line(std::string_view log) {
  std::string_view last;
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    end = end == std::string_view::npos ? log.size() : end;
    std::string_view line = log.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    std::string lower(line);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("error:") != std::string::npos) {
      return std::string(line);
    }
    if (line.find_first_not_of(" \t") != std::string_view::npos) {
      last = line;
    }
    start = end + 1;
  }
  return std::string(last);
}

} // namespace fib
