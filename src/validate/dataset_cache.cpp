// The result cache in dataset validation (see dataset_cache.hpp). A value is: the format byte,
// whether the definition file parsed, the blob fingerprints, then the report
// (report_codec.hpp).

#include "validate/dataset_cache.hpp"

#include "util/byte_codec.hpp"
#include "validate/report_codec.hpp"

#include <fib/util/build_identity.hpp>

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
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

void add_file(Sha256& hash, Role role, const std::filesystem::path& path,
              const Expected<std::string>& text) {
  detail::ByteWriter head;
  head.u8(static_cast<std::uint8_t>(role));
  head.u8(text ? 1 : 0);
  hash.update(head.bytes());
  add_field(hash, path.native());
  if (text) {
    add_field(hash, *text);
  } else {
    add_field(hash, text.error().code);
    add_field(hash, text.error().message);
  }
}

// What stat() says about `path`: identity, size and both times, or the errno it failed with.
std::string fingerprint(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return fmt::format("error {}", errno);
  }
  return fmt::format("{} {} {} {} {}.{} {}.{}", st.st_dev, st.st_ino, st.st_mode, st.st_size,
                     st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

void collect_blob_paths(const LoadedTraceFile* file, const std::filesystem::path& root,
                        std::set<std::string>& paths) {
  if (file == nullptr || !file->parsed) {
    return;
  }
  for (const TraceLine& line : file->lines) {
    for (const auto& [name, spec] : line.trace.workload.inputs) {
      if (const auto* blob = std::get_if<SafetensorsInput>(&spec)) {
        paths.insert((root / blob->path).native());
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
  prefix.str("fib dataset definition report v1");
  prefix.str(build_identity());
  prefix.str(python_identity);
  prefix.str(root.native());
  prefix.u32(static_cast<std::uint32_t>(enabled_checks.size()));
  for (const std::string& check : enabled_checks) {
    prefix.str(check);
  }
  prefix.u8(gpu == GpuChecks::enabled ? 1 : 0);
  return DatasetCache{store, prefix.take()};
}

JobTexts read_job_texts(const DefinitionJob& job) {
  JobTexts texts{read_text_file(job.definition->entry->file.path), std::nullopt, {}, {}};
  if (job.workload != nullptr) {
    texts.workload = read_text_file(job.workload->file->path);
  }
  for (const LoadedSolution* s : job.solutions) {
    texts.solutions.push_back(read_text_file(s->file->path));
  }
  for (const LoadedTraceFile* t : job.traces) {
    texts.traces.push_back(read_text_file(t->file->path));
  }
  return texts;
}

Sha256Digest job_cache_key(const DatasetCache& cache, const DefinitionJob& job,
                           const JobTexts& texts) {
  Sha256 hash;
  add_field(hash, cache.key_prefix);
  add_field(hash, job.name);
  add_file(hash, Role::definition, job.definition->entry->file.path, texts.definition);
  if (job.workload != nullptr && texts.workload) {
    add_file(hash, Role::workload, job.workload->file->path, *texts.workload);
  }
  for (std::size_t i = 0; i < job.solutions.size(); ++i) {
    add_file(hash, Role::solution, job.solutions[i]->file->path, texts.solutions[i]);
  }
  for (std::size_t i = 0; i < job.traces.size(); ++i) {
    add_file(hash, Role::trace, job.traces[i]->file->path, texts.traces[i]);
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
    if (!in.ok() || fingerprint(path) != recorded) {
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

std::vector<BlobFingerprint> blob_fingerprints(const DefinitionJob& job,
                                               const std::filesystem::path& root) {
  std::set<std::string> paths;
  collect_blob_paths(job.workload, root, paths);
  for (const LoadedTraceFile* t : job.traces) {
    collect_blob_paths(t, root, paths);
  }
  std::vector<BlobFingerprint> out;
  out.reserve(paths.size());
  for (const std::string& path : paths) {
    out.push_back(BlobFingerprint{path, fingerprint(path)});
  }
  return out;
}

void store_report(const DatasetCache& cache, const DefinitionJob& job,
                  const std::filesystem::path& root) {
  if (cache.store == nullptr || !job.cache_key || job.from_cache) {
    return;
  }
  if (blob_fingerprints(job, root) != job.blobs) {
    return; // a blob changed while the checks read it
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
