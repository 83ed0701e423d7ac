#include "report/report_text.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace fib::detail {

std::vector<std::string> selected_definitions(const TraceSet& set,
                                              const std::vector<std::string>& wanted,
                                              std::set<std::string, std::less<>>& seen) {
  std::vector<std::string> names;
  if (wanted.empty()) {
    for (const auto& [name, definition] : set.definitions) {
      names.push_back(name);
    }
    return names;
  }
  for (const std::string& name : std::set<std::string, std::less<>>(wanted.begin(), wanted.end())) {
    if (set.find_definition(name) != nullptr) {
      names.push_back(name);
      seen.insert(name);
    }
  }
  return names;
}

void report_unknown_definitions(const std::vector<std::string>& wanted,
                                const std::set<std::string, std::less<>>& seen,
                                DiagnosticSink& sink) {
  std::set<std::string, std::less<>> reported;
  for (const std::string& name : wanted) {
    if (!seen.contains(name) && reported.insert(name).second) {
      sink.report(
          make_diagnostic(codes::k_score_unknown_definition,
                          fmt::format("definition \"{}\" is in none of the datasets", name)));
    }
  }
}

Json error_json(const std::optional<Diagnostic>& diagnostic) {
  if (!diagnostic) {
    return nullptr;
  }
  Json out = Json::object();
  out["code"] = diagnostic->code;
  out["message"] = diagnostic->message;
  return out;
}

Json statuses_json(const EvaluationCounts& statuses) {
  Json out = Json::object();
  for (const auto& [status, count] : statuses) {
    out[status] = count;
  }
  return out;
}

std::string percent(double rate) {
  return fmt::format("{:.1f}%", rate * 100.0);
}

std::string failures_text(const EvaluationCounts& statuses) {
  std::vector<std::pair<std::string, std::size_t>> failed;
  for (const auto& [status, count] : statuses) {
    if (status != "PASSED" && count > 0) {
      failed.emplace_back(status, count);
    }
  }
  std::stable_sort(failed.begin(), failed.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [status, count] : failed) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", count, status);
  }
  return out;
}

std::string render_table(const std::vector<std::vector<std::string>>& rows,
                         std::string_view indent) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t i = 0; i + 1 < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) {
        line += std::string(widths[i] - row[i].size() + 2, ' ');
      }
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    out += line + "\n";
  }
  return out;
}

} // namespace fib::detail
