#pragma once
// The result cache in dataset validation: a target definition's whole report, kept under a key
// made of everything its categories read (see docs/cache.md). Private to src/validate.

#include "util/keyed_memo.hpp"
#include "validate/dataset_job.hpp"

#include <fib/util/directory_listings.hpp>
#include <fib/util/result_cache.hpp>
#include <fib/validate/old_schema.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fib::dataset_checks {

// --- Interface ---

// The blob fingerprints one run has taken, by path: each blob's first fingerprint in this process
// is the one every report of the run is kept with. It is always taken before the checks first
// look at the blob in this process (the blobs of a job are fingerprinted when it is loaded, and a
// chunk's jobs are all loaded before any of them is checked; worker processes inherit the memos of
// the process that forked them, which has checked nothing). So a blob that changes after its
// fingerprint was taken, before or after the checks looked at it, no longer matches the kept
// fingerprint, and the next run does not use the report. The copies of a dataset's definitions
// often name the same blobs: each is stat()ed once per process, not twice per definition.
class BlobFingerprints {
public:
  std::string of(const std::string& path);

private:
  detail::KeyedMemo<std::string> m_taken;
};

// The digest memo's answers one run has had, by path (found or not): the old-schema look and
// the definitions' look-ups ask for the same files, and the run takes each answer once.
// Thread-safe.
class RememberedDigests {
public:
  // remembered_digest(store, path), asked at most once per path; nothing is remembered of a store
  // that holds no entries (a first run), whose answer is always nullopt.
  std::optional<Sha256Digest> of(const ResultCache& store, const std::filesystem::path& path);

private:
  detail::KeyedMemo<std::optional<Sha256Digest>> m_answers;
};

// What the keys of one run share: the format, fib's build, the Python front-end's identity, the
// dataset root and the enabled categories. A null `store` caches nothing.
struct DatasetCache {
  ResultCache* store = nullptr;
  std::string key_prefix;
  std::int64_t run_start_ns = 0; // wall clock, for the digest memo's racy-file rule
  std::shared_ptr<BlobFingerprints> blobs;
  std::shared_ptr<RememberedDigests> digests = std::make_shared<RememberedDigests>();
};

enum class UsesWorker { no, yes };

// The cache of a run: none when `store` is null or disabled, the front-end's identity is empty
// (its answers may not be kept), or the run uses the reference worker (its results depend on
// more than the files: the installed torch, the device).
DatasetCache dataset_cache(ResultCache* store, const std::string& python_identity,
                           const std::filesystem::path& root,
                           const std::vector<std::string>& enabled_checks, GpuChecks gpu,
                           UsesWorker uses_worker);

// One file of a job: the digest of its bytes and, once read, its text (or its read error).
struct JobFile {
  std::filesystem::path path;
  std::optional<Sha256Digest> digest; // from the digest memo, or of the text
  std::optional<Expected<std::string>> text;
  std::optional<FileStatus> status; // of the file as it was read (TextFile::status)
};

struct JobFiles {
  JobFile definition;
  std::optional<JobFile> workload;
  std::vector<JobFile> solutions;
  std::vector<JobFile> traces;
};

// The job's files. With a cache, a file whose stat() fingerprint (device, inode, mode, size,
// modification and status-change times) is in the digest memo is not read: its digest comes from
// the memo. Every other file is read (and, with a cache, hashed).
JobFiles probe_job_files(const DatasetCache& cache, const DefinitionJob& job);

// The job's files with the digests the memo remembers, none of them read; nullopt when the memo
// lacks one of them (or there is no cache).
std::optional<JobFiles> remembered_job_files(const DatasetCache& cache, const DefinitionJob& job);

// Reads the files probe_job_files did not read, and hashes them (with a cache): after this every
// file has its text, and every digest is of the bytes actually read.
void read_job_files(const DatasetCache& cache, JobFiles& files);

// Keeps in the digest memo the digests of the files read, except those changed in the two
// seconds before the run started (a later change within the file system's timestamp granularity
// could keep the fingerprint: such files are hashed again next time, as git does).
void remember_digests(const DatasetCache& cache, const JobFiles& files);

// The digest memo by itself: the digest remembered for `path` as it is now (its stat()
// fingerprint; nullopt at once, without a stat(), when the store holds no entries at all), and
// remembering the digest of bytes just read from it under `read_status`, the status the read
// took before its first byte (TextFile::status), else under a stat() made now. Not for a file
// changed in the two seconds before `run_start_ns`: false then, and nothing is remembered.
std::optional<Sha256Digest> remembered_digest(const ResultCache& store,
                                              const std::filesystem::path& path);
bool remember_digest(ResultCache& store, std::int64_t run_start_ns,
                     const std::filesystem::path& path, const Sha256Digest& digest,
                     const std::optional<FileStatus>& read_status);
// The wall clock now, in nanoseconds (a run's start for remember_digest).
std::int64_t wall_clock_ns();

// What the look decides of a file whose bytes are `text` when it takes it in `role`: a sign only
// when the text is within the look's size limit, parses, and shows it. The same answer as the
// look's own for the same bytes.
bool shows_old_schema(const std::string& text, const std::filesystem::path& file,
                      OldSchemaRole role);

// Keeps `sign` under the digest of the file's bytes, where the look of a later run finds it (as
// the look keeps the signs of the files it reads).
void keep_old_schema_sign(ResultCache& store, const Sha256Digest& digest, OldSchemaRole role,
                          bool sign);

// The old-schema look's answers for the job's definition and solution files, from the bytes read
// for it (the look after the chunks then need not read them again), onto job.signed_files; each
// is also kept in the cache as the look keeps the answers it finds (keep_old_schema_sign).
void sign_for_old_schema(DefinitionJob& job, const JobFiles& files, const DatasetCache& cache);

// find_old_schema_signs (fib/validate/old_schema.hpp) taking the memo's answers through the run's
// `digests`, which the definitions' look-ups share, and listing directories through `listings`,
// which the scan of the same tree shares: list_old_schema_candidates, then look_at_old_schema.
OldSchemaSigns find_old_schema_signs(const std::filesystem::path& root, ResultCache* store,
                                     RememberedDigests& digests, DirectoryListings& listings);

// The files the look inspects: the .json and .jsonl files below `root` (in path order).
std::vector<std::filesystem::path> list_old_schema_candidates(const std::filesystem::path& root,
                                                              DirectoryListings& listings);

// The signs of the old schema those `files` show. A file answered in `signed_files` (its path
// and role) is not read again.
OldSchemaSigns look_at_old_schema(const std::filesystem::path& root,
                                  const std::vector<std::filesystem::path>& files,
                                  ResultCache* store, RememberedDigests& digests,
                                  const SignedFiles* signed_files = nullptr);

// The key of a job's report: the prefix, then each file's role, path and digest (or read error),
// and the definition's duplicate-name state.
Sha256Digest job_cache_key(const DatasetCache& cache, const DefinitionJob& job,
                           const JobFiles& files);

// Tries the cache: on a hit whose blobs are unchanged, sets the job's report, from_cache and
// definition_parsed and returns true.
bool take_cached_report(const DatasetCache& cache, DefinitionJob& job);

// The blobs the job's workload and trace lines name (root / path, sorted, once each), with
// their fingerprints as the run first took them (BlobFingerprints). For a job that was parsed,
// before it is checked.
std::vector<BlobFingerprint> blob_fingerprints(const DatasetCache& cache, const DefinitionJob& job,
                                               const std::filesystem::path& root);

// Keeps the job's report under its key with the fingerprints of its blobs (`job.blobs`), when the
// job has a key.
void store_report(const DatasetCache& cache, const DefinitionJob& job);

} // namespace fib::dataset_checks
