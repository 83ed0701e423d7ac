// Shard records, and whether a set of shard reports is the complete set of one run.

#include <fib/base/codes.hpp>
#include <fib/util/sha256.hpp>
#include <fib/validate/dataset.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

namespace fib {
namespace {

constexpr std::size_t k_fingerprint_digits = 16;
constexpr std::size_t k_missing_named = 20; // missing shard indices named one by one

Diagnostic shard_problem(std::string_view code, PartialMerge mode, std::string message,
                         const std::filesystem::path& file) {
  Diagnostic d = make_diagnostic(code, std::move(message));
  d.file = file;
  if (mode == PartialMerge::allowed) {
    d.severity = Severity::warning;
  } else {
    d.hint = "--allow-partial merges them anyway (the merged report then says what is missing)";
  }
  return d;
}

std::string describe_config(const ReportConfig& config) {
  return fmt::format("checks [{}], disable_gpu {}, op_types [{}], definitions [{}]",
                     fmt::join(config.checks, ", "), config.disable_gpu ? "true" : "false",
                     fmt::join(config.op_types, ", "), fmt::join(config.definitions, ", "));
}

// Why `record` and `config` (of `file`) are not of the run `reference` is a shard of, or "".
std::string foreign_reason(const ShardRecord& record, const ReportConfig& config,
                           const ShardRecord& reference, const ReportConfig& reference_config,
                           const std::filesystem::path& reference_file) {
  if (record.count != reference.count) {
    return fmt::format("it is shard {}/{}, and {} is of {} shards", record.index, record.count,
                       reference_file.string(), reference.count);
  }
  if (record.dataset_definitions != reference.dataset_definitions ||
      record.dataset_fingerprint != reference.dataset_fingerprint) {
    return fmt::format("it is of another dataset: {} definitions (fingerprint {}), and {} is of "
                       "{} definitions (fingerprint {})",
                       record.dataset_definitions, record.dataset_fingerprint,
                       reference_file.string(), reference.dataset_definitions,
                       reference.dataset_fingerprint);
  }
  if (record.fib_version != reference.fib_version) {
    return fmt::format("it was written by fib {}, and {} by fib {}", record.fib_version,
                       reference_file.string(), reference.fib_version);
  }
  if (config.checks != reference_config.checks ||
      config.disable_gpu != reference_config.disable_gpu ||
      config.op_types != reference_config.op_types ||
      config.definitions != reference_config.definitions) {
    return fmt::format("it ran with {}, and {} with {}", describe_config(config),
                       reference_file.string(), describe_config(reference_config));
  }
  return {};
}

} // namespace

ShardRecord shard_record(const Shard& shard, const DatasetScan& scan) {
  Sha256 hash;
  for (const auto& [name, file] : scan.definitions) {
    hash.update(name);
    hash.update("\n");
  }
  return ShardRecord{shard.index, shard.count, scan.definitions.size(),
                     to_hex(hash.finish()).substr(0, k_fingerprint_digits), FIB_VERSION};
}

std::vector<Diagnostic> check_shard_set(const std::vector<DatasetReport>& reports,
                                        const std::vector<std::filesystem::path>& files,
                                        PartialMerge mode) {
  std::vector<Diagnostic> problems;
  std::size_t reference = reports.size();
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (reports[i].shard) {
      reference = i;
      break;
    }
  }
  const auto file_of = [&](std::size_t i) {
    return i < files.size() ? files[i] : std::filesystem::path();
  };
  std::map<std::size_t, std::size_t> seen; // shard index → report
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const auto& record = reports[i].shard;
    if (!record) {
      problems.push_back(shard_problem(
          codes::k_shard_foreign, mode,
          fmt::format("{} records no shard: it was written by a run without --shard, by fib "
                      "before shard records, or by flashinfer-bench",
                      file_of(i).string()),
          file_of(i)));
      continue;
    }
    if (i != reference) {
      if (const std::string reason =
              foreign_reason(*record, reports[i].config, *reports[reference].shard,
                             reports[reference].config, file_of(reference));
          !reason.empty()) {
        problems.push_back(shard_problem(
            codes::k_shard_foreign, mode,
            fmt::format("{} is not a shard of the same run: {}", file_of(i).string(), reason),
            file_of(i)));
        continue;
      }
    }
    if (const auto [it, inserted] = seen.emplace(record->index, i); !inserted) {
      problems.push_back(
          shard_problem(codes::k_shard_duplicate, mode,
                        fmt::format("{} and {} are both shard {}/{}", file_of(it->second).string(),
                                    file_of(i).string(), record->index, record->count),
                        file_of(i)));
    }
  }
  if (reference < reports.size()) {
    // Every index in `seen` is at most `count` (same count as the reference, K <= N), so the
    // missing ones number count - seen.size(); the first few are named (a hostile N of 10^18
    // costs nothing).
    const std::size_t count = reports[reference].shard->count;
    const std::size_t missing_count = count - seen.size();
    std::vector<std::size_t> named;
    for (std::size_t k = 1; k <= count && named.size() < k_missing_named; ++k) {
      if (!seen.contains(k)) {
        named.push_back(k);
      }
    }
    if (missing_count > 0) {
      std::string which = fmt::format("{}", fmt::join(named, ", "));
      if (missing_count > named.size()) {
        which += fmt::format(" and {} more", missing_count - named.size());
      }
      problems.push_back(
          shard_problem(codes::k_shard_missing, mode,
                        fmt::format("shard{} {} of {} {} missing", missing_count == 1 ? "" : "s",
                                    which, count, missing_count == 1 ? "is" : "are"),
                        {}));
    }
  }
  return problems;
}

} // namespace fib
