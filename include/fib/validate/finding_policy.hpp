#pragma once
// Which findings a validate run reports, and at which severity: ruff-style select/ignore by code
// or code prefix, ignores for some paths, severity overrides. Set by fib.toml (config.hpp) and the
// command line; applied to file-mode diagnostics and to dataset reports alike.

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/validate/report.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// A code pattern is a code of the codes table or a prefix of codes ending at a dot boundary:
// "definition" matches "definition.description.missing" and "definition" itself, never
// "definitionx". Only codes of the `finding` exit class (codes.hpp) are ever selected, ignored or
// re-levelled: what stops fib from judging (environment, usage) always shows.
bool code_pattern_matches(std::string_view pattern, std::string_view code);

// Nullopt when `pattern` matches some finding code; otherwise the reason, for a config or
// command-line error: "'X' is not a finding code or code prefix" with "; did you mean 'Y'?" when a
// code is close, or "'X' names only codes that always show (environment or usage)".
std::optional<std::string> code_pattern_problem(std::string_view pattern);

// Findings of codes matching `code_patterns` in files matching `glob`.
struct PathIgnore {
  // fnmatch(3) without flags (so `*` also crosses '/'), against the file's path relative to
  // FindingPolicy::base; a glob without '/' is also tried against the file name alone.
  std::string glob;
  std::vector<std::string> code_patterns;
};

struct SeverityOverride {
  std::string code_pattern;
  Severity severity = Severity::warning; // note is the report's "info"
};

struct FindingPolicy {
  // Empty is every finding code. A code is kept when its most specific (longest) matching select
  // pattern is more specific than its most specific matching ignore pattern (a tie ignores). The
  // baseline's own notes (baseline.*) count as selected when no select pattern names them.
  std::vector<std::string> select;
  std::vector<std::string> ignore;
  std::vector<PathIgnore> per_path_ignores;
  // The most specific matching pattern gives the severity (the last one among equals).
  std::vector<SeverityOverride> severities;
  // Where per-path globs are relative to: the config file's directory (else the working
  // directory).
  std::filesystem::path base;

  // True when the policy changes nothing (no pattern at all).
  bool is_default() const;
};

// The severity a finding of `code` in `file` has under `policy`, or nullopt when the policy drops
// it. `file` may be empty (a finding about no file: only select, ignore and severities apply).
// Codes that are not findings (or not in the table) keep `severity`.
std::optional<Severity> apply_policy(const FindingPolicy& policy, std::string_view code,
                                     Severity severity, const std::filesystem::path& file);

// Applies the policy to file-mode diagnostics: dropped ones are removed, the rest re-levelled.
std::vector<Diagnostic> apply_policy(const FindingPolicy& policy, std::vector<Diagnostic> found);

// Applies the policy to a dataset report: each definition's messages are judged with its
// definition file (report.definition_files), the dataset section's with no file; statuses are
// recomputed from what is left.
void apply_policy(const FindingPolicy& policy, DatasetReport& report);

// Calls `visit` on every category result of the report with the file its messages are about: a
// definition's results with its definition file (report.definition_files; empty when unknown),
// then the dataset section with an empty path. The mutable form recomputes each definition's
// status afterwards (a visit that changes messages keeps its own result's status).
void for_each_result(DatasetReport& report,
                     const std::function<void(CheckResult&, const std::filesystem::path&)>& visit);
void for_each_result(
    const DatasetReport& report,
    const std::function<void(const CheckResult&, const std::filesystem::path&)>& visit);

// `file` relative to `base` ("/"-separated, lexically normalized after both are made absolute
// against the working directory), with "../" parts when it is not below `base`: the same file
// gives the same text from any working directory. The one spelling of a path that per-path globs
// and baseline entries use.
std::string path_relative_to(const std::filesystem::path& file, const std::filesystem::path& base);

} // namespace fib
