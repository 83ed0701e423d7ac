// The benchmark category: the baseline solutions and the reference (as the pseudo-solution
// `{definition}__reference`) run on every workload in the worker, and must pass.

#include "validate/dataset_job.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

namespace fib::dataset_checks {
namespace {

// The reference as the old tool benchmarks it: a Python solution whose entry is `run`.
Solution reference_solution(const Definition& definition) {
  Solution reference;
  reference.name = definition.name + "__reference";
  reference.definition = definition.name;
  reference.author = "__reference__";
  reference.spec.language = Language::python;
  reference.spec.target_hardware = {"cuda"};
  reference.spec.entry_point = "main.py::run";
  reference.spec.destination_passing_style = DestinationPassing::no;
  reference.sources = {SourceFile{"main.py", definition.reference}};
  return reference;
}

// Runs solutions on workloads; remembers whether the worker was unusable.
class BenchmarkRun {
public:
  BenchmarkRun(ReferenceRunner& runner, const Definition& definition,
               const EvaluateOptions& evaluate)
      : m_runner(runner), m_definition(definition), m_evaluate(evaluate) {}

  // The evaluation status of `solution` on `workload`; nullopt when it was skipped (no trace, as
  // the old runner's skipped workloads).
  std::optional<std::string> status(const Solution& solution, const Workload& workload) {
    const SolutionEvaluation e = m_runner.evaluate(m_definition, solution, workload, m_evaluate);
    if (!e.evaluation) {
      for (const auto& d : e.diagnostics) {
        m_unavailable = m_unavailable || is_worker_unusable(d);
      }
      return std::nullopt;
    }
    return e.evaluation->value("status", std::string("?"));
  }

  bool unavailable() const { return m_unavailable; }

private:
  ReferenceRunner& m_runner;
  const Definition& m_definition;
  const EvaluateOptions& m_evaluate;
  bool m_unavailable = false;
};

CheckResult benchmark(const Definition& definition, const std::vector<const Solution*>& baselines,
                      const std::vector<const Workload*>& workloads, ReferenceRunner& runner,
                      const EvaluateOptions& evaluate) {
  CheckResult r;
  BenchmarkRun run(runner, definition, evaluate);
  bool baseline_failed = false;
  for (const Solution* s : baselines) {
    for (const Workload* workload : workloads) {
      if (const auto status = run.status(*s, *workload); status && *status != "PASSED") {
        r.add(codes::k_dataset_benchmark_baseline_failed,
              fmt::format("baseline failed: {} on {}: {}", s->name, workload->uuid, *status));
        baseline_failed = true;
      }
    }
  }
  bool reference_failed = false;
  const Solution reference = reference_solution(definition);
  for (const Workload* workload : workloads) {
    if (const auto status = run.status(reference, *workload); status && *status != "PASSED") {
      r.add(codes::k_dataset_benchmark_reference_failed,
            fmt::format("reference failed: workload {}: {}", workload->uuid, *status));
      reference_failed = true;
    }
  }
  if (run.unavailable()) {
    CheckResult failed;
    failed.add(codes::k_worker_unavailable,
               "benchmark failed: the reference worker is not available");
    return failed;
  }
  if (!baseline_failed) {
    r.add(codes::k_dataset_benchmark_baseline_passed, "baseline: PASS");
  }
  if (!reference_failed) {
    r.add(codes::k_dataset_benchmark_reference_passed, "reference: PASS");
  }
  return r;
}

} // namespace

std::optional<CheckResult> check_benchmark(const DefinitionJob& job,
                                           const CategoryContext& /*context*/) {
  return job.benchmark; // "None (skipped)" when the worker did not run it
}

void run_benchmark_phase(DefinitionJob& job, ReferenceRunner& runner,
                         const EvaluateOptions& evaluate) {
  CheckResult& r = job.benchmark.emplace();
  if (!job.definition->loaded()) {
    r.add(codes::k_dataset_definition_not_loaded, "cannot benchmark: definition failed to load");
    return;
  }
  std::vector<const Workload*> workloads;
  if (job.workload != nullptr && job.workload->parsed) {
    for (const TraceLine& line : job.workload->lines) {
      workloads.push_back(&line.trace.workload);
    }
  }
  std::vector<const Solution*> baselines;
  for (const LoadedSolution* s : baseline_solutions(job)) {
    if (s->parsed) {
      baselines.push_back(&s->solution);
    }
  }
  if (workloads.empty()) {
    r.add(codes::k_dataset_benchmark_no_workloads, "no workloads to benchmark");
  } else if (baselines.empty()) {
    r.add(codes::k_dataset_benchmark_no_baseline, "no baseline solutions for benchmark");
  } else {
    runner.prepare_references(job.definition->definition, workloads, evaluate);
    r = benchmark(job.definition->definition, baselines, workloads, runner, evaluate);
  }
}

} // namespace fib::dataset_checks
