#pragma once
// Validation of individual files: `fib validate FILE…`.

#include <fib/base/diagnostic.hpp>
#include <fib/base/enum_names.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/python_checks.hpp>

#include <array>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

enum class FileKind { automatic, definition, solution, workload, trace };

template <> struct EnumNames<FileKind> {
  static constexpr std::array k_table = std::to_array<EnumName<FileKind>>({
      {FileKind::automatic, "auto"},
      {FileKind::definition, "definition"},
      {FileKind::solution, "solution"},
      {FileKind::workload, "workload"},
      {FileKind::trace, "trace"},
  });
};

// "auto", "definition", "solution", "workload", "trace".
inline std::string_view to_string(FileKind kind) {
  return enum_name(kind);
}

// The kind named `name` (the --kind spelling); nullopt for anything else.
inline std::optional<FileKind> parse_file_kind(std::string_view name) {
  return parse_enum<FileKind>(name);
}

struct ValidateFilesOptions {
  // Files and directories. A directory stands for every *.json and *.jsonl below it, in sorted
  // order (symbolic links to directories are not followed), except reports/report-* files.
  std::vector<std::filesystem::path> paths;
  // `automatic` detects each file's kind (see detect_file_kind); anything else forces it.
  FileKind kind = FileKind::automatic;
  std::uintmax_t max_file_bytes = k_default_max_file_bytes;
  // Reference execution for definitions without errors (--exec: build; --smoke: build and smoke
  // run), done by `runner` (required unless none). Its notes, errors and skips are reported with
  // the file; the definition's pointer is "/reference".
  ReferenceChecks reference_checks = ReferenceChecks::none;
  ReferenceRunner* runner = nullptr;
};

// What validate_files did; what it found went to the sink (count it there for the exit status).
struct ValidateSummary {
  std::size_t files = 0; // files checked
};

// Decides what a file holds. `.jsonl`: the nearest parent directory named `workloads` or `traces`
// decides, else the content (any line with a solution or an evaluation makes it a trace file).
// `.json`: the content (`sources`/`spec` → solution;
// `reference`/`axes`/`inputs`/`outputs`/`op_type` → definition), else the nearest parent named
// `definitions` or `solutions`. `automatic` when nothing tells.
FileKind detect_file_kind(const std::filesystem::path& file, std::string_view text);

// Validates every file named by `options`, reporting to `sink` (each file's findings in line
// order). `python` runs the Python-exact checks; when it cannot start, those checks are skipped
// and one `python.unavailable` error is reported. A directory argument holding files of the Aug
// 2025 schema (old_schema.hpp) first gets one `dataset.old-schema` warning (file: the directory)
// with the counts and what to rename. Never throws.
ValidateSummary validate_files(const ValidateFilesOptions& options, PythonFrontend& python,
                               DiagnosticSink& sink);

// Validates one definition document: schema, Python-exact checks and fib's own checks. Returns the
// environment diagnostic when Python could not be used (then nothing Python-related was reported).
std::optional<Diagnostic> validate_definition_document(const JsonDocument& document,
                                                       PythonFrontend& python,
                                                       DiagnosticSink& sink);

} // namespace fib
