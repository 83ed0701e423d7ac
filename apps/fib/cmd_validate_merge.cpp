// `fib validate-merge REPORT.json… [--output FILE]`: one report from the reports of --shard runs.

#include "commands.hpp"
#include "exit_status.hpp"
#include "render.hpp"

#include <fib/io/json_io.hpp>
#include <fib/util/atomic_file.hpp>
#include <fib/validate/dataset.hpp>
#include <fib/validate/report.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <vector>

namespace fib::app {

struct ValidateMergeCommand {
  CLI::App* subcommand = nullptr;
  std::vector<std::string> reports;
  std::string output;
  std::string text_output;
  PartialMerge partial = PartialMerge::refused;
};

Subcommand register_validate_merge(CLI::App& app) {
  auto command = std::make_shared<ValidateMergeCommand>();
  CLI::App* sub = app.add_subcommand(
      "validate-merge", "Merge the JSON reports of sharded `validate --dataset` runs into one");
  command->subcommand = sub;
  sub->add_option("reports", command->reports, "report-*.json files of the shards")->required();
  sub->add_option("--output", command->output,
                  "Write the merged JSON report here (default: standard output)");
  sub->add_option("--text", command->text_output, "Also write the merged text report here");
  sub->add_flag_callback(
      "--allow-partial", [command] { command->partial = PartialMerge::allowed; },
      "Merge a set that is not every shard of one run (said as warnings, and in the report)");
  sub->footer(R"(The reports must be every shard 1..N of one `validate --dataset --shard K/N` run
(each records K/N, the dataset's definition count and fingerprint, and the fib
version): a missing shard (shard.missing), one given twice (shard.duplicate), or a
report of another run, dataset, fib version or configuration, or without a shard
record (shard.foreign) is an error, and nothing is written. --allow-partial
merges anyway: the problems are warnings, and the merged report's dataset section
lists them.

Exit status: 0 when no merged definition has status error, 1 otherwise, 2 for an
unsound set of shards, 3 when a report cannot be read.)");
  return {command->subcommand,
          [command](PythonFrontend& /*python*/) { return run_validate_merge(*command); }};
}

namespace {

// Prints a diagnostic that stops the merge; its code's exit class gives the status.
int fail(const Diagnostic& d) {
  write_diagnostic(stderr, d);
  return exit_status(std::vector<Diagnostic>{d});
}

Expected<DatasetReport> read_report(const std::string& path) {
  FIB_TRY_ASSIGN(const std::string text, read_text_file(path));
  return parse_report_json(text, path);
}

// Writes one output file, after removing the stale temporaries a killed earlier run left beside it.
Expected<std::filesystem::path> write_output(const std::filesystem::path& file,
                                             std::string_view text) {
  StaleTemporarySweeper().remove_stale_beside(file);
  return write_file_atomically(file, text, Overwrite::allowed);
}

} // namespace

int run_validate_merge(const ValidateMergeCommand& command) {
  std::vector<DatasetReport> reports;
  for (const std::string& path : command.reports) {
    auto report = read_report(path);
    if (!report) {
      return fail(report.error());
    }
    reports.push_back(std::move(*report));
  }
  const std::vector<std::filesystem::path> files(command.reports.begin(), command.reports.end());
  const std::vector<Diagnostic> problems = check_shard_set(reports, files, command.partial);
  for (const Diagnostic& d : problems) {
    write_diagnostic(stderr, d);
  }
  if (command.partial == PartialMerge::refused && !problems.empty()) {
    return exit_status(problems);
  }
  DatasetReport merged = merge_reports(reports);
  if (!problems.empty()) {
    if (!merged.dataset) {
      merged.dataset.emplace();
    }
    for (const Diagnostic& d : problems) {
      merged.dataset->add(CheckLevel::warning, d.code, "[fib] partial merge: " + d.message);
    }
  }
  const std::string json = render_report_json(merged);
  if (command.output.empty()) {
    write_line(stdout, json);
  } else if (auto written = write_output(command.output, json); !written) {
    return fail(written.error());
  }
  if (!command.text_output.empty()) {
    if (auto written = write_output(command.text_output, render_report_text(merged)); !written) {
      return fail(written.error());
    }
  }
  // The merged definitions' statuses decide, as the shards' runs would have.
  const bool failed = count_statuses(merged).error > 0;
  return exit_status(DiagnosticCounts{}, Strictness::normal,
                     failed ? Outcome::failed : Outcome::clean);
}

} // namespace fib::app
