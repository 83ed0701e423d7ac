// The checks of an evaluation that a solution's results are its own work
// (src/exec/evaluation_steps.hpp): every timed call's kept outputs match its commitment and the
// reference's call on the same seed, and the outputs follow the inputs (other values in the same
// tensors, then in new ones).

#include "evaluation_steps.hpp"
#include "timed_calls.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/safetensors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

namespace fib {

namespace detail {

bool has_index_inputs(const Definition& definition) {
  return std::any_of(definition.inputs.begin(), definition.inputs.end(), [](const auto& input) {
    const DType dtype = input.second.dtype;
    const bool integer = dtype == DType::int64 || dtype == DType::int32 || dtype == DType::int16 ||
                         dtype == DType::int8;
    return integer && input.second.shape && !input.second.shape->empty();
  });
}

std::uint64_t bytes_every_call_moves(const Definition& definition,
                                     const std::filesystem::path& inputs,
                                     std::uint64_t output_bytes) {
  std::uint64_t bytes = output_bytes;
  if (has_index_inputs(definition)) {
    return bytes;
  }
  if (auto header = read_safetensors_header(inputs)) {
    for (const auto& [name, entry] : header->tensors) {
      bytes += entry.data_end - entry.data_begin;
    }
  }
  return bytes;
}

} // namespace detail

using detail::names_of_vector;
using detail::RemovedAtExit;

std::optional<SolutionEvaluation>
EvaluationSteps::check_timed_calls(detail::WorkerProcess& worker, const ReferenceRun& reference,
                                   const JudgingPlace& judging, const detail::JobResult& result,
                                   const Json& kinds, std::vector<std::uint64_t>& output_bytes) {
  SolutionEvaluation out;
  // Whether the reference's timed calls ran on new values (a seed each), or on its inputs.
  const bool varied = std::any_of(reference.seeds.begin(), reference.seeds.end(),
                                  [](const auto& seed) { return seed.has_value(); });
  const std::size_t calls = result.timing.fib_ms.size();
  if (reference.timed_outputs.size() < calls ||
      (m_sampling && varied && reference.timed_inputs.size() < calls)) {
    out.evaluation = by_fib("RUNTIME_ERROR", "[fib] the reference made fewer timed calls than the "
                                             "solution's job");
    return out;
  }
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] == "tensor") {
      keys.push_back(std::to_string(i));
    }
  }
  for (std::size_t call = 0; call < calls; ++call) {
    const std::filesystem::path copy =
        judging.directory / fmt::format("{}-timed-{}.safetensors", judging.job, call);
    const RemovedAtExit removed{copy};
    auto timed = detail::take_file(worker.scratch(), judging.job,
                                   fmt::format("timed_{}.safetensors", call), copy);
    if (!timed) {
      out.evaluation =
          by_fib("RUNTIME_ERROR", "[fib] the solution's timed outputs: " + timed.error().message);
      return out;
    }
    std::uint64_t bytes = 0;
    if (auto problem = detail::commitment_problem(result.timing, call, *timed, keys, bytes)) {
      out.evaluation =
          by_fib("RUNTIME_ERROR", "[fib] the solution's timings cannot be believed: " + *problem);
      return out;
    }
    output_bytes.push_back(bytes);
    // Samples cannot be compared with the reference's: they must be inside the support of the
    // inputs that call was given.
    const OutputComparison compared =
        m_sampling
            ? compare_call(reference, varied ? reference.timed_inputs[call] : reference.inputs,
                           *timed, kinds)
            : compare_outputs(reference.timed_outputs[call], names_of_vector(m_definition.outputs),
                              *timed, kinds.get<std::vector<std::string>>(), compare_policy());
    if (compared.unreadable) {
      out.evaluation = by_fib("RUNTIME_ERROR", "[fib] timed call: " + *compared.unreadable);
      return out;
    }
    if (!compared.status.empty()) {
      out.evaluation =
          by_fib(compared.status,
                 fmt::format("timed call {}{}: {}", call,
                             varied ? " (the random inputs given new values)" : "", compared.log));
      if (compared.status == "INCORRECT_NUMERICAL" && !m_sampling) {
        (*out.evaluation)["correctness"] = correctness_of(compared);
      }
      return out;
    }
  }
  return std::nullopt;
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

// The plausibility floor of this evaluation's calls (docs/execution.md, "Trust model"), from the
// copy bandwidth the solution's worker measured before any of its code ran; when the median
// `latency` is under it, a run.red-flag warning in `out` and the same words in `log`.
double EvaluationSteps::plausibility_check(const detail::WorkerProcess& worker,
                                           const ReferenceRun& reference,
                                           std::uint64_t output_bytes, double latency,
                                           SolutionEvaluation& out, std::string& log) const {
  const std::uint64_t moved =
      detail::bytes_every_call_moves(m_definition, reference.inputs, output_bytes);
  const double floor_ms = detail::plausibility_floor_ms(
      moved, worker.info() ? worker.info()->copy_bandwidth
                           : std::vector<std::pair<std::uint64_t, double>>{});
  if (latency < floor_ms) {
    const std::string flag = fmt::format(
        "implausibly fast: {:.4f} ms a call, under the {:.4f} ms this device needs to move the "
        "call's {} bytes (its outputs{}) at half the copy bandwidth fib measured",
        latency, floor_ms, moved, detail::has_index_inputs(m_definition) ? "" : " and inputs");
    Diagnostic d = make_diagnostic(codes::k_run_red_flag,
                                   fmt::format("solution {}: {}", m_solution.name, flag));
    d.severity = Severity::warning;
    out.diagnostics.push_back(std::move(d));
    log = log.empty() ? "[fib] run.red-flag: " + flag : log + "\n[fib] run.red-flag: " + flag;
  }
  return floor_ms;
}

} // namespace fib
