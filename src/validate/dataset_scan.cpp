#include "fib/validate/dataset.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/dataset_layout.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <set>
#include <system_error>

namespace fib {
namespace {

constexpr std::array<std::string_view, 7> k_valid_checks = {
    "layout", "definition", "workload", "solution", "trace", "baseline", "benchmark"};

// How `fib validate` reports an entry the old tool's scan silently ignored.
IgnoredFile ignored_file(const SkippedEntry& entry, const TreeLayout& layout) {
  if (entry.reason == SkipReason::wrong_depth) {
    return {entry.path, fmt::format("at the wrong depth: {}/ files must be {} levels down",
                                    layout.directory, layout.depth)};
  }
  return {entry.path, fmt::format("not a {} file, so no check reads it", layout.extension)};
}

// The entries of one tree as the old tool's validator finds them; everything else goes to
// `ignored`.
std::vector<ScannedFile> scan_for_validation(const std::filesystem::path& root, DatasetTree tree,
                                             DirectoryListings* listings, DatasetScan& out) {
  TreeScan scan = scan_tree(root, tree, ScanMode::validator, listings);
  for (const ListingFailure& failure : scan.failures) {
    Diagnostic d = make_diagnostic(
        codes::k_io_read, fmt::format("cannot list the directory: {}", failure.error.message()));
    d.file = failure.directory;
    out.unlisted.push_back(std::move(d));
  }
  for (const SkippedEntry& entry : scan.skipped) {
    out.ignored.push_back(ignored_file(entry, layout_of(tree)));
  }
  std::vector<ScannedFile> files;
  files.reserve(scan.entries.size());
  for (LayoutEntry& entry : scan.entries) {
    LayoutKeys keys = layout_keys(tree, entry.components);
    files.push_back({std::move(entry.path), std::move(keys.op_type), std::move(keys.name),
                     std::move(keys.author), std::move(keys.definition)});
  }
  return files;
}

std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

} // namespace

std::filesystem::path normalize_root(const std::filesystem::path& root) {
  const std::string text = root.string();
  std::filesystem::path out;
  if (!text.empty() && text.front() == '/') {
    out = "/";
  }
  for (const auto& part : root) {
    const std::string p = part.string();
    if (p.empty() || p == "." || p == "/") {
      continue;
    }
    out /= part;
  }
  return out.empty() ? std::filesystem::path(".") : out;
}

DatasetScan scan_dataset(const std::filesystem::path& root, DirectoryListings* listings) {
  DatasetScan scan;
  for (ScannedFile& file : scan_for_validation(root, DatasetTree::definitions, listings, scan)) {
    if (auto it = scan.definitions.find(file.name); it != scan.definitions.end()) {
      std::string duplicate = fmt::format("duplicate definition name: {} and {}",
                                          it->second.file.path.string(), file.path.string());
      it->second = DefinitionFile{std::move(file), std::move(duplicate)};
    } else {
      std::string name = file.name;
      scan.definitions.emplace(std::move(name), DefinitionFile{std::move(file), std::nullopt});
    }
  }
  for (ScannedFile& file : scan_for_validation(root, DatasetTree::workloads, listings, scan)) {
    if (auto it = scan.workloads.find(file.name); it != scan.workloads.end()) {
      scan.shadowed.push_back(std::move(it->second));
      it->second = std::move(file);
    } else {
      std::string name = file.name;
      scan.workloads.emplace(std::move(name), std::move(file));
    }
  }
  scan.solutions = scan_for_validation(root, DatasetTree::solutions, listings, scan);
  for (ScannedFile& file : scan_for_validation(root, DatasetTree::traces, listings, scan)) {
    auto key = std::make_pair(file.author, file.name);
    if (auto it = scan.traces.find(key); it != scan.traces.end()) {
      scan.shadowed.push_back(std::move(it->second));
      it->second = std::move(file);
    } else {
      scan.traces.emplace(std::move(key), std::move(file));
    }
  }
  return scan;
}

bool shard_owns(const Shard& shard, std::string_view definition_name) {
  if (shard.count <= 1) {
    return true;
  }
  return fnv1a64(definition_name) % shard.count == shard.index - 1;
}

Expected<std::vector<std::string>> resolve_checks(const std::vector<std::string>& requested,
                                                  GpuChecks gpu) {
  std::vector<std::string> checks;
  if (requested.empty()) {
    for (const std::string_view c : k_valid_checks) {
      if (gpu == GpuChecks::disabled && c == "benchmark") {
        continue;
      }
      checks.emplace_back(c);
    }
    return checks;
  }
  for (const std::string& c : requested) {
    if (std::find(k_valid_checks.begin(), k_valid_checks.end(), c) == k_valid_checks.end()) {
      std::vector<std::string> quoted;
      for (const std::string_view v : k_valid_checks) {
        quoted.push_back(fmt::format("'{}'", v));
      }
      return unexpected(
          make_diagnostic(codes::k_usage, fmt::format("unknown check '{}', valid: [{}]", c,
                                                      fmt::join(quoted, ", "))));
    }
    if (gpu == GpuChecks::disabled && c == "benchmark") {
      continue;
    }
    checks.push_back(c);
  }
  return checks;
}

DatasetReport merge_reports(const std::vector<DatasetReport>& reports) {
  DatasetReport merged;
  if (reports.empty()) {
    return merged;
  }
  merged.config = reports.front().config;
  std::set<std::string> filters(merged.config.definitions.begin(), merged.config.definitions.end());
  std::set<std::pair<int, std::string>> seen;
  for (const DatasetReport& report : reports) {
    for (const std::string& d : report.config.definitions) {
      if (filters.insert(d).second) {
        merged.config.definitions.push_back(d);
      }
    }
    for (const auto& [name, definition] : report.definitions) {
      merged.definitions.insert_or_assign(name, definition);
    }
    for (const auto& [name, file] : report.definition_files) {
      merged.definition_files.insert_or_assign(name, file);
    }
    if (report.dataset) {
      if (!merged.dataset) {
        merged.dataset = CheckResult{};
      }
      for (const CheckMessage& m : report.dataset->messages) {
        if (seen.emplace(static_cast<int>(m.level), m.message).second) {
          merged.dataset->add(m);
        }
      }
    }
  }
  return merged;
}

} // namespace fib
