#include "validate/chunk_plan.hpp"

#include "util/parallel_for.hpp"

#include <filesystem>
#include <map>
#include <string_view>
#include <system_error>

namespace fib::dataset_checks {

namespace {

std::uintmax_t file_bytes(const std::filesystem::path& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

} // namespace

std::vector<TargetFiles> gather_files(const std::vector<std::string>& targets,
                                      const DatasetScan& scan) {
  std::vector<TargetFiles> files(targets.size());
  std::map<std::string_view, std::size_t> index;
  const auto add = [&](const std::string& name, const ScannedFile& file, auto member) {
    if (auto it = index.find(name); it != index.end()) {
      member(files[it->second], &file);
    }
  };
  for (std::size_t i = 0; i < targets.size(); ++i) {
    index.emplace(targets[i], i);
    files[i].definition = &scan.definitions.at(targets[i]);
  }
  for (const auto& [name, file] : scan.workloads) {
    add(name, file, [](TargetFiles& f, const ScannedFile* s) { f.workload = s; });
  }
  for (const ScannedFile& file : scan.solutions) {
    add(file.definition, file,
        [](TargetFiles& f, const ScannedFile* s) { f.solutions.push_back(s); });
  }
  for (const auto& [key, file] : scan.traces) {
    add(file.name, file, [](TargetFiles& f, const ScannedFile* s) { f.traces.push_back(s); });
  }
  return files;
}

void measure_bytes(std::vector<TargetFiles>& files) {
  detail::parallel_for(files.size(), [&](std::size_t i) {
    TargetFiles& f = files[i];
    f.bytes = file_bytes(f.definition->file.path);
    if (f.workload != nullptr) {
      f.bytes += file_bytes(f.workload->path);
    }
    for (const ScannedFile* s : f.solutions) {
      f.bytes += file_bytes(s->path);
    }
    for (const ScannedFile* t : f.traces) {
      f.bytes += file_bytes(t->path);
    }
  });
}

std::vector<ChunkRange> plan_chunks(const std::vector<TargetFiles>& files, ChunkLimits limits) {
  std::vector<ChunkRange> chunks;
  for (std::size_t begin = 0; begin < files.size();) {
    std::size_t end = begin;
    std::uintmax_t bytes = 0;
    while (end < files.size() && end - begin < limits.definitions &&
           (end == begin || bytes + files[end].bytes <= limits.bytes)) {
      bytes += files[end].bytes;
      ++end;
    }
    chunks.push_back({begin, end});
    begin = end;
  }
  return chunks;
}

} // namespace fib::dataset_checks
