// Select, ignore, per-path ignores and severity overrides of validate's findings.

#include <fib/base/codes.hpp>
#include <fib/util/closest_match.hpp>
#include <fib/validate/finding_policy.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <fnmatch.h>
#include <system_error>
#include <type_traits>

namespace fib {
namespace {

// The length of `pattern` without a trailing dot ("definition." is "definition").
long specificity(std::string_view pattern) {
  return static_cast<long>(pattern.ends_with('.') ? pattern.size() - 1 : pattern.size());
}

// How specific a matching pattern is: its length (a longer prefix is more specific); -1 when none
// of `patterns` matches.
long best_match(const std::vector<std::string>& patterns, std::string_view code) {
  long best = -1;
  for (const std::string& pattern : patterns) {
    if (code_pattern_matches(pattern, code)) {
      best = std::max(best, specificity(pattern));
    }
  }
  return best;
}

bool is_finding_code(std::string_view code) {
  const CodeInfo* info = find_code(code);
  return info != nullptr && info->exit_class == ExitClass::finding;
}

bool glob_matches(const std::string& glob, const std::string& relative) {
  if (::fnmatch(glob.c_str(), relative.c_str(), 0) == 0) {
    return true;
  }
  if (glob.find('/') != std::string::npos) {
    return false;
  }
  const auto slash = relative.rfind('/');
  const std::string name = slash == std::string::npos ? relative : relative.substr(slash + 1);
  return ::fnmatch(glob.c_str(), name.c_str(), 0) == 0;
}

// Applies the policy to one category's messages; `file` is the definition file (or empty).
void apply_to_result(const FindingPolicy& policy, CheckResult& result,
                     const std::filesystem::path& file) {
  std::vector<CheckMessage> kept;
  kept.reserve(result.messages.size());
  for (CheckMessage& message : result.messages) {
    const auto severity = apply_policy(policy, message.code, severity_of(message.level), file);
    if (!severity) {
      continue;
    }
    message.level = level_of(*severity);
    kept.push_back(std::move(message));
  }
  result.messages = std::move(kept);
  result.update_status();
}

} // namespace

bool code_pattern_matches(std::string_view pattern, std::string_view code) {
  if (pattern.empty() || !code.starts_with(pattern)) {
    return false;
  }
  return code.size() == pattern.size() || code[pattern.size()] == '.' || pattern.back() == '.';
}

std::optional<std::string> code_pattern_problem(std::string_view pattern) {
  bool matches_any = false;
  std::vector<std::string> finding_codes;
  for (const CodeInfo& info : all_codes()) {
    if (code_pattern_matches(pattern, info.code)) {
      if (info.exit_class == ExitClass::finding) {
        return std::nullopt;
      }
      matches_any = true;
    }
    if (info.exit_class == ExitClass::finding) {
      // The code and its prefixes, for the close match ("definitio" → "definition").
      for (auto dot = info.code.find('.'); dot != std::string_view::npos;
           dot = info.code.find('.', dot + 1)) {
        finding_codes.emplace_back(info.code.substr(0, dot));
      }
      finding_codes.emplace_back(info.code);
    }
  }
  if (matches_any) {
    return fmt::format("'{}' names only codes that always show (environment or usage)", pattern);
  }
  std::sort(finding_codes.begin(), finding_codes.end());
  finding_codes.erase(std::unique(finding_codes.begin(), finding_codes.end()), finding_codes.end());
  std::string reason = fmt::format("'{}' is not a finding code or code prefix", pattern);
  if (const std::string close = closest_match(pattern, finding_codes); !close.empty()) {
    reason += fmt::format("; did you mean '{}'?", close);
  }
  return reason;
}

bool FindingPolicy::is_default() const {
  return select.empty() && ignore.empty() && per_path_ignores.empty() && severities.empty();
}

std::optional<Severity> apply_policy(const FindingPolicy& policy, std::string_view code,
                                     Severity severity, const std::filesystem::path& file) {
  if (!is_finding_code(code)) {
    return severity;
  }
  // What fib says about the baseline itself (baseline.suppressed, baseline.fixed) is selected by
  // default even under a `select` that does not name it: only `ignore` drops it.
  const bool about_baseline = code.starts_with("baseline.");
  long selected = policy.select.empty() ? 0 : best_match(policy.select, code);
  if (selected < 0 && about_baseline) {
    selected = 0;
  }
  if (selected < 0 || best_match(policy.ignore, code) >= selected) {
    return std::nullopt;
  }
  if (!file.empty() && !policy.per_path_ignores.empty()) {
    const std::string relative = path_relative_to(file, policy.base);
    for (const PathIgnore& ignore : policy.per_path_ignores) {
      if (best_match(ignore.code_patterns, code) >= 0 && glob_matches(ignore.glob, relative)) {
        return std::nullopt;
      }
    }
  }
  long best = -1;
  for (const SeverityOverride& entry : policy.severities) {
    if (code_pattern_matches(entry.code_pattern, code) && specificity(entry.code_pattern) >= best) {
      best = specificity(entry.code_pattern);
      severity = entry.severity;
    }
  }
  return severity;
}

std::vector<Diagnostic> apply_policy(const FindingPolicy& policy, std::vector<Diagnostic> found) {
  if (policy.is_default()) {
    return found;
  }
  std::vector<Diagnostic> kept;
  kept.reserve(found.size());
  for (Diagnostic& d : found) {
    if (const auto severity = apply_policy(policy, d.code, d.severity, d.file)) {
      d.severity = *severity;
      kept.push_back(std::move(d));
    }
  }
  return kept;
}

void apply_policy(const FindingPolicy& policy, DatasetReport& report) {
  if (policy.is_default()) {
    return;
  }
  for_each_result(report, [&](CheckResult& result, const std::filesystem::path& file) {
    apply_to_result(policy, result, file);
  });
}

namespace {

template <typename Report, typename Visit> void visit_results(Report& report, const Visit& visit) {
  for (auto& [name, definition] : report.definitions) {
    const auto file = report.definition_files.find(name);
    const std::filesystem::path path =
        file == report.definition_files.end() ? std::filesystem::path() : file->second;
    for (auto& category : definition.categories) {
      if (category) {
        visit(*category, path);
      }
    }
    if constexpr (!std::is_const_v<Report>) {
      definition.update_status();
    }
  }
  if (report.dataset) {
    visit(*report.dataset, std::filesystem::path());
  }
}

} // namespace

void for_each_result(DatasetReport& report,
                     const std::function<void(CheckResult&, const std::filesystem::path&)>& visit) {
  visit_results(report, visit);
}

void for_each_result(
    const DatasetReport& report,
    const std::function<void(const CheckResult&, const std::filesystem::path&)>& visit) {
  visit_results(report, visit);
}

std::string path_relative_to(const std::filesystem::path& file, const std::filesystem::path& base) {
  std::error_code file_error;
  std::error_code base_error;
  const auto absolute_file = std::filesystem::absolute(file, file_error).lexically_normal();
  const auto absolute_base = std::filesystem::absolute(base, base_error).lexically_normal();
  if (file_error || base_error) {
    return file.lexically_normal().generic_string();
  }
  const auto relative = absolute_file.lexically_relative(absolute_base);
  return relative.empty() ? absolute_file.generic_string() : relative.generic_string();
}

} // namespace fib
