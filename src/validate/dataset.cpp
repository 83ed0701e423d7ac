// validate_dataset: picks the target definitions, then works through them chunk by chunk in
// phases (load, Python, worker, categories). The categories themselves are in categories/, one
// file each; fib's own checks are marked "[fib]" in their message.

#include "fib/validate/dataset.hpp"

#include "util/forked_pool.hpp"
#include "util/parallel_for.hpp"
#include "validate/chunk_plan.hpp"
#include "validate/chunk_result.hpp"
#include "validate/dataset_cache.hpp"
#include "validate/dataset_job.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/util/huge_pages.hpp>
#include <fib/validate/old_schema.hpp>

#include <spdlog/spdlog.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

namespace fib {
namespace {

using namespace dataset_checks;
using detail::parallel_for;

// The category checks, in the fixed order they run and print.
constexpr std::array<std::pair<Category, CategoryCheck>, 7> k_category_checks = {{
    {Category::layout, check_layout},
    {Category::definition, check_definition},
    {Category::workload, check_workload},
    {Category::solution, check_solution},
    {Category::trace, check_trace},
    {Category::baseline, check_baseline},
    {Category::benchmark, check_benchmark},
}};

// Hands the pages freed with a chunk back to the system. glibc keeps freed memory in the arenas of
// the worker threads (one per thread), which would otherwise add up over the chunks.
void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// One chunk's loaded files and jobs. The jobs point into the other vectors.
struct LoadedChunk {
  std::vector<LoadedDefinition> definitions;
  std::vector<LoadedTraceFile> workloads;
  std::vector<LoadedSolution> solutions;
  std::vector<LoadedTraceFile> traces;
  std::vector<DefinitionJob> jobs;
};

// Sets up the jobs of targets [begin, end), pointing into the chunk's (reserved) vectors.
void prepare_chunk(const std::vector<std::string>& targets, const std::vector<TargetFiles>& files,
                   std::size_t begin, std::size_t end, LoadedChunk& chunk) {
  const std::size_t n = end - begin;
  std::size_t workload_count = 0;
  std::size_t solution_count = 0;
  std::size_t trace_count = 0;
  for (std::size_t i = begin; i < end; ++i) {
    workload_count += files[i].workload != nullptr ? 1 : 0;
    solution_count += files[i].solutions.size();
    trace_count += files[i].traces.size();
  }
  // Reserved up front: the jobs hold pointers into these vectors.
  chunk.definitions.resize(n);
  chunk.jobs.resize(n);
  chunk.workloads.reserve(workload_count);
  chunk.solutions.reserve(solution_count);
  chunk.traces.reserve(trace_count);
  for (std::size_t k = 0; k < n; ++k) {
    const TargetFiles& f = files[begin + k];
    DefinitionJob& job = chunk.jobs[k];
    chunk.definitions[k].entry = f.definition;
    job.name = targets[begin + k];
    job.definition = &chunk.definitions[k];
    if (f.workload != nullptr) {
      job.workload = &chunk.workloads.emplace_back(LoadedTraceFile{f.workload, false, {}, {}});
    }
    for (const ScannedFile* s : f.solutions) {
      job.solutions.push_back(&chunk.solutions.emplace_back(LoadedSolution{s, false, {}, {}}));
    }
    for (const ScannedFile* t : f.traces) {
      job.traces.push_back(&chunk.traces.emplace_back(LoadedTraceFile{t, false, {}, {}}));
    }
  }
}

// When validate_dataset looks at every file for the old schema (see walk_tree).
enum class LookAtOldSchema { beside_scan, after_chunks };

// What the run needs across chunks.
struct DatasetRun {
  const ValidateDatasetOptions& options;
  std::set<Category> enabled;
  CategoryContext context;
  EvaluateOptions evaluate; // the benchmark's: warm-up 2, iterations 5, as the old tool
  bool python_failed = false;
  bool worker_unavailable_reported = false;
  DatasetCache cache;              // whole reports; no store when the run does not cache them
  bool interpreter_probed = false; // the interpreter was asked to start (once per process)
  LookAtOldSchema old_schema_look = LookAtOldSchema::beside_scan; // decided by walk_tree
};

// The old-schema look beside the scan, on a thread of its own: it may go on after the scan, while
// the cache's reports are looked up (take_remembered_reports), which need nothing it finds.
// finish() waits for it and hands over what it found (or rethrows what it threw); it must be
// called before the run does anything else (a fork copies only the forking thread, and the
// report needs the signs), and the destructor waits for a look nobody finished.
class OldSchemaLook {
public:
  OldSchemaLook() = default;
  OldSchemaLook(const OldSchemaLook&) = delete;
  OldSchemaLook& operator=(const OldSchemaLook&) = delete;
  ~OldSchemaLook() {
    if (m_thread.joinable()) {
      m_thread.join();
    }
  }

  // Starts the look at every file below `root`, through `listings` (shared with the scan).
  void start(const std::filesystem::path& root, const DatasetRun& run,
             std::shared_ptr<DirectoryListings> listings) {
    m_thread = std::thread([this, root, &run, listings = std::move(listings)]() mutable {
      try {
        m_signs = dataset_checks::find_old_schema_signs(root, run.options.cache, *run.cache.digests,
                                                        *listings);
      } catch (...) {
        m_failure = std::current_exception();
      }
      listings.reset(); // on this thread, when the scan is done with them too
    });
  }

  // What the look found; empty signs when none was started. Waits for it first.
  OldSchemaSigns finish() {
    if (m_thread.joinable()) {
      m_thread.join();
    }
    if (m_failure) {
      std::rethrow_exception(std::exchange(m_failure, nullptr));
    }
    return std::move(m_signs);
  }

private:
  std::thread m_thread;
  OldSchemaSigns m_signs;
  std::exception_ptr m_failure;
};

// Phase 1 for one job: reads its files, takes its report from the cache when the cache has it,
// else parses the files (and notes the blobs the checks will read, for storing the report). When
// the old-schema look runs after the chunks, it also answers the look for the files it read.
void load_job(DefinitionJob& job, const DatasetRun& run) {
  const DatasetCache& cache = run.cache;
  JobFiles files = probe_job_files(cache, job);
  if (cache.store != nullptr) {
    job.cache_key = job_cache_key(cache, job, files);
    if (take_cached_report(cache, job)) {
      // The files read for this key (their digests were not remembered: they had changed just
      // before an earlier run) are remembered now, so that the next run reads none of them.
      remember_digests(cache, files);
      return;
    }
    // The key of what is parsed: from the bytes read now (a file may have changed since its
    // digest was remembered).
    read_job_files(cache, files);
    job.cache_key = job_cache_key(cache, job, files);
    remember_digests(cache, files);
  }
  load_definition(*job.definition, *files.definition.text);
  if (job.workload != nullptr && files.workload) {
    load_trace_file(*job.workload, *files.workload->text);
  }
  for (std::size_t i = 0; i < job.solutions.size(); ++i) {
    load_solution(*job.solutions[i], *files.solutions[i].text);
  }
  for (std::size_t i = 0; i < job.traces.size(); ++i) {
    load_trace_file(*job.traces[i], *files.traces[i].text);
  }
  job.definition_parsed = job.definition->parsed();
  if (cache.store != nullptr) {
    job.blobs = blob_fingerprints(cache, job, run.context.root);
  }
  if (run.old_schema_look == LookAtOldSchema::after_chunks) {
    sign_for_old_schema(job, files, cache);
  }
}

// Phase 1 (parallel, on up to `threads` threads): loads every job of the chunk.
void load_chunk(LoadedChunk& chunk, const DatasetRun& run, std::size_t threads) {
  parallel_for(
      chunk.jobs.size(), [&](std::size_t i) { load_job(chunk.jobs[i], run); }, threads);
}

// Phase 2 (this thread): the Python-exact definition checks. After the first interpreter failure
// (reported once to `environment`) no more are attempted.
void run_python_checks(LoadedChunk& chunk, PythonFrontend& python, bool& python_failed,
                       DiagnosticSink& environment) {
  for (std::size_t i = 0; i < chunk.definitions.size(); ++i) {
    LoadedDefinition& d = chunk.definitions[i];
    if (python_failed || chunk.jobs[i].from_cache || !d.document || !d.document->root.is_object()) {
      continue;
    }
    DiagnosticList sink;
    if (auto failure =
            check_definition_python(d.definition, *d.document, python, ArityCheck::yes, sink)) {
      environment.report(std::move(*failure));
      python_failed = true;
      continue;
    }
    for (const Diagnostic& diag : sink.items()) {
      if (is_legacy_error(diag)) {
        d.errors.push_back(diag);
      } else if (diag.severity == Severity::error) {
        chunk.jobs[i].python_errors.push_back(diag);
      }
    }
  }
}

// Phase 1 of the first chunk: the loading runs on other threads while this one starts the
// embedded interpreter (the Python checks run on this thread), so that its start-up overlaps the
// reading. A failed start is remembered by the front-end and reported by the Python phase.
void load_chunk_starting_python(LoadedChunk& chunk, DatasetRun& run, PythonFrontend& python,
                                std::size_t threads) {
  run.interpreter_probed = true;
  std::exception_ptr failure;
  std::thread loader([&] {
    try {
      load_chunk(chunk, run, threads);
    } catch (...) {
      failure = std::current_exception();
    }
  });
  (void)python.check_expression("0");
  loader.join();
  if (failure) {
    std::rethrow_exception(failure);
  }
}

// Phase 3 (this thread: one worker for the whole run): the reference builds of the chunk, then
// its baseline builds and benchmarks, as far as asked for and possible.
void run_worker_phases(LoadedChunk& chunk, DatasetRun& run, DiagnosticSink& environment) {
  const ValidateDatasetOptions& options = run.options;
  if (options.runner == nullptr) {
    return;
  }
  if (options.reference_checks != ReferenceChecks::none) {
    for (DefinitionJob& job : chunk.jobs) {
      run_reference_phase(job, options.reference_checks, *options.runner,
                          options.reference_checks_requested, run.worker_unavailable_reported,
                          environment);
    }
  }
  const bool baseline = run.enabled.contains(Category::baseline);
  const bool benchmark = run.enabled.contains(Category::benchmark);
  if (options.gpu == GpuChecks::disabled || (!baseline && !benchmark)) {
    return;
  }
  for (DefinitionJob& job : chunk.jobs) {
    if (!job.definition->parsed()) {
      continue;
    }
    if (baseline) {
      run_baseline_builds(job, *options.runner, run.evaluate.cache, run.context.root);
    }
    if (benchmark) {
      run_benchmark_phase(job, *options.runner, run.evaluate);
    }
  }
}

// Phase 4: the enabled categories of one definition, in their fixed order, and its status.
void run_categories(DefinitionJob& job, const DatasetRun& run) {
  if (job.from_cache) {
    return;
  }
  for (const auto& [category, check] : k_category_checks) {
    if (run.enabled.contains(category)) {
      job.report[category] = check(job, run.context);
    }
  }
  job.report.update_status();
}

ReportConfig report_config(const ValidateDatasetOptions& options,
                           const std::filesystem::path& root) {
  ReportConfig config;
  config.dataset = root.string();
  if (auto checks = resolve_checks(options.checks, options.gpu)) {
    config.checks = std::move(*checks);
  }
  config.disable_gpu = options.gpu == GpuChecks::disabled;
  config.op_types = options.op_types;
  config.definitions = options.definitions;
  return config;
}

DatasetRun start_run(const ValidateDatasetOptions& options, const DatasetReport& report,
                     const std::filesystem::path& root, const PythonFrontend& python) {
  DatasetRun run{options, {}, CategoryContext{root, options.gpu}, {}, false, false, {}, false};
  for (const std::string& c : report.config.checks) {
    if (auto category = parse_category(c)) {
      run.enabled.insert(*category);
    }
  }
  run.evaluate.warmup = 2;
  run.evaluate.iterations = 5;
  run.evaluate.cache = default_build_cache();
  run.evaluate.dataset_root = options.root;
  const UsesWorker uses_worker = options.runner != nullptr ? UsesWorker::yes : UsesWorker::no;
  // The identity only when the cache can be used: asking it may load the interpreter.
  const bool cacheable =
      options.cache != nullptr && options.cache->enabled() && uses_worker == UsesWorker::no;
  run.cache = dataset_cache(options.cache, cacheable ? python.identity() : std::string(), root,
                            report.config.checks, options.gpu, uses_worker);
  return run;
}

// Validates the targets of `range`, on up to `threads` threads (0: one per core).
ChunkResult validate_chunk(const std::vector<std::string>& targets,
                           const std::vector<TargetFiles>& files, ChunkRange range, DatasetRun& run,
                           PythonFrontend& python, DiagnosticSink& environment,
                           std::size_t threads) {
  LoadedChunk chunk;
  prepare_chunk(targets, files, range.begin, range.end, chunk);
  if (run.interpreter_probed) {
    load_chunk(chunk, run, threads);
  } else {
    load_chunk_starting_python(chunk, run, python, threads);
  }
  ChunkResult result;
  result.loaded = static_cast<std::size_t>(
      std::count_if(chunk.jobs.begin(), chunk.jobs.end(),
                    [](const DefinitionJob& job) { return job.definition_parsed; }));
  run_python_checks(chunk, python, run.python_failed, environment);
  run_worker_phases(chunk, run, environment);
  // A report checked without Python differs from one with it: such reports are not kept.
  const bool keep = !run.python_failed;
  parallel_for(
      chunk.jobs.size(),
      [&](std::size_t i) {
        run_categories(chunk.jobs[i], run);
        if (keep) {
          store_report(run.cache, chunk.jobs[i]);
        }
      },
      threads);
  result.reports.reserve(chunk.jobs.size());
  bool parsed_any = false;
  for (DefinitionJob& job : chunk.jobs) {
    for (auto& signed_file : job.signed_files) {
      result.signed_files.push_back(std::move(signed_file));
    }
    parsed_any = parsed_any || !job.from_cache;
    result.reports.emplace_back(std::move(job.name), std::move(job.report));
  }
  chunk = LoadedChunk{};
  if (parsed_any && threads != 1) {
    // A chunk served whole from the cache parsed nothing: the little it freed is better kept for
    // the next chunk than handed back and faulted in again. So is what a chunk validated on one
    // thread (in a worker process) freed: it lies in the one heap the next chunk allocates from,
    // and trimming it cost a tenth of a cold run in page faults (bench/README.md).
    release_free_memory();
  }
  return result;
}

// Where the targets' chunks are validated, and what the run has gathered so far.
struct ChunkSink {
  const std::vector<std::string>& targets;
  const ValidateDatasetOptions& options;
  DatasetReport& report;
  DiagnosticSink& environment;
  std::size_t loaded = 0;
  std::size_t done = 0;
  // Environment diagnostics already reported (worker processes each report theirs).
  std::set<std::tuple<std::string, std::string, std::string>> reported;
  // Where the chunks' old-schema answers go; none are kept when null.
  SignedFiles* signed_files = nullptr;

  void take(ChunkResult result) {
    if (signed_files != nullptr) {
      for (auto& [path, signed_file] : result.signed_files) {
        signed_files->insert_or_assign(std::move(path), signed_file);
      }
    }
    if (options.cache != nullptr) {
      for (auto& [key, value] : result.cache_entries) {
        options.cache->put(key, std::move(value));
      }
      options.cache->mark_used(result.used_packs);
    }
    loaded += result.loaded;
    done += result.reports.size();
    for (auto& [name, definition] : result.reports) {
      report.definitions.emplace(std::move(name), std::move(definition));
    }
    if (options.progress) {
      options.progress(done, targets.size());
    }
  }
  void take_environment(Diagnostic d) {
    if (reported.emplace(d.code, d.message, d.file.native()).second) {
      environment.report(std::move(d));
    }
  }
};

// Whether the options select every definition of the tree (no filter, no shard).
bool every_definition_targeted(const ValidateDatasetOptions& options) {
  return options.op_types.empty() && options.definitions.empty() && !options.shard;
}

// How many worker processes validate the `chunks` (forked-size chunks): none (this process does)
// when the run uses the reference worker (one connection, which processes cannot share), when
// there is only one chunk, or when one process is asked for. By default (one per core) also none
// when the targets fit in one chunk of this process: starting processes would cost more than the
// few milliseconds of checks they could share.
std::size_t worker_processes(const ValidateDatasetOptions& options, std::size_t chunks,
                             std::size_t in_process_chunks) {
  if (options.runner != nullptr || chunks < 2 ||
      (options.processes == 0 && in_process_chunks < 2)) {
    return 0;
  }
  const std::size_t wanted = options.processes == 0 ? detail::core_count() : options.processes;
  return wanted < 2 ? 0 : std::min(wanted, chunks);
}

// Validates the chunks in worker processes (each single-threaded); the chunks none of them
// finished come back for this process.
std::vector<std::size_t> validate_chunks_forked(const std::vector<std::string>& targets,
                                                const std::vector<TargetFiles>& files,
                                                const std::vector<ChunkRange>& chunks,
                                                std::size_t workers, DatasetRun& run,
                                                PythonFrontend& python, ChunkSink& sink) {
  // Started here (unless it was while the tree was scanned), once, so that the workers share the
  // interpreter instead of each starting one. A failure is remembered by the front-end; each
  // worker reports it when it needs Python.
  (void)python.check_expression("0");
  run.interpreter_probed = true;
  std::vector<std::size_t> redo;
  const auto work = [&](std::size_t c) {
    DiagnosticList environment;
    ChunkResult result = validate_chunk(targets, files, chunks[c], run, python, environment, 1);
    if (run.options.cache != nullptr) {
      result.cache_entries = run.options.cache->take_pending();
      result.used_packs = run.options.cache->used_packs();
    }
    return encode_chunk(result, environment);
  };
  const auto on_result = [&](std::size_t c, std::string_view bytes) {
    std::vector<Diagnostic> environment;
    auto decoded = decode_chunk(bytes, environment);
    if (!decoded) {
      redo.push_back(c);
      return;
    }
    for (Diagnostic& d : environment) {
      sink.take_environment(std::move(d));
    }
    if (run.options.cache != nullptr) {
      run.options.cache->put_through(decoded->cache_entries);
    }
    sink.take(std::move(decoded->result));
  };
  detail::ForkHooks hooks;
  hooks.before_fork = [&] {
    python.prepare_fork();
    end_heap_piece_before_fork();
  };
  hooks.parent_after = [&] { python.after_fork(ForkSide::parent); };
  hooks.child_after = [&] {
    python.after_fork(ForkSide::child);
    if (run.options.cache != nullptr) {
      // The entries this process had made before the fork stay its own to commit; a worker
      // sends back only those it makes.
      run.options.cache->disown_inherited_pending();
    }
  };
  const detail::ForkedWorkOutcome outcome =
      detail::run_in_forked_workers(chunks.size(), workers, work, on_result, hooks);
  if (outcome.workers_started == 0) {
    spdlog::debug("no worker process could be started; validating in this process");
  }
  redo.insert(redo.end(), outcome.unfinished.begin(), outcome.unfinished.end());
  std::sort(redo.begin(), redo.end());
  return redo;
}

// Targets looked up at a time by take_remembered_reports: each slice's jobs (their file lists,
// about 1 KB a target) are freed before the next slice is prepared, so that the next slice's
// reports reuse that memory instead of touching fresh pages (bench/README.md, "Fresh memory").
constexpr std::size_t k_lookup_slice = 256;

// The targets whose whole report the cache holds under the remembered digests of their files
// (no file is read): their reports go to `sink` at once, before any chunk is planned or any worker
// process forked, and the indexes of the others come back. A warm run thus does no more than
// look up what it finds.
std::vector<std::size_t> take_remembered_reports(const std::vector<std::string>& targets,
                                                 const std::vector<TargetFiles>& files,
                                                 const DatasetRun& run, ChunkSink& sink) {
  std::vector<std::size_t> others;
  if (run.cache.store == nullptr || !run.cache.store->holds_entries()) {
    others.resize(targets.size());
    std::iota(others.begin(), others.end(), std::size_t{0});
    return others;
  }
  for (std::size_t begin = 0; begin < targets.size(); begin += k_lookup_slice) {
    const std::size_t end = std::min(targets.size(), begin + k_lookup_slice);
    LoadedChunk slice; // no file contents: only the jobs' file lists
    prepare_chunk(targets, files, begin, end, slice);
    std::vector<char> found(end - begin, 0);
    parallel_for(end - begin, [&](std::size_t i) {
      DefinitionJob& job = slice.jobs[i];
      if (const auto remembered = remembered_job_files(run.cache, job)) {
        job.cache_key = job_cache_key(run.cache, job, *remembered);
        found[i] = take_cached_report(run.cache, job) ? 1 : 0;
      }
    });
    ChunkResult result;
    for (std::size_t i = 0; i < slice.jobs.size(); ++i) {
      if (found[i] == 0) {
        others.push_back(begin + i);
        continue;
      }
      result.loaded += slice.jobs[i].definition_parsed ? 1 : 0;
      result.reports.emplace_back(std::move(slice.jobs[i].name), std::move(slice.jobs[i].report));
    }
    slice = LoadedChunk{}; // freed first: the report map's new nodes reuse its memory
    sink.take(std::move(result));
  }
  return others;
}

// Validates `targets`, chunk by chunk (so that only one chunk's parsed files are held at a time
// in any process), in worker processes when that pays; into `sink`.
void validate_in_chunks(const std::vector<std::string>& targets, std::vector<TargetFiles>& files,
                        DatasetRun& run, PythonFrontend& python, ChunkSink& sink) {
  measure_bytes(files);
  const std::vector<ChunkRange> small_chunks = plan_chunks(files, k_chunk_forked);
  const std::vector<ChunkRange> chunks = plan_chunks(files, k_chunk_in_process);
  if (const std::size_t workers = worker_processes(run.options, small_chunks.size(), chunks.size());
      workers > 0) {
    for (const std::size_t c :
         validate_chunks_forked(targets, files, small_chunks, workers, run, python, sink)) {
      DiagnosticList chunk_environment;
      ChunkResult result =
          validate_chunk(targets, files, small_chunks[c], run, python, chunk_environment, 0);
      for (const Diagnostic& d : chunk_environment.items()) {
        sink.take_environment(d);
      }
      sink.take(std::move(result));
    }
    return;
  }
  for (const ChunkRange& range : chunks) {
    sink.take(validate_chunk(targets, files, range, run, python, sink.environment, 0));
  }
}

// Validates every target: those the cache holds whole first, then the others in chunks (setting
// their files' `bytes`); returns how many definitions loaded. The chunks' old-schema answers go to
// `signed_files` unless null. `look` is finished between the two, its signs set in `look_signs`.
std::size_t validate_targets(const std::vector<std::string>& targets,
                             std::vector<TargetFiles>& files, DatasetRun& run,
                             PythonFrontend& python, DatasetReport& report,
                             DiagnosticSink& environment, SignedFiles* signed_files,
                             OldSchemaLook& look, OldSchemaSigns& look_signs) {
  ChunkSink sink{targets, run.options, report, environment, 0, 0, {}, signed_files};
  const std::vector<std::size_t> others = take_remembered_reports(targets, files, run, sink);
  // The look beside the scan went on during the look-ups; the chunks may fork.
  look_signs = look.finish();
  if (others.size() == targets.size()) { // the cache served none (a cold run): no copies
    validate_in_chunks(targets, files, run, python, sink);
    return sink.loaded;
  }
  std::vector<std::string> other_targets;
  std::vector<TargetFiles> other_files;
  other_targets.reserve(others.size());
  other_files.reserve(others.size());
  for (const std::size_t i : others) {
    other_targets.push_back(targets[i]);
    other_files.push_back(files[i]);
  }
  validate_in_chunks(other_targets, other_files, run, python, sink);
  return sink.loaded;
}

// What the walks of the tree give validate_dataset.
struct WalkedTree {
  DatasetScan scan;
  OldSchemaSigns old_schema_signs;                          // the look's, once finished
  std::vector<std::filesystem::path> old_schema_candidates; // for the look after the chunks
};

// Scans the tree and, on another thread, looks at (or only lists) its files for the old schema,
// as it decides for the run (run.old_schema_look). The look beside the scan is started in `look`
// and may outlast this call; its caller finishes it.
// When the cache can serve no report (there is none, or it holds nothing yet), every target will
// be checked with Python: the interpreter starts on this thread meanwhile. Otherwise it is left
// for the first target the cache cannot serve, so that a warm run never starts it.
WalkedTree walk_tree(const std::filesystem::path& root, DatasetRun& run, PythonFrontend& python,
                     OldSchemaLook& look) {
  const ValidateDatasetOptions& options = run.options;
  const bool nothing_cached = run.cache.store == nullptr || !run.cache.store->holds_entries();
  WalkedTree walked;
  // The old-schema look at every file (a read of every definition and solution) runs beside the
  // scan, and is over before any worker process is forked; but when every definition is a target
  // and none is served by the cache, the chunks read all of those files anyway: the files are
  // then only listed beside the scan, and looked at after the chunks, with the chunks' answers
  // (sign_for_old_schema) for the files they read.
  run.old_schema_look = nothing_cached && every_definition_targeted(options)
                            ? LookAtOldSchema::after_chunks
                            : LookAtOldSchema::beside_scan;
  // Each directory is listed once between the two walks; the listings are freed after them, on
  // the thread of the walk that ends last (while this one may still be starting the interpreter).
  auto listings = std::make_shared<DirectoryListings>();
  if (run.old_schema_look == LookAtOldSchema::beside_scan) {
    look.start(root, run, listings);
  }
  std::exception_ptr scan_failure;
  std::jthread scanner([&] { // joined on every way out of this scope
    try {
      // The scan, and the listing of the files for the look after the chunks when that is when
      // it runs (the look beside the scan lists them itself).
      const std::size_t walks = run.old_schema_look == LookAtOldSchema::after_chunks ? 2 : 1;
      parallel_for(
          walks,
          [&](std::size_t task) {
            if (task == 0) {
              walked.scan = scan_dataset(root, listings.get());
            } else {
              walked.old_schema_candidates = list_old_schema_candidates(root, *listings);
            }
          },
          walks);
      listings.reset();
    } catch (...) {
      scan_failure = std::current_exception();
    }
  });
  if (nothing_cached) {
    (void)python.check_expression("0");
    run.interpreter_probed = true;
  }
  scanner.join();
  listings.reset(); // when a walk failed
  if (scan_failure) {
    std::rethrow_exception(scan_failure);
  }
  return walked;
}

// What a run is done with when it returns (ValidateDatasetOptions::done_with). The file lists
// point into the scan: they go together.
struct RunLeftovers {
  WalkedTree walked;
  std::vector<std::string> targets;
  std::vector<TargetFiles> files;
  SignedFiles signed_files;
};

// Hands `leftovers` to options.done_with, if any (else they are destroyed with the argument).
void hand_over(const ValidateDatasetOptions& options, RunLeftovers&& leftovers) {
  if (options.done_with) {
    options.done_with(std::make_shared<RunLeftovers>(std::move(leftovers)));
  }
}

} // namespace

DatasetReport validate_dataset(const ValidateDatasetOptions& options, PythonFrontend& python,
                               DiagnosticSink& environment) {
  const std::filesystem::path root = normalize_root(options.root);
  DatasetReport report;
  report.config = report_config(options, root);
  DatasetRun run = start_run(options, report, root, python);
  if (run.enabled.contains(Category::benchmark) && options.runner == nullptr) {
    spdlog::warn("the benchmark category is reported as skipped: no reference worker to run it");
  }
  spdlog::info("Scanning dataset at {}", root.string());
  OldSchemaLook look; // finished before anything but the cache's look-ups (validate_targets)
  WalkedTree walked = walk_tree(root, run, python, look);
  const DatasetScan& scan = walked.scan;
  for (const Diagnostic& unlisted : scan.unlisted) {
    environment.report(unlisted);
  }
  spdlog::info("Found {} definitions", scan.definitions.size());
  if (const auto unmatched = unmatched_filters(options, scan, root); !unmatched.empty()) {
    for (const Diagnostic& d : unmatched) {
      environment.report(d);
    }
    if (options.unmatched_filters == UnmatchedFilters::refused) {
      walked.old_schema_signs = look.finish();
      hand_over(options, RunLeftovers{std::move(walked), {}, {}, {}});
      return report;
    }
  }
  std::vector<std::string> targets = select_targets(options, scan);
  spdlog::info("Target definitions: {}", targets.size());
  std::vector<TargetFiles> files = gather_files(targets, scan);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    report.definition_files.emplace(targets[i], files[i].definition->file.path);
  }

  SignedFiles signed_files;
  const std::size_t loaded = validate_targets(
      targets, files, run, python, report, environment,
      run.old_schema_look == LookAtOldSchema::after_chunks ? &signed_files : nullptr, look,
      walked.old_schema_signs);
  if (run.old_schema_look == LookAtOldSchema::after_chunks) {
    walked.old_schema_signs = look_at_old_schema(root, walked.old_schema_candidates, options.cache,
                                                 *run.cache.digests, &signed_files);
  }
  CheckResult dataset_level = check_dataset_level(scan, root);
  // A tree of the old schema is said once, first, with counts (not once per file).
  if (auto old_schema =
          old_schema_message(walked.old_schema_signs, root,
                             loaded > 0 ? DefinitionsLoaded::some : DefinitionsLoaded::none)) {
    CheckResult first;
    first.add(std::move(*old_schema));
    for (CheckMessage& message : dataset_level.messages) {
      first.add(std::move(message));
    }
    dataset_level = std::move(first);
  }
  report.dataset = std::move(dataset_level);
  if (options.shard) {
    report.shard = shard_record(*options.shard, scan);
  }
  hand_over(options, RunLeftovers{std::move(walked), std::move(targets), std::move(files),
                                  std::move(signed_files)});
  return report;
}

} // namespace fib
