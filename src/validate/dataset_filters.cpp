// The --op-types and --definitions values that select nothing.

#include <fib/base/codes.hpp>
#include <fib/util/closest_match.hpp>
#include <fib/validate/dataset.hpp>

#include <fmt/format.h>

#include <set>

namespace fib {
namespace {

void check_values(std::string_view flag, std::string_view what,
                  const std::vector<std::string>& values, const std::set<std::string>& known,
                  const std::filesystem::path& root, std::vector<Diagnostic>& out) {
  const std::vector<std::string> known_list(known.begin(), known.end());
  std::set<std::string_view> said;
  for (const std::string& value : values) {
    if (known.contains(value) || !said.insert(value).second) {
      continue;
    }
    std::string message =
        fmt::format("{}: '{}' matches no {} in {}", flag, value, what, root.string());
    if (const std::string close = closest_match(value, known_list); !close.empty()) {
      message += fmt::format("; did you mean '{}'?", close);
    }
    Diagnostic d = make_diagnostic(codes::k_filter_unmatched, std::move(message));
    d.hint = "--exit-zero checks what the other values match and exits 0, as flashinfer-bench did";
    out.push_back(std::move(d));
  }
}

} // namespace

std::vector<Diagnostic> unmatched_filters(const ValidateDatasetOptions& options,
                                          const DatasetScan& scan,
                                          const std::filesystem::path& root) {
  std::set<std::string> op_types;
  std::set<std::string> names;
  for (const auto& [name, entry] : scan.definitions) {
    op_types.insert(entry.file.op_type);
    names.insert(name);
  }
  std::vector<Diagnostic> out;
  check_values("--op-types", "op_type directory of definitions/", options.op_types, op_types, root,
               out);
  check_values("--definitions", "definition name", options.definitions, names, root, out);
  return out;
}

} // namespace fib
