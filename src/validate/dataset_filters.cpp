// The target definitions the --op-types and --definitions filters select, and the values that
// select nothing.

#include <fib/base/codes.hpp>
#include <fib/util/closest_match.hpp>
#include <fib/validate/dataset.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace fib {
namespace {

// `known` is sorted and unique.
void check_values(std::string_view flag, std::string_view what,
                  const std::vector<std::string>& values, const std::vector<std::string>& known,
                  const std::filesystem::path& root, UnmatchedFilters mode,
                  std::vector<Diagnostic>& out) {
  std::set<std::string_view> said;
  for (const std::string& value : values) {
    if (std::binary_search(known.begin(), known.end(), value) || !said.insert(value).second) {
      continue;
    }
    std::string message =
        fmt::format("{}: '{}' matches no {} in {}", flag, value, what, root.string());
    if (const std::string close = closest_match(value, known); !close.empty()) {
      message += fmt::format("; did you mean '{}'?", close);
    }
    Diagnostic d = make_diagnostic(codes::k_filter_unmatched, std::move(message));
    if (mode == UnmatchedFilters::warned) {
      d.severity = Severity::warning;
    } else {
      d.hint =
          "--exit-zero checks what the other values match and exits 0, as flashinfer-bench did";
    }
    out.push_back(std::move(d));
  }
}

} // namespace

std::vector<std::string> select_targets(const ValidateDatasetOptions& options,
                                        const DatasetScan& scan) {
  const auto listed = [](const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
  };
  std::vector<std::string> targets;
  const bool filtered = !options.op_types.empty() || !options.definitions.empty();
  for (const auto& [name, entry] : scan.definitions) {
    const bool selected = !filtered || listed(options.op_types, entry.file.op_type) ||
                          listed(options.definitions, name);
    if (selected && (!options.shard || shard_owns(*options.shard, name))) {
      targets.push_back(name);
    }
  }
  return targets;
}

std::vector<Diagnostic> unmatched_filters(const ValidateDatasetOptions& options,
                                          const DatasetScan& scan,
                                          const std::filesystem::path& root) {
  std::vector<std::string> op_types;
  std::vector<std::string> names; // the scan's map keeps them sorted and unique
  for (const auto& [name, entry] : scan.definitions) {
    op_types.push_back(entry.file.op_type);
    names.push_back(name);
  }
  std::sort(op_types.begin(), op_types.end());
  op_types.erase(std::unique(op_types.begin(), op_types.end()), op_types.end());
  std::vector<Diagnostic> out;
  check_values("--op-types", "op_type directory of definitions/", options.op_types, op_types, root,
               options.unmatched_filters, out);
  check_values("--definitions", "definition name", options.definitions, names, root,
               options.unmatched_filters, out);
  return out;
}

} // namespace fib
