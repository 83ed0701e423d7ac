#pragma once
// ReferenceRunner's state (internal to the exec layer): the workers it keeps, the reference runs
// it remembers for the definition being evaluated, and fib's private judging directory. Shared by
// worker_client.cpp (build checks, smoke runs) and evaluation.cpp (solutions).

#include "scratch_files.hpp"
#include "worker_process.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/sandbox.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/io/json_io.hpp>
#include <fib/util/atomic_file.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace fib {
namespace detail {
// Where one evaluation's files go: the job directory's name in the workers' scratch directories
// (fresh for each job) and fib's own judging directory (never bound into a sandbox).
struct JudgingPlace {
  std::string job;
  std::filesystem::path directory;
};

// What the reference's run on one workload left for the solution's: copies of its inputs and
// outputs in fib's own judging directory, the scalar inputs, and its latency by fib's clock.
// Its timed calls ran on inputs fib chose (their seeds), and the outputs of each (with the
// sampling evaluator its inputs too) are what a solution's call on the same seed is compared with.
struct ReferenceRun {
  std::filesystem::path inputs;
  std::filesystem::path expected;
  Json scalars;
  double latency_ms = 0.0;
  SmokePlan plan;    // the workload's plan the run was made from
  Json fresh_inputs; // fresh_inputs_of(plan): the inputs the timed calls give new values
  std::vector<std::optional<std::uint64_t>> seeds; // per timed call (none: nothing varied)
  std::vector<double> prep_ms;                     // per timed call, by fib's clock
  std::vector<std::filesystem::path> timed_outputs;
  std::vector<std::filesystem::path> timed_inputs; // sampling evaluator only

  std::vector<std::filesystem::path> files() const {
    std::vector<std::filesystem::path> out{inputs, expected};
    out.insert(out.end(), timed_outputs.begin(), timed_outputs.end());
    out.insert(out.end(), timed_inputs.begin(), timed_inputs.end());
    return out;
  }
};

// The reference on one workload, as remembered for the rest of the definition: its run, or why
// there is none (reported to every solution evaluated on that workload).
struct CachedReference {
  std::optional<ReferenceRun> run;
  std::vector<Diagnostic> diagnostics;
  // The reference on the same workload with other random inputs (seed 2^31), for the check that
  // a solution's outputs follow its inputs (docs/run.md, "Outputs that do not follow the
  // inputs"). nullopt when the workload has no random input to change, or that run failed.
  std::optional<ReferenceRun> perturbed;
  // The runs of trials 2, 3, ... (trial t on inputs drawn with seed t - 1); empty when one trial
  // was asked for or the workload has no random input (every trial then uses `run`).
  std::vector<ReferenceRun> later_trials;

  // Every run kept, for the byte count and the clean-up.
  std::vector<const ReferenceRun*> kept_runs() const {
    std::vector<const ReferenceRun*> out;
    for (const auto* kept : {&run, &perturbed}) {
      if (*kept) {
        out.push_back(&**kept);
      }
    }
    for (const auto& trial : later_trials) {
      out.push_back(&trial);
    }
    return out;
  }
};

// Past this many bytes of remembered reference files, prepare_references stops running ahead.
inline constexpr std::uintmax_t k_reference_cache_bytes = std::uintmax_t{2} << 30;

// Removes a file of fib's when the scope ends.
struct RemovedAtExit {
  std::filesystem::path path;
  ~RemovedAtExit() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

inline std::uint64_t random_word() {
  // One per thread: `fib run --devices` evaluates on several runners at once.
  thread_local std::mt19937_64 generator{std::random_device{}()};
  return generator();
}

} // namespace detail

using detail::CachedReference;
using detail::JudgingPlace;
using detail::ReferenceRun;

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

  // The worker that runs one solution: its build cache entry bound read-only, so nothing the
  // solution writes outlives its worker but what it writes to its scratch, a tmpfs. A worker for
  // another solution is stopped first.
  detail::WorkerProcess& solution_worker(const std::string& key,
                                         const std::filesystem::path& cache) {
    if (m_solution && m_solution_key == key && m_solution_cache == cache) {
      return *m_solution;
    }
    retire_solution_worker();
    std::error_code ec;
    m_solution_entry = std::filesystem::absolute(cache / "solutions" / key, ec);
    m_solution = std::make_unique<detail::WorkerProcess>(
        detail::WorkerProcessOptions{m_options, {m_solution_entry}, {}, "the solution's worker"});
    m_solution_key = key;
    m_solution_cache = cache;
    return *m_solution;
  }

  // The solution ready to run in solution_worker(): its cache entry built when its built mark
  // is missing, by a worker of its own that has the entry writable, writes the sources, compiles,
  // never loads anything of the solution and is stopped right after; then the build loaded into
  // the solution's worker. The result of the step that failed, else of the load.
  detail::JobResult ready_solution(const std::string& key, const Json& solution_json,
                                   const std::filesystem::path& cache,
                                   std::chrono::milliseconds build_timeout) {
    const auto request = [&](const char* job) {
      return Json{{"job", job},
                  {"name", ""},
                  {"reference", ""},
                  {"inputs", Json::array()},
                  {"outputs", Json::array()},
                  {"solution", solution_json},
                  {"cache", cache.string()}};
    };
    std::error_code ec;
    const std::filesystem::path entry = std::filesystem::absolute(cache / "solutions" / key, ec);
    if (!std::filesystem::is_regular_file(entry / detail::k_built_mark, ec)) {
      retire_solution_worker();
      std::filesystem::create_directories(entry, ec);
      if (ec) {
        detail::JobResult failed;
        failed.outcome.diagnostics.push_back(make_diagnostic(
            codes::k_worker_unavailable, fmt::format("cannot create the build cache entry {}: {}",
                                                     entry.string(), ec.message())));
        return failed;
      }
      const std::string language = solution_json.value("language", "");
      if (language == "python" || language == "triton") {
        // Nothing to compile: fib writes the sources itself, no worker needed.
        if (auto problem = write_python_entry(entry, solution_json)) {
          detail::JobResult failed;
          failed.outcome.diagnostics.push_back(std::move(*problem));
          return failed;
        }
      } else {
        detail::JobResult built;
        {
          detail::WorkerProcess builder(
              detail::WorkerProcessOptions{m_options, {}, {entry}, "the solution's build"});
          built = builder.run_job(request("build_solution"), build_timeout);
          m_retired_starts += builder.starts();
        }
        strip_set_id_bits(entry);
        if (built.outcome.verdict != ReferenceVerdict::ok) {
          return built;
        }
      }
    }
    return solution_worker(key, cache).run_job(request("load_solution"), build_timeout);
  }

  // A Python or Triton solution's entry as the build job would leave it: each source written
  // below `entry`/src (atomically; an unchanged one left as it is), then the built mark.
  static std::optional<Diagnostic> write_python_entry(const std::filesystem::path& entry,
                                                      const Json& solution_json) {
    const auto failed = [&](const Diagnostic& why) {
      return make_diagnostic(
          codes::k_worker_unavailable,
          fmt::format("cannot write the build cache entry {}: {}", entry.string(), why.message));
    };
    std::error_code ec;
    std::filesystem::create_directories(entry / "src", ec);
    for (const Json& source : solution_json.value("sources", Json::array())) {
      const std::string path = source.value("path", "");
      const std::string content = source.value("content", "");
      if (auto old = read_text_file(entry / "src" / path, content.size() + 1);
          old && *old == content) {
        continue;
      }
      if (auto written = write_file_atomically_below(entry / "src", path, content,
                                                     Overwrite::allowed, CreateMissing::yes);
          !written) {
        return failed(written.error());
      }
    }
    if (auto written = write_file_atomically_below(entry, std::string(detail::k_built_mark),
                                                   R"({"library": ""})", Overwrite::allowed,
                                                   CreateMissing::yes);
        !written) {
      return failed(written.error());
    }
    return std::nullopt;
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
    }
  }

  const std::optional<WorkerInfo>& info() const {
    if (m_reference.info() || !m_workload_reference) {
      return m_reference.info();
    }
    return m_workload_reference->info();
  }

  std::map<std::string, std::string> failed_builds;               // solution hash → compile log
  std::map<std::string, std::filesystem::path> failed_build_logs; // solution hash → log file

  // The reference's run on `workload` of `definition`, when this runner made it; runs of another
  // definition are forgotten (and their files removed) when a new one is asked for.
  const CachedReference* cached_reference(const std::string& definition,
                                          const std::string& workload) {
    if (definition != m_reference_definition) {
      for (const auto& [uuid, cached] : m_reference_runs) {
        for (const ReferenceRun* run : cached.kept_runs()) {
          for (const auto& file : run->files()) {
            std::error_code ec;
            std::filesystem::remove(file, ec);
          }
        }
      }
      m_reference_runs.clear();
      m_reference_bytes = 0;
      m_reference_definition = definition;
    }
    const auto it = m_reference_runs.find(workload);
    return it == m_reference_runs.end() ? nullptr : &it->second;
  }
  const CachedReference& remember_reference(const std::string& workload, CachedReference cached) {
    for (const ReferenceRun* run : cached.kept_runs()) {
      std::error_code ec;
      for (const auto& file : run->files()) {
        const auto size = std::filesystem::file_size(file, ec);
        m_reference_bytes += ec ? 0 : size;
      }
    }
    return m_reference_runs[workload] = std::move(cached);
  }
  std::uintmax_t reference_bytes() const { return m_reference_bytes; }

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
    return JudgingPlace{fmt::format("job-{}-{:016x}", ++m_next_job, detail::random_word()),
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
  std::map<std::string, CachedReference> m_reference_runs; // by workload uuid
  std::uintmax_t m_reference_bytes = 0;
};

namespace detail {
inline Json names_of(const OrderedMap<TensorSpec>& specs) {
  Json out = Json::array();
  for (const auto& [name, spec] : specs) {
    out.push_back(name);
  }
  return out;
}

inline std::vector<std::string> names_of_vector(const OrderedMap<TensorSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& [name, spec] : specs) {
    out.push_back(name);
  }
  return out;
}

} // namespace detail
} // namespace fib
