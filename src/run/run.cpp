#include "fib/run/run.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/trace_set.hpp>
#include <fib/run/red_flags.hpp>
#include <fib/run/trace_append.hpp>
#include <fib/util/path_safety.hpp>
#include <fib/util/sha256.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

namespace fib {
namespace {

constexpr std::size_t k_max_shards = 10000;
constexpr std::size_t k_max_devices = 64;

bool selected(const std::vector<std::string>& wanted, const std::string& name) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), name) != wanted.end();
}

// Names asked for that the dataset lacks.
void report_unknown_selections(const RunOptions& options, const TraceSet& set, RunResult& result) {
  for (const auto& wanted : options.definitions) {
    if (set.find_definition(wanted) == nullptr) {
      result.diagnostics.push_back(make_diagnostic(codes::k_score_unknown_definition,
                                                   fmt::format("unknown definition '{}'", wanted)));
    }
  }
  for (const auto& wanted : options.solutions) {
    if (set.find_solution(wanted) == nullptr) {
      result.diagnostics.push_back(
          make_diagnostic(codes::k_usage, fmt::format("unknown solution '{}'", wanted)));
    }
  }
}

Diagnostic warning(std::string_view code, std::string message) {
  Diagnostic d = make_diagnostic(code, std::move(message));
  d.severity = Severity::warning;
  return d;
}

// The settings that make latencies meaningless, each said once however many definitions have
// them: the flag when the command line gave it, else the settings file.
void warn_about_settings(const RunOptions& options, const EvaluateOptions& evaluate,
                         std::set<std::string>& said, RunResult& result) {
  const auto warn = [&](std::string message) {
    if (said.insert(message).second) {
      result.diagnostics.push_back(warning(codes::k_run_settings, std::move(message)));
    }
  };
  const auto origin = [&](const std::optional<int>& flag, std::string_view name) {
    return flag ? fmt::format("--{}", name)
                : fmt::format("{} (settings file {})", name, options.config.file.string());
  };
  if (evaluate.warmup == 0) {
    warn(fmt::format(
        "{} 0: the timed calls include one-time costs (first-call compilation, cold caches, "
        "allocations), so the latencies and speedups are not steady-state figures",
        origin(options.command_line.warmup, "warmup")));
  }
  if (evaluate.iterations == 1) {
    warn(fmt::format("{} 1: each latency is a single timed call, so one scheduling hiccup decides "
                     "it; use 10 or more for a median",
                     origin(options.command_line.iterations, "iterations")));
  }
}

// Definitions the settings file names that the dataset does not have: their settings apply to
// nothing, which is most often a typo.
void warn_about_unknown_settings(const RunOptions& options, const TraceSet& set,
                                 RunResult& result) {
  for (const auto& [name, layer] : options.config.definitions) {
    if (set.find_definition(name) == nullptr) {
      Diagnostic d = warning(
          codes::k_run_settings,
          fmt::format("the settings file has definition_config for '{}', which the dataset does "
                      "not have: those settings apply to nothing",
                      name));
      d.file = options.config.file;
      d.pointer = pointer_append("/definition_config", name);
      result.diagnostics.push_back(std::move(d));
    }
  }
}

// The resolved settings of one definition's evaluations.
struct DefinitionSettings {
  EvaluateOptions evaluate;
  Json settings;
  std::string settings_text; // settings_identity(settings)
};

// One (definition, solution) pair of the plan, with the workloads it still has to run on.
struct PlannedPair {
  const Definition* definition = nullptr;
  const Solution* solution = nullptr;
  std::vector<const Trace*> workloads;
  std::shared_ptr<const DefinitionSettings> settings;
};

// Every evaluation of the run, in order, and the counts of those left out.
struct Plan {
  std::vector<PlannedPair> pairs;
  RunPlanCounts counts;
};

// The identities the dataset already holds with these settings (for --resume).
std::set<TraceIdentity> traced_identities(const TraceSet& set, const std::string& definition) {
  std::set<TraceIdentity> out;
  const auto traces = set.traces.find(definition);
  if (traces == set.traces.end()) {
    return out;
  }
  for (const Trace& trace : traces->second) {
    if (auto identity = trace_identity(trace)) {
      out.insert(std::move(*identity));
    }
  }
  return out;
}

Plan plan_run(const RunOptions& options, const EvaluateOptions& base, const TraceSet& set,
              RunResult& result) {
  Plan plan;
  for (const auto& [name, definition] : set.definitions) {
    if (!selected(options.definitions, name)) {
      continue;
    }
    std::vector<const Solution*> chosen;
    std::size_t elsewhere = 0;
    for (const Solution* solution : set.solutions_of(name)) {
      if (!selected(options.solutions, solution->name)) {
        continue;
      }
      if (shard_of(name, solution->name, options.shard.count) != options.shard.index) {
        ++elsewhere;
        continue;
      }
      chosen.push_back(solution);
    }
    const auto workloads = set.workloads.find(name);
    const std::size_t workload_count =
        workloads == set.workloads.end() ? 0 : workloads->second.size();
    plan.counts.other_shards += elsewhere * workload_count;
    if (chosen.empty()) {
      continue;
    }
    if (workload_count == 0) {
      result.diagnostics.push_back(warning(
          codes::k_run_inputs,
          fmt::format("definition '{}' has solutions but no workloads to run them on", name)));
      continue;
    }
    const std::set<TraceIdentity> done =
        options.resume == Resume::yes ? traced_identities(set, name) : std::set<TraceIdentity>{};
    auto settings = std::make_shared<DefinitionSettings>();
    settings->evaluate = evaluation_for(base, options.config, options.command_line, definition);
    settings->settings = run_settings(settings->evaluate, options.device);
    settings->settings_text = settings_identity(settings->settings);
    for (const Solution* solution : chosen) {
      PlannedPair pair{&definition, solution, {}, settings};
      for (const Trace& workload : workloads->second) {
        if (done.contains(TraceIdentity{name, solution->name, workload.workload.uuid,
                                        settings->settings_text})) {
          ++plan.counts.resumed;
          continue;
        }
        pair.workloads.push_back(&workload);
      }
      plan.counts.to_run += pair.workloads.size();
      if (!pair.workloads.empty()) {
        plan.pairs.push_back(std::move(pair));
      }
    }
  }
  return plan;
}

bool compiled(Language language) {
  return language == Language::cpp || language == Language::cuda;
}

// Where the pair's traces go, or why they cannot be written (a diagnostic, once per pair).
std::optional<Diagnostic> unsafe_trace_path(const Definition& definition,
                                            const Solution& solution) {
  const auto author_problem = unsafe_segment_reason(solution.author);
  const auto op_problem = unsafe_segment_reason(definition.op_type);
  if (author_problem.empty() && op_problem.empty()) {
    return std::nullopt;
  }
  return make_diagnostic(
      codes::k_stage_unsafe_name,
      fmt::format("traces of {} not written: author or op_type cannot be a path segment ({})",
                  solution.name, author_problem.empty() ? op_problem : author_problem));
}

enum class KeepGoing { yes, no };

// The run's state while it evaluates the plan.
// With several runners (--devices) each evaluates whole definitions in its own thread, and
// `lock` guards the rest of the state, the observer and the trace writes.
struct Execution {
  Execution(const RunOptions& run_options, const RunObserver& run_observer, RunResult& run_result)
      : options(run_options), observer(run_observer), result(run_result) {}

  const RunOptions& options;
  const RunObserver& observer;
  RunResult& result;
  std::size_t number = 0;
  // Diagnostics already given, by definition, code and text: where result.diagnostics has the
  // first, and how many more there were.
  std::map<std::string, std::pair<std::size_t, std::size_t>> given;
  // PASSED evaluations whose latency is below twice the timing overhead of a call: how many and
  // the first ("DEF / SOL / workload UUID").
  std::size_t overhead_bound = 0;
  std::string first_overhead_bound;
  std::mutex lock;
  std::atomic<bool> stopped{false}; // a runner met a problem that ends the run
};

// Notes an evaluation whose latency mostly measures the round trip between fib and the worker.
void note_timing_overhead(Execution& run, const RunEvaluation& evaluation,
                          std::optional<double> overhead_ms) {
  const Json& record = evaluation.trace.at("evaluation");
  const auto found = record.find("performance");
  if (!overhead_ms || found == record.end() || !found->is_object()) {
    return;
  }
  const Json& performance = *found;
  if (performance.value("latency_ms", 0.0) >= 2.0 * *overhead_ms) {
    return;
  }
  if (run.overhead_bound++ == 0) {
    run.first_overhead_bound = fmt::format("{} / {} / workload {}", evaluation.definition,
                                           evaluation.solution, evaluation.workload_uuid);
  }
}

// One warning for the evaluations note_timing_overhead found.
void warn_about_timing_overhead(Execution& run) {
  if (run.overhead_bound == 0) {
    return;
  }
  run.result.diagnostics.push_back(warning(
      codes::k_run_settings,
      fmt::format("{} PASSED evaluation{} measured latencies below twice the timing overhead of a "
                  "call (the round trip between fib and the worker, which every latency "
                  "includes), so their speedups mostly measure that overhead; larger workloads "
                  "time the kernel (first: {})",
                  run.overhead_bound, run.overhead_bound == 1 ? "" : "s",
                  run.first_overhead_bound)));
}

// Adds an evaluation's diagnostic, or counts it when the same one (code and text) was given for
// this definition already: a reference that cannot run fails alike for every solution and often
// on every workload. The first one says where: "DEF / workload UUID: …", with the solution too
// when the problem is the solution's own (not the inputs' or the reference's).
void add_once(Execution& run, const Definition& definition, const Solution& solution,
              const std::string& uuid, Diagnostic d) {
  const std::string key = definition.name + '\n' + d.code + '\n' + d.message;
  const auto [it, added] = run.given.try_emplace(key, run.result.diagnostics.size(), 0);
  if (!added) {
    ++it->second.second;
    return;
  }
  const bool solution_free = d.code == codes::k_run_reference || d.code == codes::k_run_inputs;
  d.message = solution_free ? fmt::format("{} / workload {}: {}", definition.name, uuid, d.message)
                            : fmt::format("{} / {} / workload {}: {}", definition.name,
                                          solution.name, uuid, d.message);
  run.result.diagnostics.push_back(std::move(d));
}

// Says how often each deduplicated diagnostic repeated.
void note_repeats(Execution& run) {
  for (const auto& [key, place] : run.given) {
    if (place.second > 0) {
      run.result.diagnostics[place.first].message += fmt::format(
          " (the same for {} more evaluation{})", place.second, place.second == 1 ? "" : "s");
    }
  }
}

// Writes one evaluation's trace line; KeepGoing::no when it could not be written.
KeepGoing write_trace(Execution& run, const PlannedPair& pair, const std::string& line,
                      const std::string& uuid, const std::filesystem::path& trace_file) {
  const TraceIdentity identity{pair.definition->name, pair.solution->name, uuid,
                               pair.settings->settings_text};
  auto written = record_trace_line(run.options.dataset, trace_file, line, identity);
  if (!written) {
    run.result.diagnostics.push_back(written.error());
    return KeepGoing::no;
  }
  run.result.replaced += *written;
  if (std::find(run.result.trace_files.begin(), run.result.trace_files.end(), trace_file) ==
      run.result.trace_files.end()) {
    run.result.trace_files.push_back(trace_file);
  }
  return KeepGoing::yes;
}

// The pair's evaluations on `runner`, each written as soon as it is made. Everything but the
// evaluation itself happens under run.lock.
KeepGoing run_pair(Execution& run, ReferenceRunner& runner, const PlannedPair& pair) {
  const Definition& definition = *pair.definition;
  const Solution& solution = *pair.solution;
  const std::filesystem::path trace_file = std::filesystem::path("traces") / solution.author /
                                           definition.op_type / (definition.name + ".jsonl");
  const auto unsafe = unsafe_trace_path(definition, solution);
  if (unsafe && run.options.dry_run == DryRun::no) {
    const std::lock_guard guard(run.lock);
    run.result.diagnostics.push_back(*unsafe);
  }
  for (const Trace* workload_trace : pair.workloads) {
    if (run.stopped) {
      return KeepGoing::no;
    }
    const std::string& uuid = workload_trace->workload.uuid;
    RunStep step{definition.name, solution.name,         uuid, 0, 0,
                 BuildsFirst::no, solution.spec.language};
    if (workload_trace == pair.workloads.front() && compiled(solution.spec.language)) {
      step.builds = BuildsFirst::yes;
    }
    {
      const std::lock_guard guard(run.lock);
      step.number = ++run.number;
      step.total = run.result.plan.to_run;
      if (run.observer.starting) {
        run.observer.starting(step);
      }
    }
    auto evaluated =
        runner.evaluate(definition, solution, workload_trace->workload, pair.settings->evaluate);
    const std::lock_guard guard(run.lock);
    const auto unavailable = std::find_if(
        evaluated.diagnostics.begin(), evaluated.diagnostics.end(), [](const Diagnostic& d) {
          return d.code == codes::k_worker_unavailable || d.code == codes::k_sandbox_unavailable;
        });
    if (unavailable != evaluated.diagnostics.end()) {
      run.result.diagnostics.push_back(*unavailable);
      return KeepGoing::no;
    }
    for (auto& d : evaluated.diagnostics) {
      add_once(run, definition, solution, uuid, std::move(d));
    }
    if (!evaluated.evaluation) {
      ++run.result.not_run;
      continue;
    }
    Json trace = Json::object();
    trace["definition"] = definition.name;
    trace["workload"] = to_json(workload_trace->workload);
    trace["solution"] = solution.name;
    trace["evaluation"] = *evaluated.evaluation;
    trace["evaluation"]["settings"] = pair.settings->settings;
    ++run.result.evaluations;
    ++run.result.statuses[(*evaluated.evaluation).value("status", "?")];
    if (run.options.dry_run == DryRun::no && !unsafe) {
      const std::string line = trace.dump(-1, ' ', false, Json::error_handler_t::replace);
      if (write_trace(run, pair, line, uuid, trace_file) == KeepGoing::no) {
        return KeepGoing::no;
      }
    }
    RunEvaluation done{definition.name,   solution.name, solution.author, uuid,
                       std::move(trace),  trace_file,    step.number,     step.total,
                       evaluated.log_file};
    note_timing_overhead(run, done, evaluated.timing_overhead_ms);
    if (run.observer.evaluated) {
      run.observer.evaluated(done);
    }
  }
  return KeepGoing::yes;
}

// The pairs of one definition: [first, last) of the plan.
struct DefinitionGroup {
  std::size_t first = 0;
  std::size_t last = 0;
};

std::vector<DefinitionGroup> definition_groups(const std::vector<PlannedPair>& pairs) {
  std::vector<DefinitionGroup> out;
  for (std::size_t first = 0; first < pairs.size();) {
    std::size_t last = first;
    while (last < pairs.size() && pairs[last].definition == pairs[first].definition) {
      ++last;
    }
    out.push_back({first, last});
    first = last;
  }
  return out;
}

std::vector<const Workload*> workloads_of(const std::vector<PlannedPair>& pairs, std::size_t first,
                                          std::size_t last);

// One runner's share: the next definition not taken yet, until none is left or the run stopped.
void run_definitions(Execution& run, ReferenceRunner& runner, const Plan& plan,
                     const std::vector<DefinitionGroup>& groups, std::atomic<std::size_t>& next) {
  for (std::size_t g = next++; g < groups.size() && !run.stopped; g = next++) {
    const auto [first, last] = groups[g];
    runner.prepare_references(*plan.pairs[first].definition, workloads_of(plan.pairs, first, last),
                              plan.pairs[first].settings->evaluate);
    for (std::size_t i = first; i < last; ++i) {
      if (run_pair(run, runner, plan.pairs[i]) == KeepGoing::no) {
        run.stopped = true;
        return;
      }
    }
  }
}

// The workloads of the plan's pairs of one definition, each once, in the order first needed.
std::vector<const Workload*> workloads_of(const std::vector<PlannedPair>& pairs, std::size_t first,
                                          std::size_t last) {
  std::vector<const Workload*> out;
  std::set<const Workload*> seen;
  for (std::size_t i = first; i < last; ++i) {
    for (const Trace* t : pairs[i].workloads) {
      if (seen.insert(&t->workload).second) {
        out.push_back(&t->workload);
      }
    }
  }
  return out;
}

} // namespace

Expected<RunShard> parse_run_shard(std::string_view text) {
  const auto invalid = [&](std::string_view why) {
    return unexpected(
        make_diagnostic(codes::k_usage, fmt::format("--shard '{}': {}", text_excerpt(text), why)));
  };
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) {
    return invalid("expected K/N, e.g. 1/4");
  }
  const auto number = [](std::string_view digits) -> std::optional<std::size_t> {
    if (digits.empty() || digits.size() > 5 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    std::size_t value = 0;
    std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return value;
  };
  const auto k = number(text.substr(0, slash));
  const auto n = number(text.substr(slash + 1));
  if (!k || !n) {
    return invalid("K and N must be whole numbers, e.g. 1/4");
  }
  if (*n < 1 || *n > k_max_shards) {
    return invalid(fmt::format("N must be between 1 and {}", k_max_shards));
  }
  if (*k < 1 || *k > *n) {
    return invalid(fmt::format("K must be between 1 and N ({})", *n));
  }
  return RunShard{*k, *n};
}

Expected<RunDevices> parse_run_devices(std::string_view text) {
  const auto invalid = [&](std::string why) {
    return unexpected(make_diagnostic(codes::k_usage,
                                      fmt::format("--devices '{}': {}", text_excerpt(text), why)));
  };
  RunDevices out;
  std::set<int> seen;
  std::string_view rest = text;
  std::size_t entries = 0;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view entry = rest.substr(0, comma);
    if (++entries > k_max_devices) {
      return invalid(fmt::format("at most {} devices", k_max_devices));
    }
    SmokeDevice kind = SmokeDevice::cpu;
    std::optional<int> index;
    if (entry == "cpu") {
      kind = SmokeDevice::cpu;
    } else if (entry == "cuda") {
      kind = SmokeDevice::cuda;
      index = 0;
    } else if (entry.starts_with("cuda:") && entry.size() > 5 && entry.size() <= 8 &&
               std::all_of(entry.begin() + 5, entry.end(),
                           [](char c) { return c >= '0' && c <= '9'; })) {
      kind = SmokeDevice::cuda;
      int value = 0;
      std::from_chars(entry.data() + 5, entry.data() + entry.size(), value);
      index = value;
    } else {
      return invalid(
          fmt::format("'{}' is not a device: use cpu, cuda or cuda:N", text_excerpt(entry)));
    }
    if (entries > 1 && kind != out.device) {
      return invalid("every device must be of one kind (all cpu or all cuda)");
    }
    out.device = kind;
    if (index && !seen.insert(*index).second) {
      return invalid(fmt::format("cuda:{} is named twice", *index));
    }
    out.gpus.push_back(index);
    if (comma == std::string_view::npos) {
      break;
    }
    rest = rest.substr(comma + 1);
  }
  return out;
}

std::size_t shard_of(std::string_view definition, std::string_view solution, std::size_t count) {
  if (count <= 1) {
    return 1;
  }
  std::string key;
  key.reserve(definition.size() + solution.size() + 1);
  key.append(definition).append("\n").append(solution);
  const Sha256Digest digest = sha256(key);
  std::uint64_t head = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    head = (head << 8) | digest[i];
  }
  return static_cast<std::size_t>(head % count) + 1;
}

Json run_settings(const EvaluateOptions& evaluate, SmokeDevice device) {
  Json settings = Json::object();
  settings["device"] = std::string(to_string(device));
  settings["warmup"] = evaluate.warmup;
  settings["iterations"] = evaluate.iterations;
  settings["trials"] = evaluate.trials;
  settings["cold_cache"] = evaluate.cold_cache == ColdCache::yes;
  settings["atol"] = evaluate.atol;
  settings["rtol"] = evaluate.rtol;
  settings["tolerance"] = evaluate.tolerance_table == ToleranceTable::on ? "per-dtype" : "fixed";
  settings["evaluator"] = std::string(enum_name(evaluate.evaluator));
  settings["required_matched_ratio"] =
      evaluate.required_matched_ratio ? Json(*evaluate.required_matched_ratio) : Json(nullptr);
  settings["perturbed_inputs"] = true; // the check that outputs follow the inputs (docs/run.md)
  if (evaluate.stop_at_ci) {
    settings["stop_at_ci"] = *evaluate.stop_at_ci; // absent otherwise, as in older traces
  }
  if (evaluate.evaluator == Evaluator::sampling) {
    settings["sampling_validation_trials"] = evaluate.sampling.validation_trials;
    settings["sampling_samples"] = sampling_samples_on(evaluate.sampling, device);
    settings["sampling_tvd_threshold"] = evaluate.sampling.tvd_threshold;
  }
  return settings;
}

RunResult run_solutions(const RunOptions& options, ReferenceRunner& runner,
                        const RunObserver& observer) {
  return run_solutions(options, std::vector<ReferenceRunner*>{&runner}, observer);
}

RunResult run_solutions(const RunOptions& options, const std::vector<ReferenceRunner*>& runners,
                        const RunObserver& observer) {
  RunResult result;
  DiagnosticList sink;
  auto set = load_trace_set(options.dataset, sink);
  for (const auto& d : sink.items()) {
    if (d.severity == Severity::error) {
      result.diagnostics.push_back(d);
    }
  }
  if (!set) {
    if (result.diagnostics.empty()) {
      result.diagnostics.push_back(set.error());
    }
    return result;
  }
  EvaluateOptions evaluate = options.evaluate;
  evaluate.dataset_root = options.dataset;
  report_unknown_selections(options, *set, result);
  warn_about_unknown_settings(options, *set, result);
  const Plan plan = plan_run(options, evaluate, *set, result);
  result.plan = plan.counts;
  if (observer.planned) {
    observer.planned(plan.counts);
  }
  std::set<std::string> said;
  for (const PlannedPair& pair : plan.pairs) {
    warn_about_settings(options, pair.settings->evaluate, said, result);
  }
  std::set<const Solution*> read;
  for (const PlannedPair& pair : plan.pairs) {
    if (read.insert(pair.solution).second) {
      for (Diagnostic& d : solution_red_flags(*pair.solution)) {
        result.diagnostics.push_back(std::move(d));
      }
    }
  }
  Execution run(options, observer, result);
  const std::vector<DefinitionGroup> groups = definition_groups(plan.pairs);
  std::atomic<std::size_t> next{0};
  if (runners.size() <= 1) {
    if (!runners.empty()) {
      run_definitions(run, *runners.front(), plan, groups, next);
    }
  } else {
    std::vector<std::thread> threads;
    for (ReferenceRunner* runner : runners) {
      threads.emplace_back([&, runner] { run_definitions(run, *runner, plan, groups, next); });
    }
    for (std::thread& thread : threads) {
      thread.join();
    }
  }
  note_repeats(run);
  warn_about_timing_overhead(run);
  return result;
}

} // namespace fib
