// Where a dataset report goes (--outputs) and the names of its files.

#include <fib/base/codes.hpp>
#include <fib/validate/report.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace fib {

Expected<ReportTargets> parse_report_targets(std::string_view csv) {
  if (csv.empty()) {
    return ReportTargets{};
  }
  ReportTargets targets{false, false, false};
  std::size_t start = 0;
  while (start <= csv.size()) {
    const std::size_t end = std::min(csv.find(',', start), csv.size());
    const std::string_view item = csv.substr(start, end - start);
    if (item == "stdout") {
      targets.stdout_text = true;
    } else if (item == "json") {
      targets.json_file = true;
    } else if (item == "text") {
      targets.text_file = true;
    } else {
      return unexpected(make_diagnostic(
          codes::k_usage,
          fmt::format("unknown output target '{}', valid: stdout, json, text", item)));
    }
    start = end + 1;
  }
  return targets;
}

ReportFiles report_files(const std::filesystem::path& folder, std::string_view timestamp,
                         unsigned sequence) {
  const std::string stem = sequence <= 1 ? fmt::format("report-{}", timestamp)
                                         : fmt::format("report-{}-{}", timestamp, sequence);
  return {folder / (stem + ".json"), folder / (stem + ".txt")};
}

} // namespace fib
