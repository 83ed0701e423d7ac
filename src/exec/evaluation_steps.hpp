#pragma once
// The steps of one solution's evaluation on one workload (internal to the exec layer), shared by
// evaluation.cpp (the run, its trials and the judging of a job) and evaluation_checks.cpp (the
// checks that the solution's outputs follow its inputs and that its timed calls compute).

#include "runner_impl.hpp"

#include <fib/exec/compare.hpp>
#include <fib/exec/sampling.hpp>
#include <fib/exec/worker_client.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fib {
namespace detail {

double median(std::vector<double> values);

// Why the timings a worker reported cannot be believed, by fib's clock: another number of calls
// than asked (fewer only where fib stopped them), or a call reported longer than fib saw it take
// (its measurement lies inside fib's go→done interval). nullopt when they agree.
std::optional<std::string> timing_disagreement(const TimedCalls& timing,
                                               std::size_t expected_calls);

// The inputs of `plan` that get new values before each timed call (docs/run.md, "Fresh values
// for every timed call"): {name: "values"} for random normal and boolean tensors (their values
// in a new order), {name: "rows"} for probabilities (their last dimension in a new order).
Json fresh_inputs_of(const SmokePlan& plan);

// Whether another seed changes some input of the plan (random values or random indices); inputs
// read from files, scalars and the fixed index patterns stay as they are.
bool has_random_input(const SmokePlan& plan);

// Whether `definition` has an integer input of rank 1 or more: indices, offsets or lengths, by
// which a correct kernel may read only part of its other inputs (a paged cache's used pages).
bool has_index_inputs(const Definition& definition);

// The bytes each call of `definition` must move at least: its outputs' (`output_bytes`, written
// once), and, when it has no index inputs, every byte of its inputs (`inputs`, a safetensors
// file: read once). The plausibility floor's size (docs/execution.md).
std::uint64_t bytes_every_call_moves(const Definition& definition,
                                     const std::filesystem::path& inputs,
                                     std::uint64_t output_bytes);

// no: the reference's timed calls all run on copies of the same inputs.
enum class VaryTimedInputs { no, yes };

// What one reference job runs on: the plan's inputs drawn with `seed`; with `vary`, its timed
// calls on new values of the random ones, from seeds fib draws (ReferenceRun::seeds).
struct ReferenceJob {
  std::uint64_t seed = 0;
  VaryTimedInputs vary = VaryTimedInputs::yes;
};

// The reference on a workload, in the dataset-reading worker: its inputs and outputs copied into
// `judging`'s directory, its latency the median of fib's intervals. A diagnostic (in
// `diagnostics` too: the reference raised or timed out, its timings disagree, the worker
// misbehaved) when it gives no outputs to compare with.
Expected<ReferenceRun> run_reference(WorkerProcess& worker, const Definition& definition,
                                     const SmokePlan& workload_plan, const EvaluateOptions& options,
                                     const JudgingPlace& judging,
                                     std::vector<Diagnostic>& diagnostics,
                                     const ReferenceJob& job = {});

} // namespace detail

// The seed of the perturbed inputs: far from the trials' seeds (trial t uses t - 1, t <= 1000),
// and below 2^32, since torch's CPU generator keeps only the low 32 bits of a seed.
inline constexpr std::uint64_t k_perturbed_seed = std::uint64_t{1} << 31;

class EvaluationSteps {
public:
  // The reference on one workload in the dataset-reading worker, as remembered: trial 1 on the
  // workload's inputs, the later trials and the perturbed inputs when the plan draws random
  // values.
  static CachedReference reference_on(ReferenceRunner::Impl& impl, const Definition& definition,
                                      const SmokePlan& plan, const EvaluateOptions& options,
                                      const JudgingPlace& judging);

  EvaluationSteps(ReferenceRunner::Impl& impl, const Definition& definition,
                  const Solution& solution, const EvaluateOptions& options)
      : m_impl(impl), m_definition(definition), m_solution(solution), m_options(options) {}
  SolutionEvaluation run(const Workload& workload);

private:
  // One trial: the reference run's inputs handed to the solution's worker (with the perturbed
  // ones when given), its outputs job, and the judging of it. `result` receives the job's reply.
  SolutionEvaluation run_trial(detail::WorkerProcess& worker, const ReferenceRun& reference,
                               const JudgingPlace& judging, const Json& solution_json,
                               const ReferenceRun* perturbed, detail::JobResult& result);
  // Trials 2..n after the first passed: the first failing one (its log says which), else
  // `first` with the trials' mean latencies and their worst errors.
  SolutionEvaluation later_trials(detail::WorkerProcess& worker, const CachedReference& cached,
                                  const Json& solution_json, SolutionEvaluation first);
  Json by_fib(std::string status, std::string log) const;
  ComparePolicy compare_policy() const {
    return ComparePolicy{m_options.atol, m_options.rtol, m_options.tolerance_table,
                         m_options.required_matched_ratio,
                         m_sampling ? CompareValues::no : CompareValues::yes};
  }
  // The comparison of one call's outputs `got` (kinds: what the worker said it returned) with the
  // reference run's: compare_outputs, and with the sampling evaluator the count, shapes and dtypes
  // only, then every sample inside its row's support for the call's `inputs` (a safetensors file
  // of the tensor inputs; the scalars are the reference run's).
  OutputComparison compare_call(const ReferenceRun& reference, const std::filesystem::path& inputs,
                                const std::filesystem::path& got, const Json& kinds) const;
  // The evaluation of a solution job that gave no result (timeout, crash, protocol, compile or
  // runtime error); nullopt when it gave one.
  std::optional<SolutionEvaluation> failed_job(const detail::JobResult& result);
  // The sampling evaluator's test of a trial that passed (src/exec/sampling_checks.cpp): the
  // validation calls' samples inside the support, then the distribution of many samples per row
  // within the threshold beyond the noise floor. nullopt (and `passed` given the distances as its
  // correctness) when it passes or the evaluator is another.
  std::optional<SolutionEvaluation> check_distribution(detail::WorkerProcess& worker,
                                                       const ReferenceRun& reference,
                                                       const Json& solution_json,
                                                       SolutionEvaluation& passed);
  // How the distribution calls draw: the workload's rows repeated `repeat` times per call,
  // `per_row` samples per row of a call, `calls` calls.
  struct DrawPlan {
    std::uint64_t repeat = 1;
    std::uint64_t per_row = 1;
    std::uint64_t calls = 1;
  };
  // The worker's solution_samples request for `rows`, and its plan.
  Json sampling_request(detail::WorkerProcess& worker, const ReferenceRun& reference,
                        const JudgingPlace& judging, const Json& solution_json,
                        const SamplingRows& rows, DrawPlan& plan) const;
  // The correctness object of a comparison (the matched ratio in `extra` for the low-bit
  // evaluator or a required matched ratio).
  Json correctness_of(const OutputComparison& compared) const;
  std::optional<Json> build(SolutionEvaluation& out);
  // Every timed call of the solution's job: the commitment its "done" carried must match the
  // outputs it kept (else they were not complete when fib's clock stopped), and those outputs
  // must match the reference's call on the same seed (the same inputs). `output_bytes` receives
  // each call's output size. nullopt when all hold.
  std::optional<SolutionEvaluation>
  check_timed_calls(detail::WorkerProcess& worker, const ReferenceRun& reference,
                    const JudgingPlace& judging, const detail::JobResult& result, const Json& kinds,
                    std::vector<std::uint64_t>& output_bytes);
  // The plausibility floor of the calls and the red flag under it (evaluation_checks.cpp).
  double plausibility_check(const detail::WorkerProcess& worker, const ReferenceRun& reference,
                            std::uint64_t output_bytes, double latency, SolutionEvaluation& out,
                            std::string& log) const;
  SolutionEvaluation judge(detail::WorkerProcess& worker, const ReferenceRun& reference,
                           const JudgingPlace& judging, const detail::JobResult& result,
                           std::size_t calls);
  std::optional<SolutionEvaluation> check_same_addresses(detail::WorkerProcess& worker,
                                                         const ReferenceRun& perturbed,
                                                         const JudgingPlace& judging,
                                                         const detail::JobResult& result);
  std::optional<SolutionEvaluation> check_perturbed(detail::WorkerProcess& worker,
                                                    const ReferenceRun& perturbed,
                                                    const Json& solution_json);
  Json outputs_request(detail::WorkerProcess& worker, const ReferenceRun& reference,
                       const JudgingPlace& judging, Json solution_json, int warmup,
                       int iterations) const;

  ReferenceRunner::Impl& m_impl;
  const Definition& m_definition;
  const Solution& m_solution;
  const EvaluateOptions& m_options;
  std::optional<SamplingLayout> m_sampling; // with the sampling evaluator
};

} // namespace fib
