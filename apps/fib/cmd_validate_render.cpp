// `fib validate-render REPORT.json [--output FILE]`: the text report from a saved JSON report.

#include "commands.hpp"
#include "exit_status.hpp"
#include "render.hpp"

#include <fib/base/codes.hpp>
#include <fib/io/json_io.hpp>
#include <fib/util/atomic_file.hpp>
#include <fib/validate/report.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <vector>

namespace fib::app {

struct ValidateRenderCommand {
  CLI::App* subcommand = nullptr;
  std::string report;
  std::string output;
};

Subcommand register_validate_render(CLI::App& app) {
  auto command = std::make_shared<ValidateRenderCommand>();
  CLI::App* sub = app.add_subcommand("validate-render",
                                     "Render a saved dataset report (JSON) as the text report");
  command->subcommand = sub;
  sub->add_option("report_json", command->report, "The report-*.json file")->required();
  sub->add_option("--output", command->output, "Write the text here instead of standard output");
  sub->add_option("--log-level", "Accepted for compatibility; has no effect here")
      ->check(CLI::IsMember({"DEBUG", "INFO", "WARNING", "ERROR"}));
  return {command->subcommand,
          [command](PythonFrontend& /*python*/) { return run_validate_render(*command); }};
}

namespace {

// Prints a diagnostic that stops the rendering; its code's exit class gives the status.
int fail(const Diagnostic& d) {
  write_diagnostic(stderr, d);
  return exit_status(std::vector<Diagnostic>{d});
}

// The report read and parsed; a missing file is "report file not found: PATH", as in the old
// tool.
Expected<DatasetReport> read_report(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) {
    Diagnostic d = text.error();
    if (d.code == codes::k_io_not_found) {
      d.message = fmt::format("report file not found: {}", path);
    }
    return unexpected(std::move(d));
  }
  return parse_report_json(*text, path);
}

} // namespace

int run_validate_render(const ValidateRenderCommand& command) {
  auto report = read_report(command.report);
  if (!report) {
    return fail(report.error());
  }
  const std::string rendered = render_report_text(*report);
  if (command.output.empty()) {
    write_line(stdout, rendered);
    return exit_status(DiagnosticCounts{});
  }
  StaleTemporarySweeper().remove_stale_beside(command.output); // what a killed earlier run left
  if (auto written = write_file_atomically(command.output, rendered, Overwrite::allowed);
      !written) {
    return fail(written.error());
  }
  return exit_status(DiagnosticCounts{});
}

} // namespace fib::app
