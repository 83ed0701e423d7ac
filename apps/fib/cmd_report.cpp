// `fib report summary|best|merge`: scores, best traces and merging of loaded datasets.

#include "commands.hpp"
#include "exit_status.hpp"
#include "render.hpp"

#include <fib/io/json_io.hpp>
#include <fib/report/fastp.hpp>
#include <fib/report/html_site.hpp>
#include <fib/report/merge.hpp>
#include <fib/report/summary.hpp>
#include <fib/validate/dataset.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>

namespace fib::app {

struct ReportCommand {
  CLI::App* subcommand = nullptr;
  CLI::App* summary = nullptr;
  CLI::App* best = nullptr;
  CLI::App* fastp = nullptr;
  CLI::App* merge = nullptr;
  CLI::App* html = nullptr;
  std::string html_dataset;
  std::string validation_report;
  std::vector<std::string> datasets;
  std::string baseline_author = std::string(k_default_baseline_author);
  std::string against = "auto";
  std::vector<std::string> definitions;
  double atol = ErrorBounds{}.max_absolute_error;
  double rtol = ErrorBounds{}.max_relative_error;
  bool by_device = false;
  std::string thresholds;
  std::string format = "text";
  std::string output;
  std::vector<std::string> inputs;
};

namespace {

constexpr const char* k_report_footer =
    R"TXT(summary  trace counts (total, passed, failed by status; per author and per
         solution) and the author ranking of each dataset: per author the mean
         speedup of its best solution per definition over the baseline author's
         solution (or, with --against reference or when the baseline author has
         no solution, over the reference: the speedups the traces record), win
         rate, success rate, definitions and workloads. A scoring error (a
         definition with solutions but no baseline solution: score.no-baseline)
         is reported with its code and every such definition; the counts still
         print, the ranking does not, exit 1. --by-device ranks each device too.
best     per definition (per device with --by-device), the PASSED trace with
         the highest recorded speedup within --atol/--rtol: its solution, author,
         latency, errors, workload and device, and a warning when it was timed
         with --warmup 0 or --iterations 1; otherwise whether there are no
         traces, no PASSED trace, or none within the bounds.
fastp    fast_p curves: per author, the share of all tasks (workloads of the
         definitions) it solves correctly (PASSED within --atol/--rtol) with a
         recorded speedup over the reference > p, for each p of --thresholds;
         unattempted tasks count as not fast. Text, CSV or JSON.
html     a static site of one dataset in OUT (docs/report.md): an index of
         every definition (op_type, tags, workloads, solutions, passing ones,
         best speedup, validation status) with search and filters, a page per
         definition (axes, tensors, constraints on the workloads, the reference,
         workloads, solutions, best per device, fast_p), a leaderboard with
         fast_p curves and coverage per author, and a model coverage matrix. It
         opens from file:// and loads nothing from the network. The validation
         status comes from --report FILE (fib validate --format json) or a run
         of the validator's default checks. OUT must be empty or a site fib
         wrote; pages are written atomically.
merge    copies definitions/ solutions/ workloads/ traces/ blob/ of each input
         into OUT. Identical files collapse; *.jsonl files are merged line by
         line without duplicate lines; any other file that differs is a conflict
         (merge.conflict): the first copy is kept, exit 1. Links inside inputs
         are not followed; nothing is written outside OUT; writes are atomic.

Each --dataset is loaded on its own (files at any depth, grouped by their JSON
`definition`) and reported in its own section. See docs/report.md.

Exit status: 0 ok, 1 a load, scoring or merge conflict error, 2 usage,
3 I/O or environment (missing dataset, failed write).

Examples:
  fib report summary --dataset ds --dataset other-ds --format json
  fib report best --dataset ds --definitions gemm_n4096_k4096 --atol 1e-3
  fib report fastp --dataset ds --format csv --thresholds 0,1,1.5,2
  fib report merge merged ds-a ds-b
  fib report html --dataset ds site && xdg-open site/index.html)TXT";

void print_diagnostics(const DiagnosticList& list) {
  for (const Diagnostic& d : list.items()) {
    write_diagnostic(stderr, d);
  }
}

std::vector<std::filesystem::path> to_paths(const std::vector<std::string>& items) {
  return {items.begin(), items.end()};
}

void report_summary(const ReportCommand& command, DiagnosticList& diagnostics) {
  SummaryReportOptions options;
  options.datasets = to_paths(command.datasets);
  options.baseline_author = command.baseline_author;
  options.grouping = command.by_device ? SummaryGrouping::per_device : SummaryGrouping::overall;
  options.against = command.against == "baseline"    ? SummaryBasis::baseline_author
                    : command.against == "reference" ? SummaryBasis::reference
                                                     : SummaryBasis::automatic;
  const SummaryReport report = summarize_datasets(options, diagnostics);
  print_diagnostics(diagnostics);
  write_all(stdout, command.format == "json" ? summary_to_json(report).dump(2) + "\n"
                                             : render_summary_text(report));
}

void report_best(const ReportCommand& command, DiagnosticList& diagnostics) {
  BestReportOptions options;
  options.datasets = to_paths(command.datasets);
  options.definitions = command.definitions;
  options.bounds = ErrorBounds{command.atol, command.rtol};
  options.grouping = command.by_device ? BestGrouping::per_device : BestGrouping::per_definition;
  const BestReport report = best_traces(options, diagnostics);
  print_diagnostics(diagnostics);
  write_all(stdout, command.format == "json" ? best_to_json(report).dump(2) + "\n"
                                             : render_best_text(report));
}

void report_fastp(const ReportCommand& command, DiagnosticList& diagnostics) {
  FastpOptions options;
  options.datasets = to_paths(command.datasets);
  options.definitions = command.definitions;
  options.bounds = ErrorBounds{command.atol, command.rtol};
  if (!command.thresholds.empty()) {
    auto thresholds = parse_fastp_thresholds(command.thresholds);
    if (!thresholds) {
      diagnostics.report(thresholds.error());
      print_diagnostics(diagnostics);
      return;
    }
    options.thresholds = std::move(*thresholds);
  }
  const FastpReport report = fastp_curves(options, diagnostics);
  print_diagnostics(diagnostics);
  write_all(stdout, command.format == "json"  ? fastp_to_json(report).dump(2) + "\n"
                    : command.format == "csv" ? render_fastp_csv(report)
                                              : render_fastp_text(report));
}

void report_merge(const ReportCommand& command, DiagnosticList& diagnostics) {
  MergeOptions options;
  options.output = command.output;
  options.inputs = to_paths(command.inputs);
  const MergeResult result = merge_datasets(options, diagnostics);
  print_diagnostics(diagnostics);
  for (const MergeEntry& entry : result.entries) {
    std::string line = fmt::format("{:<10}  {}", to_string(entry.action), entry.path.string());
    if (entry.action == MergeAction::merged || entry.duplicate_lines > 0) {
      line += fmt::format("  (+{} line{}, {} duplicate{} dropped)", entry.lines_added,
                          entry.lines_added == 1 ? "" : "s", entry.duplicate_lines,
                          entry.duplicate_lines == 1 ? "" : "s");
    }
    write_line(stdout, line);
  }
  if (count_diagnostics(diagnostics.items()).usage_errors > 0) {
    return; // the merge did not start (merge.output-is-input): no summary
  }
  const MergeSummary& s = result.summary;
  write_line(stderr,
             fmt::format("fib report merge: {} file{}: {} added, {} merged, {} unchanged, "
                         "{} conflict{}, {} failed; {} identical cop{} and {} duplicate "
                         "line{} dropped, {} not copied",
                         result.entries.size(), result.entries.size() == 1 ? "" : "s", s.added,
                         s.merged, s.unchanged, s.conflicts, s.conflicts == 1 ? "" : "s", s.failed,
                         s.identical_copies, s.identical_copies == 1 ? "y" : "ies",
                         s.duplicate_lines, s.duplicate_lines == 1 ? "" : "s", s.not_copied));
}

void report_html(const ReportCommand& command, PythonFrontend& python,
                 DiagnosticList& diagnostics) {
  HtmlSiteOptions options;
  options.dataset = command.html_dataset;
  options.out = command.output;
  options.baseline_author = command.baseline_author;
  if (!command.validation_report.empty()) {
    auto text = read_text_file(command.validation_report);
    auto report = text ? parse_report_json(*text, command.validation_report)
                       : Expected<DatasetReport>(unexpected(text.error()));
    if (!report) {
      diagnostics.report(report.error());
      print_diagnostics(diagnostics);
      return;
    }
    options.validation = std::move(*report);
  } else {
    ValidateDatasetOptions validate;
    validate.root = command.html_dataset;
    DiagnosticList environment; // the validator's own problems (no Python) are the report's
    const spdlog::level::level_enum level = spdlog::get_level();
    spdlog::set_level(spdlog::level::off); // the validator's progress lines are not this command's
    options.validation = validate_dataset(validate, python, environment);
    spdlog::set_level(level);
    for (const Diagnostic& d : environment.items()) {
      if (d.severity == Severity::error) {
        options.validation.reset(); // it could not check: the pages say "not checked"
        Diagnostic note = d;
        note.severity = Severity::warning;
        diagnostics.report(std::move(note));
        break;
      }
    }
  }
  const HtmlSiteResult result = write_html_site(options, diagnostics);
  print_diagnostics(diagnostics);
  if (result.written) {
    write_line(stdout, fmt::format("fib report html: {} definition page{} and 3 pages written to "
                                   "{} (open {}/index.html)",
                                   result.definitions, result.definitions == 1 ? "" : "s",
                                   command.output, command.output));
  }
}

void add_format(CLI::App& sub, ReportCommand& command) {
  sub.add_option("--format", command.format, "text (default) or json (a stable document)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"text", "json"}));
}

void add_datasets(CLI::App& sub, ReportCommand& command) {
  sub.add_option("--dataset", command.datasets, "A dataset root (repeatable)")
      ->type_name("DIR")
      ->required();
}

} // namespace

Subcommand register_report(CLI::App& app) {
  auto command = std::make_shared<ReportCommand>();
  CLI::App* sub =
      app.add_subcommand("report", "Summarize, pick the best traces of, merge, or draw datasets");
  command->subcommand = sub;
  sub->require_subcommand(1);
  sub->footer(k_report_footer);

  command->summary = sub->add_subcommand("summary", "Trace counts and the author ranking");
  add_datasets(*command->summary, *command);
  command->summary
      ->add_option("--baseline-author", command->baseline_author,
                   "The author whose solutions every speedup is measured against (default "
                   "baseline)")
      ->type_name("NAME");
  command->summary
      ->add_option("--against", command->against,
                   "auto (default: the baseline author when it has a solution, else the "
                   "reference), baseline or reference")
      ->type_name("BASIS")
      ->check(CLI::IsMember({"auto", "baseline", "reference"}));
  command->summary->add_flag("--by-device", command->by_device,
                             "Rank each device (environment.hardware) apart too");
  add_format(*command->summary, *command);
  command->summary->footer("See `fib report --help` and docs/report.md.");

  command->best = sub->add_subcommand("best", "The best trace of each definition");
  add_datasets(*command->best, *command);
  command->best->add_option("--definitions", command->definitions, "Only these definitions")
      ->type_name("NAME");
  command->best
      ->add_option("--atol", command->atol, "Largest absolute error that counts (default 0.01)")
      ->check(CLI::NonNegativeNumber);
  command->best
      ->add_option("--rtol", command->rtol, "Largest relative error that counts (default 0.01)")
      ->check(CLI::NonNegativeNumber);
  command->best->add_flag("--by-device", command->by_device,
                          "The best trace of each device (environment.hardware) apart");
  add_format(*command->best, *command);
  command->best->footer("See `fib report --help` and docs/report.md.");

  command->fastp = sub->add_subcommand("fastp", "fast_p curves per author");
  add_datasets(*command->fastp, *command);
  command->fastp->add_option("--definitions", command->definitions, "Only these definitions")
      ->type_name("NAME");
  command->fastp
      ->add_option("--atol", command->atol, "Largest absolute error that counts (default 0.01)")
      ->check(CLI::NonNegativeNumber);
  command->fastp
      ->add_option("--rtol", command->rtol, "Largest relative error that counts (default 0.01)")
      ->check(CLI::NonNegativeNumber);
  command->fastp
      ->add_option("--thresholds", command->thresholds,
                   "Ascending speedups p, comma-separated (default 0,0.25,...,2,3,4,5,10)")
      ->type_name("P,...");
  command->fastp->add_option("--format", command->format, "text (default), csv or json")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"text", "csv", "json"}));
  command->fastp->footer("See `fib report --help` and docs/report.md.");

  command->merge = sub->add_subcommand("merge", "Merge datasets into OUT");
  command->merge->add_option("output", command->output, "The merged dataset (created if missing)")
      ->type_name("OUT")
      ->required();
  command->merge->add_option("inputs", command->inputs, "Dataset roots, earliest first")
      ->type_name("DIR")
      ->required();
  command->merge->footer("See `fib report --help` and docs/report.md.");

  command->html = sub->add_subcommand("html", "A static HTML site of a dataset");
  command->html->add_option("--dataset", command->html_dataset, "The dataset root")
      ->type_name("DIR")
      ->required();
  command->html
      ->add_option("output", command->output,
                   "The site's directory (empty, or a site "
                   "fib wrote)")
      ->type_name("OUT")
      ->required();
  command->html
      ->add_option("--report", command->validation_report,
                   "The validation status from this report (fib validate --format json) instead "
                   "of a run of the validator")
      ->type_name("FILE");
  command->html
      ->add_option("--baseline-author", command->baseline_author,
                   "The author the leaderboard ranks against when it has solutions (default "
                   "baseline)")
      ->type_name("NAME");
  command->html->footer("See `fib report --help` and docs/report.md.");
  return {command->subcommand,
          [command](PythonFrontend& python) { return run_report(*command, python); }};
}

int run_report(const ReportCommand& command, PythonFrontend& python) {
  DiagnosticList diagnostics;
  if (command.summary->parsed()) {
    report_summary(command, diagnostics);
  } else if (command.best->parsed()) {
    report_best(command, diagnostics);
  } else if (command.fastp->parsed()) {
    report_fastp(command, diagnostics);
  } else if (command.html->parsed()) {
    report_html(command, python, diagnostics);
  } else {
    report_merge(command, diagnostics);
  }
  return exit_status(diagnostics.items());
}

} // namespace fib::app
