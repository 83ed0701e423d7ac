#pragma once
// How validate_dataset cuts its target definitions into chunks: each target's files (pointers
// into the scan), their sizes on disk, and the chunks they make. Private to src/validate.

#include <fib/validate/dataset.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fib::dataset_checks {

// --- Interface ---

// The files one target definition needs (pointers into the scan).
struct TargetFiles {
  const DefinitionFile* definition = nullptr;
  const ScannedFile* workload = nullptr;
  std::vector<const ScannedFile*> solutions;
  std::vector<const ScannedFile*> traces;
  std::uintmax_t bytes = 0; // the files' total size on disk (0 for one that cannot be stat'ed)
};

// Where each target's files are (pointers into `scan`, which must outlive the result), in the old
// tool's order: solutions by path, traces by author. Every target names a definition of `scan`.
std::vector<TargetFiles> gather_files(const std::vector<std::string>& targets,
                                      const DatasetScan& scan);

// Sets each target's `bytes` (what the chunk plan needs; only for the targets that are loaded), on
// all cores (a stat() per file).
void measure_bytes(std::vector<TargetFiles>& files);

// Target definitions validated together (loaded, Python-checked and checked, then freed): at most
// `definitions` of them, and no more once their files reach `bytes`, so that large trace files do
// not pile up in one chunk. A chunk always holds at least one definition.
struct ChunkLimits {
  std::size_t definitions = 0;
  std::uintmax_t bytes = 0;
};
// In this process: 64 definitions, 4 MiB. Handed to worker processes: smaller, so that the last
// chunks do not leave the other processes idle.
constexpr ChunkLimits k_chunk_in_process{64, std::uintmax_t{4} << 20};
constexpr ChunkLimits k_chunk_forked{16, std::uintmax_t{1} << 20};

// Targets [begin, end).
struct ChunkRange {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// The chunks of the targets, in order (their `bytes` measured).
std::vector<ChunkRange> plan_chunks(const std::vector<TargetFiles>& files, ChunkLimits limits);

} // namespace fib::dataset_checks
