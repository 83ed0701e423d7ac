#pragma once
// fib's configuration file: `fib.toml`, or the `[tool.fib]` table of `pyproject.toml`, found from
// a start directory upward. It sets validate's defaults; the command line overrides each of them.
//
//   strict = true                                   # warnings fail the run (--strict)
//   checks = ["layout", "definition", "workload"]   # dataset mode's default --checks
//   select = ["definition", "dataset.workload"]     # codes or code prefixes kept (default: all)
//   ignore = ["definition.description.missing"]     # codes or code prefixes dropped
//   baseline = "fib-baseline.json"                  # relative to the config file's directory
//   [per-path-ignores]                              # glob (relative to the config's directory)
//   "definitions/experimental/*" = ["dataset.definition"]
//   [severity]                                      # code or prefix = "error"|"warning"|"info"
//   "dataset.definition.name-convention" = "error"

#include <fib/base/diagnostic.hpp>
#include <fib/validate/finding_policy.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

struct FibConfig {
  std::filesystem::path file; // the file read; empty when none
  FindingPolicy policy;       // policy.base is the file's directory
  std::optional<bool> strict;
  std::optional<std::vector<std::string>> checks; // category names, as --checks takes them
  // Relative to the file's directory, spelled relative to the working directory when below it.
  std::optional<std::filesystem::path> baseline;
};

// The configuration file for `start` (a directory, or a file whose directory is used): the first
// directory from it upward that has a `fib.toml`, or a `pyproject.toml` with a `[tool.fib]` table
// (fib.toml wins in the same directory; a pyproject.toml without the table is passed over).
// The path is relative to the working directory when the file lies below it (as messages show
// it), else absolute. Nullopt when none up to the filesystem root. Never fails: unreadable
// candidates are passed over here and reported by load_config.
std::optional<std::filesystem::path> find_config(const std::filesystem::path& start);

// Reads `file` (fib.toml, or pyproject.toml's [tool.fib]). Every problem goes to `sink` as a
// `config.invalid` error (usage) with the file and the 1-based line: a TOML syntax error, an
// unknown key, a value of the wrong type, an unknown check name, a code pattern that matches no
// finding code (with a close code when there is one), a severity that is not error, warning or
// info; an unreadable file is `io.read`/`io.not-found`. Nullopt when anything was reported.
std::optional<FibConfig> load_config(const std::filesystem::path& file, DiagnosticSink& sink);

} // namespace fib
