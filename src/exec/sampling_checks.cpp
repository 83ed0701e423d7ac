// The sampling evaluator's steps of an evaluation (src/exec/evaluation_steps.hpp): the samples
// of each call checked against the support of that call's inputs, and the distribution of many
// samples per row measured against the expected one (exec/sampling.hpp holds the judging).

#include "evaluation_steps.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace fib {

using detail::names_of_vector;
using detail::RemovedAtExit;

namespace {

// The most distribution values one padded call holds (256 MiB of float32), and the most rows, as
// the old tool pads the batch to 10,000 rows.
constexpr std::uint64_t k_max_padded_values = std::uint64_t{1} << 26;
constexpr std::uint64_t k_max_padded_rows = 10'000;

std::uint64_t element_count(const Json& shape) {
  std::uint64_t count = 1;
  for (const Json& d : shape) {
    count *= d.get<std::uint64_t>();
  }
  return count;
}

} // namespace

OutputComparison EvaluationSteps::compare_call(const ReferenceRun& reference,
                                               const std::filesystem::path& inputs,
                                               const std::filesystem::path& got,
                                               const Json& kinds) const {
  OutputComparison compared =
      compare_outputs(reference.expected, names_of_vector(m_definition.outputs), got,
                      kinds.get<std::vector<std::string>>(), compare_policy());
  if (!m_sampling || compared.unreadable || !compared.status.empty()) {
    return compared;
  }
  auto rows = sampling_rows(*m_sampling, inputs, reference.scalars);
  if (!rows) {
    compared.unreadable = "the call's inputs: " + rows.error().message;
    return compared;
  }
  return check_samples(*rows, got, std::to_string(m_sampling->samples_output),
                       filter_name(*m_sampling), SampleCalls::one);
}

Json EvaluationSteps::sampling_request(detail::WorkerProcess& worker, const ReferenceRun& reference,
                                       const JudgingPlace& judging, const Json& solution_json,
                                       const SamplingRows& rows, DrawPlan& plan) const {
  Json request = outputs_request(worker, reference, judging, solution_json, 0, 0);
  request["job"] = "solution_samples";
  const Json& specs = request["output_specs"];
  const std::uint64_t per_call =
      specs.size() > m_sampling->samples_output
          ? std::max<std::uint64_t>(element_count(specs[m_sampling->samples_output][0]), 1)
          : 1;
  plan.per_row = std::max<std::uint64_t>(per_call / rows.rows, 1);
  plan.repeat = 1;
  if (m_sampling->padding == BatchPadding::repeat) {
    const std::uint64_t budget =
        std::min(k_max_padded_rows, std::max<std::uint64_t>(k_max_padded_values / rows.vocab, 1));
    plan.repeat = std::max<std::uint64_t>(budget / rows.rows, 1);
  }
  const auto samples =
      static_cast<std::uint64_t>(sampling_samples_on(m_options.sampling, m_impl.options().device));
  plan.calls = (samples + plan.repeat * plan.per_row - 1) / (plan.repeat * plan.per_row);
  // The padded call's outputs: those whose first axis is the batch axis have `repeat` times as
  // many rows.
  Json padded = specs;
  std::size_t index = 0;
  for (const auto& [name, spec] : m_definition.outputs) {
    if (index < padded.size() && spec.shape && !spec.shape->empty() && m_sampling->batch_axis &&
        spec.shape->front() == *m_sampling->batch_axis && !padded[index][0].empty()) {
      padded[index][0][0] = padded[index][0][0].get<std::uint64_t>() * plan.repeat;
    }
    ++index;
  }
  request["sampling"] = Json{{"validation_calls", m_options.sampling.validation_trials},
                             {"samples_output", m_sampling->samples_output},
                             {"rows", rows.rows},
                             {"vocab", rows.vocab},
                             {"repeat", plan.repeat},
                             {"distribution_calls", plan.calls},
                             {"batched_inputs", m_sampling->batched_inputs},
                             {"padded_output_specs", std::move(padded)}};
  return request;
}

std::optional<SolutionEvaluation> EvaluationSteps::check_distribution(detail::WorkerProcess& worker,
                                                                      const ReferenceRun& reference,
                                                                      const Json& solution_json,
                                                                      SolutionEvaluation& passed) {
  if (!m_sampling) {
    return std::nullopt;
  }
  SolutionEvaluation out;
  auto rows = sampling_rows(*m_sampling, reference.inputs, reference.scalars);
  auto judging = m_impl.judging_place();
  if (!rows || !judging) {
    out.diagnostics.push_back(!rows ? rows.error() : judging.error());
    return out;
  }
  const auto handed = [&]() -> Expected<std::filesystem::path> {
    FIB_TRY(detail::make_job_directory(worker.scratch(), judging->job));
    return detail::put_file(reference.inputs, worker.scratch(), judging->job, "inputs.safetensors");
  }();
  if (!handed) {
    out.diagnostics.push_back(handed.error());
    return out;
  }
  DrawPlan plan;
  const detail::JobResult result =
      worker.run_job(sampling_request(worker, reference, *judging, solution_json, *rows, plan),
                     m_impl.options().job_timeout);
  if (auto failed = failed_job(result)) {
    return failed;
  }
  const std::string filters = filter_name(*m_sampling);
  const std::filesystem::path validation =
      judging->directory / (judging->job + "-validation.safetensors");
  const std::filesystem::path counts = judging->directory / (judging->job + "-counts.safetensors");
  const RemovedAtExit removed_validation{validation};
  const RemovedAtExit removed_counts{counts};
  for (const auto& [name, copy] : {std::pair{"validation.safetensors", &validation},
                                   std::pair{"counts.safetensors", &counts}}) {
    if (auto taken = detail::take_file(worker.scratch(), judging->job, name, *copy); !taken) {
      out.evaluation =
          by_fib("RUNTIME_ERROR", "[fib] the sampling calls' results: " + taken.error().message);
      return out;
    }
  }
  OutputComparison checked =
      check_samples(*rows, validation, "samples", filters, SampleCalls::stacked);
  std::string prefix =
      fmt::format("one of {} validation calls: ", m_options.sampling.validation_trials);
  if (!checked.unreadable && checked.status.empty()) {
    checked = check_repeats(*rows, validation, "samples");
    prefix = "validation calls: ";
  }
  if (checked.unreadable || !checked.status.empty()) {
    out.evaluation =
        checked.unreadable
            ? by_fib("RUNTIME_ERROR", "[fib] the validation calls: " + *checked.unreadable)
            : by_fib(checked.status, "[fib] " + prefix + checked.log);
    return out;
  }
  auto distance = sampling_distance(*rows, counts);
  if (!distance) {
    out.evaluation = by_fib("RUNTIME_ERROR", "[fib] " + distance.error().message);
    return out;
  }
  const DistanceExcess worst = worst_excess(*distance);
  const double floor =
      *std::max_element(distance->noise_floor.begin(), distance->noise_floor.end());
  Json correctness{{"max_relative_error", distance->max_relative_error},
                   {"max_absolute_error", distance->max_absolute_error},
                   {"extra", Json{{"tvd", *std::max_element(distance->distance.begin(),
                                                            distance->distance.end())},
                                  {"tvds_per_batch", distance->distance},
                                  {"tvd_noise_floor", floor},
                                  {"tvd_excess", worst.excess},
                                  {"samples_per_row", distance->samples_per_row}}}};
  const double chance_of_a_repeat = log_chance_of_repeats(*rows, 2, plan.repeat * plan.per_row);
  std::string failure;
  if (distance->repeated_calls > 0 && chance_of_a_repeat < k_log_chance_of_reuse) {
    failure = fmt::format("[fib] {} of the distribution calls returned exactly the samples of the "
                          "call before, which a sampler of these distributions does with a chance "
                          "of 1 in e^{:.0f} per call: samples reused across calls",
                          distance->repeated_calls, -chance_of_a_repeat);
  } else if (distance->outside > 0) {
    failure =
        fmt::format("[fib] {} of the {} samples per row drawn for the distribution fall "
                    "outside the valid {} mask (first: {})",
                    distance->outside, distance->samples_per_row, filters, distance->first_outside);
  } else if (worst.excess > m_options.sampling.tvd_threshold) {
    failure = fmt::format(
        "[fib] row {}: the frequencies of {} samples are at a total variation distance of {:.4f} "
        "from the expected {} distribution, {:.4f} of which is what sampling noise alone gives; "
        "the excess {:.4f} is above the threshold {:g}",
        worst.row, distance->samples_per_row, distance->distance[worst.row], filters,
        distance->noise_floor[worst.row], worst.excess, m_options.sampling.tvd_threshold);
  }
  if (!failure.empty()) {
    out.evaluation = by_fib("INCORRECT_NUMERICAL", std::move(failure));
    (*out.evaluation)["correctness"] = std::move(correctness);
    return out;
  }
  (*passed.evaluation)["correctness"] = std::move(correctness);
  return std::nullopt;
}

} // namespace fib
