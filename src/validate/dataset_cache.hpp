#pragma once
// The result cache in dataset validation: a target definition's whole report, kept under a key
// made of everything its categories read (see docs/cache.md). Private to src/validate.

#include "validate/dataset_job.hpp"

#include <fib/util/result_cache.hpp>

#include <optional>
#include <string>
#include <vector>

namespace fib::dataset_checks {

// --- Interface ---

// What the keys of one run share: the format, fib's build, the Python front-end's identity, the
// dataset root and the enabled categories. A null `store` caches nothing.
struct DatasetCache {
  ResultCache* store = nullptr;
  std::string key_prefix;
};

enum class UsesWorker { no, yes };

// The cache of a run: none when `store` is null or disabled, the front-end's identity is empty
// (its answers may not be kept), or the run uses the reference worker (its results depend on
// more than the files: the installed torch, the device).
DatasetCache dataset_cache(ResultCache* store, const std::string& python_identity,
                           const std::filesystem::path& root,
                           const std::vector<std::string>& enabled_checks, GpuChecks gpu,
                           UsesWorker uses_worker);

// The bytes of a job's files, read once: for the key, then for parsing.
struct JobTexts {
  Expected<std::string> definition;
  std::optional<Expected<std::string>> workload;
  std::vector<Expected<std::string>> solutions;
  std::vector<Expected<std::string>> traces;
};

JobTexts read_job_texts(const DefinitionJob& job);

// The key of a job's report: the prefix, then each file's role, path and bytes (or read error),
// and the definition's duplicate-name state.
Sha256Digest job_cache_key(const DatasetCache& cache, const DefinitionJob& job,
                           const JobTexts& texts);

// Tries the cache: on a hit whose blobs are unchanged, sets the job's report, from_cache and
// definition_parsed and returns true.
bool take_cached_report(const DatasetCache& cache, DefinitionJob& job);

// The blobs the job's workload and trace lines name (root / path, sorted, once each), with
// their current fingerprints. For a job that was parsed.
std::vector<BlobFingerprint> blob_fingerprints(const DefinitionJob& job,
                                               const std::filesystem::path& root);

// Keeps the job's report under its key, when the job has a key and its blobs did not change
// while it was checked (compared with `job.blobs`, taken before the checks).
void store_report(const DatasetCache& cache, const DefinitionJob& job,
                  const std::filesystem::path& root);

} // namespace fib::dataset_checks
