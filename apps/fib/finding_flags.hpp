#pragma once
// validate's configuration flags (--config, --no-config, --select, --ignore, --extend-ignore,
// --strict, --no-strict, --baseline, --write-baseline), how they combine with fib.toml, and how
// the resulting policy and baseline settle a run's findings.

#include "exit_status.hpp"

#include <fib/base/diagnostic.hpp>
#include <fib/validate/baseline.hpp>
#include <fib/validate/config.hpp>
#include <fib/validate/finding_policy.hpp>
#include <fib/validate/report.hpp>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fib::app {

// --- Interface ---

struct FindingFlags {
  std::string config_file; // --config
  bool no_config = false;  // --no-config
  // Each may be given more than once; each value is a comma-separated list.
  std::vector<std::string> select;
  std::vector<std::string> ignore;
  std::vector<std::string> extend_ignore;
  bool select_given = false; // --select replaces the config's `select` (even with "")
  bool ignore_given = false;
  std::optional<Strictness> strictness; // --strict / --no-strict
  std::string baseline;                 // --baseline
  std::string write_baseline;           // --write-baseline
};

void add_finding_flags(CLI::App* sub, FindingFlags& flags);

// The flags over the configuration file.
struct FindingSettings {
  std::optional<FibConfig> config; // the file read, if any
  FindingPolicy policy;
  Strictness strictness = Strictness::normal;
  std::optional<std::vector<std::string>> checks; // the config's default --checks
  // The baseline the run is matched against: the one read (--baseline, or the config's), or the
  // one --write-baseline writes.
  std::optional<Baseline> baseline;
  std::optional<std::filesystem::path> write_to; // --write-baseline
};

// Reads the configuration (--config FILE, else the first fib.toml or pyproject.toml [tool.fib]
// from `start` upward, none with --no-config) and puts the flags over it. A --write-baseline file
// that exists must be a baseline (it is rewritten, keeping the entries the run does not judge).
// Problems go to `sink`: config.invalid, baseline.invalid, cli.usage (a code pattern on the
// command line that names no finding code), io.*. Nullopt when any was reported.
std::optional<FindingSettings> resolve_finding_settings(const FindingFlags& flags,
                                                        const std::filesystem::path& start,
                                                        DiagnosticSink& sink);

// Applies the policy to a dataset report, writes the baseline when asked (then matching the run
// against what it wrote) and applies the baseline. A failed baseline write goes to `sink`
// (io.write) and returns false.
bool settle_dataset_findings(FindingSettings& settings, DatasetReport& report,
                             DatasetCoverage coverage, DiagnosticSink& sink);

// The same for file-mode diagnostics: `found` keeps what is reported, plus one baseline.fixed
// note per fixed entry; returns the count the baseline suppressed (nullopt when a write failed).
std::optional<std::size_t> settle_file_findings(FindingSettings& settings,
                                                std::vector<Diagnostic>& found,
                                                const std::vector<std::filesystem::path>& paths,
                                                DiagnosticSink& sink);

} // namespace fib::app
