#include "fib/validate/dataset.hpp"

#include <fib/base/codes.hpp>

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

struct Tree {
  std::string_view name;
  std::string_view extension;
  std::size_t depth;
};

constexpr std::array<Tree, 4> k_trees = {{{"definitions", ".json", 2},
                                          {"workloads", ".jsonl", 2},
                                          {"solutions", ".json", 4},
                                          {"traces", ".jsonl", 3}}};

// Files of one tree that match its pattern, sorted; everything else goes to `ignored`.
std::vector<std::vector<std::string>> walk_tree(const std::filesystem::path& root, const Tree& tree,
                                                std::vector<IgnoredFile>& ignored) {
  std::vector<std::vector<std::string>> found;
  const std::filesystem::path base = root / tree.name;
  std::error_code ec;
  if (!std::filesystem::is_directory(base, ec)) {
    return found;
  }
  std::vector<std::filesystem::path> entries;
  std::filesystem::recursive_directory_iterator it(
      base, std::filesystem::directory_options::skip_permission_denied, ec);
  for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) {
    ignored.push_back({base, fmt::format("could not be listed completely: {}", ec.message())});
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& entry : entries) {
    const std::filesystem::path relative = entry.lexically_relative(base);
    std::vector<std::string> parts;
    for (const auto& part : relative) {
      parts.push_back(part.string());
    }
    std::error_code type_ec;
    const bool is_directory = std::filesystem::is_directory(entry, type_ec);
    // Like Python's rglob, the pattern matches directories named *.json too.
    if (!entry.filename().string().ends_with(tree.extension)) {
      if (!is_directory) {
        ignored.push_back({root / tree.name / relative,
                           fmt::format("not a {} file, so no check reads it", tree.extension)});
      }
      continue;
    }
    if (parts.size() != tree.depth) {
      if (!is_directory) {
        ignored.push_back({root / tree.name / relative,
                           fmt::format("at the wrong depth: {}/ files must be {} levels down",
                                       tree.name, tree.depth)});
      }
      continue;
    }
    found.push_back(std::move(parts));
  }
  return found;
}

std::string stem_of(const std::string& file_name) {
  return std::filesystem::path(file_name).stem().string();
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

DatasetScan scan_dataset(const std::filesystem::path& root) {
  DatasetScan scan;
  for (const auto& parts : walk_tree(root, k_trees[0], scan.ignored)) {
    ScannedFile file{
        root / "definitions" / parts[0] / parts[1], parts[0], stem_of(parts[1]), {}, {}};
    DefinitionFile entry{file, std::nullopt};
    if (auto it = scan.definitions.find(file.name); it != scan.definitions.end()) {
      entry.duplicate_error = fmt::format("duplicate definition name: {} and {}",
                                          it->second.file.path.string(), file.path.string());
      it->second = std::move(entry);
    } else {
      scan.definitions.emplace(file.name, std::move(entry));
    }
  }
  for (const auto& parts : walk_tree(root, k_trees[1], scan.ignored)) {
    ScannedFile file{root / "workloads" / parts[0] / parts[1], parts[0], stem_of(parts[1]), {}, {}};
    if (auto it = scan.workloads.find(file.name); it != scan.workloads.end()) {
      scan.shadowed.push_back(std::move(it->second));
      it->second = std::move(file);
    } else {
      scan.workloads.emplace(file.name, std::move(file));
    }
  }
  for (const auto& parts : walk_tree(root, k_trees[2], scan.ignored)) {
    scan.solutions.push_back({root / "solutions" / parts[0] / parts[1] / parts[2] / parts[3],
                              parts[1], stem_of(parts[3]), parts[0], parts[2]});
  }
  for (const auto& parts : walk_tree(root, k_trees[3], scan.ignored)) {
    ScannedFile file{root / "traces" / parts[0] / parts[1] / parts[2],
                     parts[1],
                     stem_of(parts[2]),
                     parts[0],
                     {}};
    const auto key = std::make_pair(file.author, file.name);
    if (auto it = scan.traces.find(key); it != scan.traces.end()) {
      scan.shadowed.push_back(std::move(it->second));
      it->second = std::move(file);
    } else {
      scan.traces.emplace(key, std::move(file));
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
