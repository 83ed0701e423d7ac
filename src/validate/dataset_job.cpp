// Helpers the dataset categories share (see dataset_job.hpp).

#include "validate/dataset_job.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/path_safety.hpp>

#include <algorithm>

#include <sys/stat.h>

namespace fib::dataset_checks {

bool BlobPresence::exists(const std::string& full) {
  return m_known.get(full, [&] {
    struct stat info {};
    return ::stat(full.c_str(), &info) == 0;
  });
}

std::string fib_message(std::string_view text) {
  return "[fib] " + std::string(text);
}

std::string excerpt(std::string_view text) {
  constexpr std::size_t k_max = 80;
  if (text.size() <= k_max) {
    return std::string(text);
  }
  std::size_t cut = k_max - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0u) == 0x80u) {
    --cut;
  }
  return std::string(text.substr(0, cut)) + "...";
}

bool points_outside(const std::string& blob_path) {
  // On POSIX a path is absolute when it starts with '/'.
  return (!blob_path.empty() && blob_path.front() == '/') || has_parent_segment(blob_path);
}

MessageLocation location_in(const ScannedFile& file, const std::filesystem::path& root, int line,
                            std::string pointer) {
  return MessageLocation{file.path.lexically_relative(root).generic_string(), std::move(pointer),
                         line > 0 ? static_cast<std::uint32_t>(line) : 0};
}

void locate_unplaced(CheckResult& result, const ScannedFile& file,
                     const std::filesystem::path& root) {
  std::string relative;
  for (CheckMessage& message : result.messages) {
    if (message.where.file.empty()) {
      if (relative.empty()) {
        relative = file.path.lexically_relative(root).generic_string();
      }
      message.where.file = relative;
    }
  }
}

bool is_worker_unusable(const Diagnostic& d) {
  return d.code == codes::k_worker_unavailable || d.code == codes::k_worker_protocol ||
         d.code == codes::k_sandbox_unavailable;
}

const Expected<SafetensorsHeader>& cached_header(HeaderCache& cache,
                                                 const std::filesystem::path& full) {
  auto it = cache.find(full);
  if (it == cache.end()) {
    it = cache.emplace(full, read_safetensors_header(full)).first;
  }
  return it->second;
}

std::set<std::string> workload_uuids(const DefinitionJob& job) {
  std::set<std::string> uuids;
  if (job.workload != nullptr && job.workload->parsed) {
    for (const TraceLine& line : job.workload->lines) {
      uuids.insert(line.trace.workload.uuid);
    }
  }
  return uuids;
}

std::set<std::string> parsed_solution_names(const DefinitionJob& job) {
  std::set<std::string> names;
  for (const LoadedSolution* s : job.solutions) {
    if (s->parsed) {
      names.insert(s->file->name);
    }
  }
  return names;
}

std::vector<const LoadedSolution*> baseline_solutions(const DefinitionJob& job) {
  std::vector<const LoadedSolution*> baselines;
  for (const LoadedSolution* s : job.solutions) {
    if (s->file->author == "baseline") {
      baselines.push_back(s);
    }
  }
  return baselines;
}

} // namespace fib::dataset_checks
