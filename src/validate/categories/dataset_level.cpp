// fib's dataset-level section: the files the old tool never reports, because no definition's
// report reaches them.

#include "validate/dataset_job.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

namespace fib::dataset_checks {

CheckResult check_dataset_level(const DatasetScan& scan, const std::filesystem::path& root) {
  CheckResult r;
  const auto in = [&](const std::filesystem::path& path) {
    return MessageLocation{path.lexically_relative(root).generic_string(), {}, 0};
  };
  for (const auto& [name, file] : scan.workloads) {
    if (!scan.definitions.contains(name)) {
      r.add(codes::k_dataset_orphan,
            fmt::format("{}: workload file for '{}', but there is no definitions/*/{}.json",
                        file.path.string(), name, name))
          .where = in(file.path);
    }
  }
  for (const ScannedFile& s : scan.solutions) {
    if (!scan.definitions.contains(s.definition)) {
      r.add(codes::k_dataset_orphan,
            fmt::format("{}: solution for '{}', but there is no definitions/*/{}.json",
                        s.path.string(), s.definition, s.definition))
          .where = in(s.path);
    }
  }
  for (const auto& [key, file] : scan.traces) {
    if (!scan.definitions.contains(file.name)) {
      r.add(codes::k_dataset_orphan,
            fmt::format("{}: trace file for '{}', but there is no definitions/*/{}.json",
                        file.path.string(), file.name, file.name))
          .where = in(file.path);
    }
  }
  for (const ScannedFile& f : scan.shadowed) {
    r.add(codes::k_dataset_shadowed,
          fmt::format("{}: ignored, a later file with the same name replaces it", f.path.string()))
        .where = in(f.path);
  }
  for (const IgnoredFile& f : scan.ignored) {
    const bool json_like = f.path.extension() == ".json" || f.path.extension() == ".jsonl";
    r.add(json_like ? codes::k_dataset_misplaced : codes::k_dataset_unread_file,
          fmt::format("{}: {}", f.path.string(), f.reason))
        .where = in(f.path);
  }
  return r;
}

} // namespace fib::dataset_checks
