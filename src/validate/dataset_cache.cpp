// The result cache in dataset validation (see dataset_cache.hpp). A value is: the format byte,
// whether the definition file parsed, the blob fingerprints, then the report
// (report_codec.hpp).

#include "validate/dataset_cache.hpp"

#include "util/byte_codec.hpp"
#include "util/strings.hpp"
#include "validate/report_codec.hpp"

#include <fib/io/file_fingerprint.hpp>
#include <fib/util/build_identity.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

namespace fib::dataset_checks {
namespace {

constexpr std::uint8_t k_value_format = 1;

enum class Role : std::uint8_t { definition = 1, workload, solution, trace, duplicate };

void add_field(Sha256& hash, std::string_view bytes) {
  detail::ByteWriter size;
  size.u64(bytes.size());
  hash.update(size.bytes()).update(bytes);
}

void collect_blob_paths(const LoadedTraceFile* file, const std::filesystem::path& root,
                        std::set<std::string>& paths) {
  if (file == nullptr || !file->parsed) {
    return;
  }
  for (const TraceLine& line : file->lines) {
    for (const auto& [name, spec] : line.trace.workload.inputs) {
      if (const auto* blob = std::get_if<SafetensorsInput>(&spec)) {
        paths.insert(detail::joined_path_text(root.native(), blob->path));
      }
    }
  }
}

} // namespace

DatasetCache dataset_cache(ResultCache* store, const std::string& python_identity,
                           const std::filesystem::path& root,
                           const std::vector<std::string>& enabled_checks, GpuChecks gpu,
                           UsesWorker uses_worker) {
  if (store == nullptr || !store->enabled() || python_identity.empty() ||
      uses_worker == UsesWorker::yes) {
    return {};
  }
  detail::ByteWriter prefix;
  prefix.str("fib dataset definition report v2");
  prefix.str(build_identity());
  prefix.str(python_identity);
  prefix.str(root.native());
  prefix.u32(static_cast<std::uint32_t>(enabled_checks.size()));
  for (const std::string& check : enabled_checks) {
    prefix.str(check);
  }
  prefix.u8(gpu == GpuChecks::enabled ? 1 : 0);
  return DatasetCache{store, prefix.take(), wall_clock_ns(), std::make_shared<BlobFingerprints>()};
}

namespace {

// Files changed this close before the run started are not remembered (see remember_digests).
constexpr std::int64_t k_racy_ns = std::int64_t{2'000'000'000};

struct FileStat {
  std::string fingerprint;     // empty when stat() failed
  std::int64_t changed_ns = 0; // the later of the modification and status-change times
};

FileStat file_stat_of(const FileStatus& st) {
  return FileStat{stat_fingerprint(st), std::max(st.modified_ns, st.changed_ns)};
}

FileStat stat_file(const std::filesystem::path& path) {
  const std::optional<FileStatus> st = file_status(path);
  return st ? file_stat_of(*st) : FileStat{};
}

// What stat() says about `path` (the fingerprint of stat_file), or the errno it failed with.
std::string fingerprint(const std::string& path) {
  if (const std::optional<FileStatus> st = file_status(path)) {
    return file_stat_of(*st).fingerprint;
  }
  return fmt::format("error {}", errno);
}

Sha256Digest memo_key(const std::filesystem::path& path, const std::string& fingerprint) {
  Sha256 hash;
  add_field(hash, "fib file digest v1");
  add_field(hash, path.native());
  add_field(hash, fingerprint);
  return hash.finish();
}

} // namespace

std::string BlobFingerprints::of(const std::string& path) {
  return m_taken.get(path, [&] { return fingerprint(path); });
}

std::optional<Sha256Digest> remembered_digest(const ResultCache& store,
                                              const std::filesystem::path& path) {
  if (!store.holds_entries()) {
    return std::nullopt; // nothing to find: not even the stat() of the key is needed
  }
  const FileStat st = stat_file(path);
  if (st.fingerprint.empty()) {
    return std::nullopt;
  }
  const auto stored = store.find(memo_key(path, st.fingerprint));
  Sha256Digest digest{};
  if (!stored || stored->size() != digest.size()) {
    return std::nullopt;
  }
  std::memcpy(digest.data(), stored->data(), digest.size());
  return digest;
}

std::optional<Sha256Digest> RememberedDigests::of(const ResultCache& store,
                                                  const std::filesystem::path& path) {
  if (!store.holds_entries()) {
    return std::nullopt; // no memo entry to make (each one is a path's copy in a new node)
  }
  return m_answers.get(path.native(), [&] { return remembered_digest(store, path); });
}

bool remember_digest(ResultCache& store, std::int64_t run_start_ns,
                     const std::filesystem::path& path, const Sha256Digest& digest,
                     const std::optional<FileStatus>& read_status) {
  const FileStat st = read_status ? file_stat_of(*read_status) : stat_file(path);
  if (st.fingerprint.empty() || st.changed_ns >= run_start_ns - k_racy_ns) {
    return false;
  }
  store.put(memo_key(path, st.fingerprint),
            std::string(reinterpret_cast<const char*>(digest.data()), digest.size()));
  return true;
}

std::int64_t wall_clock_ns() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
}

namespace {

void read_file(const DatasetCache& cache, JobFile& file) {
  TextFile read = read_text_file_with_status(file.path);
  file.text = std::move(read.text);
  file.status = read.status;
  file.digest = cache.store != nullptr && *file.text
                    ? std::optional<Sha256Digest>(sha256(**file.text))
                    : std::nullopt;
}

JobFile probe_file(const DatasetCache& cache, const std::filesystem::path& path) {
  JobFile file{path, std::nullopt, std::nullopt, std::nullopt};
  if (cache.store != nullptr) {
    file.digest = cache.digests->of(*cache.store, path);
  }
  if (!file.digest) {
    read_file(cache, file);
  }
  return file;
}

// The job's files, each from `look(path)` (a std::optional<JobFile>), in role order; nullopt as
// soon as one look finds nothing.
template <class Look> std::optional<JobFiles> job_files_of(const DefinitionJob& job, Look&& look) {
  std::optional<JobFile> definition = look(job.definition->entry->file.path);
  if (!definition) {
    return std::nullopt;
  }
  JobFiles files{std::move(*definition), std::nullopt, {}, {}};
  if (job.workload != nullptr) {
    files.workload = look(job.workload->file->path);
    if (!files.workload) {
      return std::nullopt;
    }
  }
  const auto add = [&](std::vector<JobFile>& to, const std::filesystem::path& path) {
    std::optional<JobFile> file = look(path);
    if (file) {
      to.push_back(std::move(*file));
    }
    return file.has_value();
  };
  for (const LoadedSolution* s : job.solutions) {
    if (!add(files.solutions, s->file->path)) {
      return std::nullopt;
    }
  }
  for (const LoadedTraceFile* t : job.traces) {
    if (!add(files.traces, t->file->path)) {
      return std::nullopt;
    }
  }
  return files;
}

template <class Files, class Visit> void for_each_file(Files& files, Visit&& visit) {
  visit(files.definition);
  if (files.workload) {
    visit(*files.workload);
  }
  for (auto& f : files.solutions) {
    visit(f);
  }
  for (auto& f : files.traces) {
    visit(f);
  }
}

void add_job_file(Sha256& hash, Role role, const JobFile& file) {
  detail::ByteWriter head;
  head.u8(static_cast<std::uint8_t>(role));
  head.u8(file.digest ? 1 : 0);
  hash.update(head.bytes());
  add_field(hash, file.path.native());
  if (file.digest) {
    hash.update(
        std::string_view(reinterpret_cast<const char*>(file.digest->data()), file.digest->size()));
  } else if (file.text && !*file.text) {
    add_field(hash, file.text->error().code);
    add_field(hash, file.text->error().message);
  }
}

} // namespace

JobFiles probe_job_files(const DatasetCache& cache, const DefinitionJob& job) {
  return *job_files_of(job, [&](const std::filesystem::path& path) {
    return std::optional(probe_file(cache, path));
  });
}

std::optional<JobFiles> remembered_job_files(const DatasetCache& cache, const DefinitionJob& job) {
  if (cache.store == nullptr) {
    return std::nullopt;
  }
  return job_files_of(job, [&](const std::filesystem::path& path) -> std::optional<JobFile> {
    auto digest = cache.digests->of(*cache.store, path);
    if (!digest) {
      return std::nullopt;
    }
    return JobFile{path, digest, std::nullopt, std::nullopt};
  });
}

void read_job_files(const DatasetCache& cache, JobFiles& files) {
  for_each_file(files, [&](JobFile& file) {
    if (!file.text) {
      read_file(cache, file);
    }
  });
}

void remember_digests(const DatasetCache& cache, const JobFiles& files) {
  if (cache.store == nullptr) {
    return;
  }
  for_each_file(files, [&](const JobFile& file) {
    if (!file.digest || !file.text || !*file.text) {
      return;
    }
    remember_digest(*cache.store, cache.run_start_ns, file.path, *file.digest, file.status);
  });
}

Sha256Digest job_cache_key(const DatasetCache& cache, const DefinitionJob& job,
                           const JobFiles& files) {
  Sha256 hash;
  add_field(hash, cache.key_prefix);
  add_field(hash, job.name);
  add_job_file(hash, Role::definition, files.definition);
  if (files.workload) {
    add_job_file(hash, Role::workload, *files.workload);
  }
  for (const JobFile& f : files.solutions) {
    add_job_file(hash, Role::solution, f);
  }
  for (const JobFile& f : files.traces) {
    add_job_file(hash, Role::trace, f);
  }
  detail::ByteWriter duplicate;
  duplicate.u8(static_cast<std::uint8_t>(Role::duplicate));
  hash.update(duplicate.bytes());
  add_field(hash, job.definition->entry->duplicate_error.value_or(std::string{}));
  return hash.finish();
}

bool take_cached_report(const DatasetCache& cache, DefinitionJob& job) {
  if (cache.store == nullptr || !job.cache_key) {
    return false;
  }
  const auto stored = cache.store->find(*job.cache_key);
  if (!stored) {
    return false;
  }
  detail::ByteReader in(*stored);
  const std::uint8_t format = in.u8();
  const std::uint8_t parsed = in.u8();
  const std::uint32_t blobs = in.u32();
  if (!in.ok() || format != k_value_format) {
    return false;
  }
  for (std::uint32_t i = 0; i < blobs; ++i) {
    const std::string path(in.str());
    const std::string_view recorded = in.str();
    if (!in.ok() || cache.blobs->of(path) != recorded) {
      return false;
    }
  }
  auto report = decode_definition_report(in);
  if (!report || !in.finished()) {
    return false;
  }
  job.report = std::move(*report);
  job.from_cache = true;
  job.definition_parsed = parsed != 0;
  return true;
}

std::vector<BlobFingerprint> blob_fingerprints(const DatasetCache& cache, const DefinitionJob& job,
                                               const std::filesystem::path& root) {
  std::set<std::string> paths;
  collect_blob_paths(job.workload, root, paths);
  for (const LoadedTraceFile* t : job.traces) {
    collect_blob_paths(t, root, paths);
  }
  std::vector<BlobFingerprint> out;
  out.reserve(paths.size());
  for (const std::string& path : paths) {
    out.push_back(BlobFingerprint{path, cache.blobs->of(path)});
  }
  return out;
}

void store_report(const DatasetCache& cache, const DefinitionJob& job) {
  if (cache.store == nullptr || !job.cache_key || job.from_cache) {
    return;
  }
  detail::ByteWriter out;
  out.u8(k_value_format);
  out.u8(job.definition_parsed ? 1 : 0);
  out.u32(static_cast<std::uint32_t>(job.blobs.size()));
  for (const BlobFingerprint& blob : job.blobs) {
    out.str(blob.path);
    out.str(blob.fingerprint);
  }
  encode_definition_report(job.report, out);
  cache.store->put(*job.cache_key, out.take());
}

} // namespace fib::dataset_checks
