// `fib validate FILE…`: schema, Python-exact and fib's own checks on individual files.

#include "commands.hpp"
#include "exit_codes.hpp"
#include "render.hpp"

#include <fib/validate.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace fib::app {

enum class Strictness { errors_fail, warnings_fail };

struct ValidateCommand {
  CLI::App* subcommand = nullptr;
  ValidateFilesOptions options;
  std::vector<std::string> paths;
  std::string kind_name = "auto";
  std::string format_name = "text";
  Strictness strictness = Strictness::errors_fail;
};

namespace {

constexpr const char* k_validate_footer = R"(Output (text): one line per problem,
  FILE:LINE: SEVERITY[CODE] /json/pointer: MESSAGE
followed by `  hint: ...` when fib knows a next step, and a summary line.
Codes are listed in docs/diagnostics.md.

Exit status: 0 clean or warnings only, 1 errors (or warnings with --strict),
2 usage, 3 I/O or environment (unreadable file, embedded Python unavailable).

Examples:
  fib validate definitions/gemm/gemm_n128_k2048.json
  fib validate examples/dataset                       # every *.json / *.jsonl below it
  fib validate --kind workload wl.jsonl --format json
  FIB_PYTHON=/usr/bin/python3 fib validate dump.json  # choose the embedded Python)";

} // namespace

std::shared_ptr<ValidateCommand> register_validate(CLI::App& app) {
  auto command = std::make_shared<ValidateCommand>();
  CLI::App* sub = app.add_subcommand(
      "validate", "Check definitions, solutions, workload and trace files against the schema");
  command->subcommand = sub;
  sub->add_option("paths", command->paths, "Files or directories to check")->required();
  sub->add_option("--kind", command->kind_name,
                  "What the files hold (default: auto, detected per file)")
      ->check(CLI::IsMember({"auto", "definition", "solution", "workload", "trace"}));
  sub->add_option("--format", command->format_name, "Output format: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_flag_callback(
      "--strict", [command] { command->strictness = Strictness::warnings_fail; },
      "Exit 1 on warnings too");
  sub->footer(k_validate_footer);
  return command;
}

bool validate_selected(const ValidateCommand& command) {
  return command.subcommand->parsed();
}

int run_validate(const ValidateCommand& command, python::Runtime& python) {
  ValidateFilesOptions options = command.options;
  options.paths.assign(command.paths.begin(), command.paths.end());
  for (const FileKind kind : {FileKind::automatic, FileKind::definition, FileKind::solution,
                              FileKind::workload, FileKind::trace}) {
    if (to_string(kind) == command.kind_name) {
      options.kind = kind;
    }
  }
  const OutputFormat format =
      command.format_name == "json" ? OutputFormat::json : OutputFormat::text;
  DiagnosticList diagnostics;
  const ValidateSummary summary = validate_files(options, &python, diagnostics);

  if (format == OutputFormat::json) {
    std::fputs(render_json(diagnostics.items()).c_str(), stdout);
    std::fputc('\n', stdout);
  } else {
    for (const Diagnostic& d : diagnostics.items()) {
      std::fputs(render_text(d).c_str(), stdout);
      std::fputc('\n', stdout);
    }
  }
  const std::string line =
      fmt::format("fib validate: {} file{} checked: {} error{}, {} warning{}, {} note{}",
                  summary.files, summary.files == 1 ? "" : "s", summary.errors,
                  summary.errors == 1 ? "" : "s", summary.warnings,
                  summary.warnings == 1 ? "" : "s", summary.notes, summary.notes == 1 ? "" : "s");
  std::fprintf(format == OutputFormat::json ? stderr : stdout, "%s\n", line.c_str());

  if (summary.environment_failed) {
    return k_exit_environment;
  }
  if (summary.errors > 0 ||
      (command.strictness == Strictness::warnings_fail && summary.warnings > 0)) {
    return k_exit_findings;
  }
  return k_exit_ok;
}

} // namespace fib::app
