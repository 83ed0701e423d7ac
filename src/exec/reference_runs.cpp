// The reference's runs on a workload (src/exec/evaluation_steps.hpp): the job in the
// dataset-reading worker, the check of its timings, and the copies of its files fib keeps.

#include "evaluation_steps.hpp"
#include "timed_calls.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace fib::detail {

double median(std::vector<double> values) {
  if (values.empty()) {
    return 0.0;
  }
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2.0;
}

std::optional<std::string> timing_disagreement(const TimedCalls& timing,
                                               std::size_t expected_calls) {
  // fib's adaptive stop ends the calls early itself (and refuses a call past it).
  const bool stopped_early = timing.stopped && timing.fib_ms.size() <= expected_calls;
  if (timing.fib_ms.size() != expected_calls && !stopped_early) {
    return fmt::format("{} timed calls instead of {}", timing.fib_ms.size(), expected_calls);
  }
  for (std::size_t i = 0; i < timing.fib_ms.size(); ++i) {
    if (timing.reported_ms[i] > timing.fib_ms[i] * 1.01 + 0.05) {
      return fmt::format("call {} was reported as {:.4f} ms, but fib's clock saw {:.4f} ms", i,
                         timing.reported_ms[i], timing.fib_ms[i]);
    }
  }
  // A report under fib's interval is normal (the interval holds the round trip and, on a busy
  // machine, scheduling delays) and gains nothing: the latency is fib's clock.
  return std::nullopt;
}

Json fresh_inputs_of(const SmokePlan& plan) {
  Json out = Json::object();
  for (const PlannedInput& input : plan.inputs) {
    if (input.fill == InputFill::random_normal || input.fill == InputFill::random_bool) {
      out[input.name] = "values";
    } else if (input.fill == InputFill::probabilities) {
      out[input.name] = "rows";
    }
  }
  return out;
}

Expected<ReferenceRun> run_reference(WorkerProcess& worker, const Definition& definition,
                                     const SmokePlan& workload_plan, const EvaluateOptions& options,
                                     const JudgingPlace& judging,
                                     std::vector<Diagnostic>& diagnostics,
                                     const ReferenceJob& job) {
  // The scratch directory exists once the worker runs.
  if (auto problem = worker.start()) {
    diagnostics.push_back(*problem);
    return unexpected(std::move(*problem));
  }
  const std::string directory = judging.job;
  if (auto made = make_job_directory(worker.scratch(), directory); !made) {
    diagnostics.push_back(made.error());
    return unexpected(made.error());
  }
  const SmokePlan& plan = workload_plan;
  const Json fresh = job.vary == VaryTimedInputs::yes ? fresh_inputs_of(plan) : Json::object();
  Json request{{"job", "reference_outputs"},
               {"name", definition.name},
               {"reference", definition.reference},
               {"inputs", names_of(definition.inputs)},
               {"outputs", names_of(definition.outputs)},
               {"plan", to_json(plan)},
               {"directory", (worker.scratch_inside() / directory).string()},
               {"warmup", options.warmup},
               {"iterations", options.iterations},
               {"cold_cache", options.cold_cache == ColdCache::yes},
               {"fresh_inputs", fresh},
               {"keep_timed_inputs", options.evaluator == Evaluator::sampling && !fresh.empty()},
               {"seed", job.seed}};
  JobResult result = worker.run_job(std::move(request), worker.options().job_timeout);
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
  const auto take = [&](const std::string& name) -> Expected<std::filesystem::path> {
    // Named by the job: the runs of a definition's workloads are kept side by side until
    // another definition comes, and each solution must be judged on its own workload's files.
    auto taken = take_file(worker.scratch(), directory, name,
                           judging.directory / (judging.job + "-" + name));
    if (!taken) {
      diagnostics.push_back(taken.error());
    }
    return taken;
  };
  FIB_TRY_ASSIGN(run.inputs, take("inputs.safetensors"));
  FIB_TRY_ASSIGN(run.expected, take("expected.safetensors"));
  const bool keep_inputs = options.evaluator == Evaluator::sampling && !fresh.empty();
  std::vector<std::uint64_t> output_bytes;
  for (std::size_t call = 0; call < calls; ++call) {
    FIB_TRY_ASSIGN(auto outputs, take(fmt::format("timed_{}.safetensors", call)));
    run.timed_outputs.push_back(outputs);
    if (keep_inputs) {
      FIB_TRY_ASSIGN(auto inputs, take(fmt::format("timed_inputs_{}.safetensors", call)));
      run.timed_inputs.push_back(inputs);
    }
    std::uint64_t bytes = 0;
    if (auto problem = commitment_problem(result.timing, call, outputs,
                                          names_of_vector(definition.outputs), bytes)) {
      diagnostics.push_back(make_diagnostic(
          codes::k_run_reference,
          "the reference's timings cannot be believed, so nothing was compared: " + *problem));
      return unexpected(diagnostics.back());
    }
    output_bytes.push_back(bytes);
  }
  run.plan = workload_plan;
  run.fresh_inputs = fresh_inputs_of(workload_plan);
  run.scalars = field(result.reply, "scalars");
  run.seeds = result.timing.seeds;
  run.prep_ms = result.timing.prep_ms;
  run.latency_ms = median(
      call_latencies(result.timing, output_bytes, commitment_cost_of(worker.info()), nullptr).ms);
  if (!run.scalars.is_object()) {
    diagnostics.push_back(make_diagnostic(
        codes::k_worker_protocol, "the reference worker sent scalars that are not an object"));
    return unexpected(diagnostics.back());
  }
  return run;
}

bool has_random_input(const SmokePlan& plan) {
  return std::any_of(plan.inputs.begin(), plan.inputs.end(), [](const PlannedInput& input) {
    return input.fill == InputFill::random_normal || input.fill == InputFill::probabilities ||
           input.fill == InputFill::random_bool || input.fill == InputFill::indices;
  });
}

} // namespace fib::detail
