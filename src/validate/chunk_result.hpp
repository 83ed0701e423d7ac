#pragma once
// What validating one chunk of target definitions gives, and its encoding: how a worker process
// of dataset validation hands it to the parent (validate_dataset). Private to src/validate.

#include "validate/dataset_job.hpp"

#include <fib/base/diagnostic.hpp>
#include <fib/util/sha256.hpp>
#include <fib/validate/report.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fib::dataset_checks {

// --- Interface ---

// What validating one chunk gives.
struct ChunkResult {
  std::vector<std::pair<std::string, DefinitionReport>> reports;
  std::size_t loaded = 0; // definitions whose file parsed
  // From a worker process: the cache entries it made and the cache packs it used.
  std::map<Sha256Digest, std::string> cache_entries;
  std::vector<std::size_t> used_packs;
  // The old-schema look's answers for the files its jobs read (sign_for_old_schema).
  std::vector<std::pair<std::string, SignedFile>> signed_files;
};

// A chunk's result and the environment diagnostics it gave, as a worker process sends them.
std::string encode_chunk(const ChunkResult& result, const DiagnosticList& environment);

// A chunk's result as decoded from a worker process's bytes: its cache entries are views into
// those bytes (the parent writes them through to the cache's new pack, never copying them).
struct DecodedChunk {
  ChunkResult result; // without cache entries
  std::vector<std::pair<Sha256Digest, std::string_view>> cache_entries;
};

// The chunk encode_chunk wrote, its environment diagnostics appended to `environment`; nullopt
// when the bytes are not such a chunk, whole (truncated, corrupt, an unknown role or sign).
std::optional<DecodedChunk> decode_chunk(std::string_view bytes,
                                         std::vector<Diagnostic>& environment);

} // namespace fib::dataset_checks
