// The checks of an evaluation that a solution's results are its own work
// (src/exec/evaluation_steps.hpp): the timed call fib drew computes like the first, and the
// outputs follow the inputs (other values in the same tensors, then in new ones).

#include "evaluation_steps.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

namespace fib {

using detail::names_of_vector;
using detail::RemovedAtExit;

// The reference's outputs on the inputs of the timed call fib drew: the workload's own when the
// timed calls ran on copies of them, else the reference run on the inputs that call was given
// (timed_inputs.safetensors, saved by the worker with its result). A failure is the evaluation's
// answer: RUNTIME_ERROR when those inputs cannot be read back (the solution's process wrote
// them), a `run.reference` diagnostic when the reference fails on them.
Expected<std::filesystem::path>
EvaluationSteps::expected_of_timed_call(detail::WorkerProcess& worker,
                                        const ReferenceRun& reference, const JudgingPlace& judging,
                                        SolutionEvaluation& out) {
  if (reference.fresh_inputs.empty()) {
    return reference.expected;
  }
  const std::filesystem::path inputs =
      judging.directory / (judging.job + "-timed-inputs.safetensors");
  const RemovedAtExit removed{inputs};
  auto taken = detail::take_file(worker.scratch(), judging.job, "timed_inputs.safetensors", inputs);
  if (!taken) {
    out.evaluation =
        by_fib("RUNTIME_ERROR", "[fib] the inputs of the timed call: " + taken.error().message);
    return unexpected(taken.error());
  }
  auto place = m_impl.judging_place();
  if (!place) {
    out.diagnostics.push_back(place.error());
    return unexpected(place.error());
  }
  EvaluateOptions once = m_options;
  once.warmup = 0;
  once.iterations = 1;
  once.cold_cache = ColdCache::no;
  std::vector<Diagnostic> problems;
  auto ran = detail::run_reference(m_impl.workload_reference(m_options.dataset_root), m_definition,
                                   reference.plan, once, *place, problems,
                                   detail::ReferenceJob{0, detail::VaryTimedInputs::no, &inputs});
  if (ran) {
    std::error_code ignored;
    std::filesystem::remove(ran->inputs, ignored);
    return ran->expected;
  }
  const auto unreadable = std::find_if(problems.begin(), problems.end(), [](const Diagnostic& d) {
    return d.code == codes::k_run_inputs;
  });
  if (unreadable != problems.end()) {
    out.evaluation = by_fib("RUNTIME_ERROR", "[fib] the inputs the solution's worker saved for the "
                                             "timed call cannot be read back: " +
                                                 unreadable->message);
  } else {
    for (Diagnostic& d : problems) {
      d.message = "on the inputs of a timed call (new values of the workload's random inputs): " +
                  d.message;
      out.diagnostics.push_back(std::move(d));
    }
  }
  return unexpected(ran.error());
}

// The result of the timed call fib drew (kept by the worker after it returned), compared with
// the reference's outputs on that call's inputs: a solution that computes only when it is not
// timed, or answers a timed call from a memo of an earlier one, fails here. nullopt when it
// matches.
std::optional<SolutionEvaluation> EvaluationSteps::check_timed_call(detail::WorkerProcess& worker,
                                                                    const ReferenceRun& reference,
                                                                    const JudgingPlace& judging,
                                                                    const detail::JobResult& result,
                                                                    const Json& kinds) {
  SolutionEvaluation out;
  if (!result.timing.kept_call) {
    out.evaluation = by_fib("RUNTIME_ERROR", "[fib] no timed call was kept for the comparison");
    return out;
  }
  const std::filesystem::path copy = judging.directory / (judging.job + "-timed.safetensors");
  const RemovedAtExit removed{copy};
  auto timed = detail::take_file(worker.scratch(), judging.job, "timed.safetensors", copy);
  if (!timed) {
    out.evaluation =
        by_fib("RUNTIME_ERROR", "[fib] the solution's timed outputs: " + timed.error().message);
    return out;
  }
  OutputComparison compared;
  if (m_sampling) {
    // Samples cannot be compared with the reference's: they must be inside the support of the
    // inputs that call was given.
    const std::filesystem::path inputs =
        judging.directory / (judging.job + "-timed-inputs.safetensors");
    const RemovedAtExit removed_inputs{inputs};
    if (!reference.fresh_inputs.empty()) {
      auto taken =
          detail::take_file(worker.scratch(), judging.job, "timed_inputs.safetensors", inputs);
      if (!taken) {
        out.evaluation =
            by_fib("RUNTIME_ERROR", "[fib] the inputs of the timed call: " + taken.error().message);
        return out;
      }
    }
    compared = compare_call(reference, reference.fresh_inputs.empty() ? reference.inputs : inputs,
                            *timed, kinds);
  } else {
    auto expected = expected_of_timed_call(worker, reference, judging, out);
    if (!expected) {
      return out;
    }
    const RemovedAtExit removed_expected{*expected == reference.expected ? std::filesystem::path()
                                                                         : *expected};
    compared = compare_outputs(*expected, names_of_vector(m_definition.outputs), *timed,
                               kinds.get<std::vector<std::string>>(), compare_policy());
  }
  if (compared.unreadable) {
    out.evaluation = by_fib("RUNTIME_ERROR", "[fib] timed call: " + *compared.unreadable);
    return out;
  }
  if (compared.status.empty()) {
    return std::nullopt;
  }
  out.evaluation = by_fib(
      compared.status,
      fmt::format("timed call {}{}: {}", *result.timing.kept_call,
                  reference.fresh_inputs.empty() ? "" : " (the random inputs given new values)",
                  compared.log));
  if (compared.status == "INCORRECT_NUMERICAL" && !m_sampling) {
    (*out.evaluation)["correctness"] = correctness_of(compared);
  }
  return out;
}

// The call the worker made after the timed ones, on the same input tensors with the perturbed
// values copied into them (perturbed_got.safetensors): it must match the reference's outputs on
// those values. A solution that memoizes outputs on input addresses hands back the stale ones
// here, whatever the allocator does. nullopt when it matches.
std::optional<SolutionEvaluation>
EvaluationSteps::check_same_addresses(detail::WorkerProcess& worker, const ReferenceRun& perturbed,
                                      const JudgingPlace& judging,
                                      const detail::JobResult& result) {
  SolutionEvaluation out;
  const std::filesystem::path copy =
      judging.directory / (judging.job + "-perturbed-got.safetensors");
  const RemovedAtExit removed{copy};
  auto got = detail::take_file(worker.scratch(), judging.job, "perturbed_got.safetensors", copy);
  if (!got) {
    out.evaluation =
        by_fib("RUNTIME_ERROR",
               "[fib] the call on perturbed inputs left no outputs: " + got.error().message);
    return out;
  }
  const Json kinds = detail::field(detail::field(result.reply, "result"), "kinds");
  const OutputComparison compared = compare_call(perturbed, perturbed.inputs, *got, kinds);
  if (compared.unreadable) {
    out.evaluation =
        by_fib("RUNTIME_ERROR", "[fib] the call on perturbed inputs: " + *compared.unreadable);
    return out;
  }
  if (compared.status.empty()) {
    return std::nullopt;
  }
  out.evaluation = by_fib(
      compared.status,
      fmt::format("[fib] the outputs do not follow the inputs: the solution passed on the "
                  "workload's inputs, then the same input tensors were given other values (its "
                  "random inputs drawn with seed {}) and its outputs did not change with them. "
                  "Memoizing outputs on input addresses, or reusing an earlier result, does "
                  "this.\n{}",
                  k_perturbed_seed, compared.log));
  if (compared.status == "INCORRECT_NUMERICAL" && !m_sampling) {
    (*out.evaluation)["correctness"] = correctness_of(compared);
  }
  return out;
}

// The solution once more, in the same process, on the workload's inputs drawn with another seed
// (new values, in new tensors): its outputs must match the reference's on those. A solution that
// hands back an earlier result, or memoizes results on input addresses (which the allocator gives
// out again), passes on the first inputs and fails here. nullopt when it passes.
std::optional<SolutionEvaluation> EvaluationSteps::check_perturbed(detail::WorkerProcess& worker,
                                                                   const ReferenceRun& perturbed,
                                                                   const Json& solution_json) {
  auto judging = m_impl.judging_place();
  if (!judging) {
    return std::nullopt; // no place to judge in: the check is skipped, as without random inputs
  }
  const auto handed = [&]() -> Expected<std::filesystem::path> {
    FIB_TRY(detail::make_job_directory(worker.scratch(), judging->job));
    return detail::put_file(perturbed.inputs, worker.scratch(), judging->job, "inputs.safetensors");
  }();
  if (!handed) {
    return std::nullopt;
  }
  const detail::JobResult result =
      worker.run_job(outputs_request(worker, perturbed, *judging, solution_json, 0, 1),
                     m_impl.options().job_timeout);
  SolutionEvaluation second = judge(worker, perturbed, *judging, result, 1);
  if (!second.evaluation) {
    return second; // the worker misbehaved: its diagnostics
  }
  const std::string status = second.evaluation->value("status", "");
  if (status == "PASSED") {
    return std::nullopt;
  }
  (*second.evaluation)["log"] = fmt::format(
      "[fib] the outputs do not follow the inputs: the solution passed on the workload's inputs, "
      "then failed ({}) on the same workload with other random inputs (seed {}), in new "
      "tensors. Reusing an earlier result or memoizing on input addresses does this.\n{}",
      status, k_perturbed_seed, second.evaluation->value("log", ""));
  return second;
}

} // namespace fib
