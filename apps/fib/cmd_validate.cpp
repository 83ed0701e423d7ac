// `fib validate`: individual files (FILE…), or a whole dataset (--dataset DIR) with the old
// tool's report files.

#include "cache_flags.hpp"
#include "ci_output_flags.hpp"
#include "commands.hpp"
#include "exit_status.hpp"
#include "finding_flags.hpp"
#include "keep_until_exit.hpp"
#include "option_checks.hpp"
#include "render.hpp"
#include "smoke_flags.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/cached_python_frontend.hpp>
#include <fib/model/dataset_layout.hpp>
#include <fib/util/huge_pages.hpp>
#include <fib/validate/dataset.hpp>
#include <fib/validate/files.hpp>
#include <fib/validate/report.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace fib::app {

enum class ExitPolicy { by_findings, always_zero };

struct ValidateCommand {
  CLI::App* subcommand = nullptr;
  std::vector<std::string> paths;
  std::string kind_name = "auto";
  std::string format_name = "text";
  CiOutputFlags ci;      // --path-prefix, --max-annotations
  FindingFlags findings; // fib.toml, --select/--ignore, --strict, the baseline
  // Dataset mode.
  std::string dataset;
  std::string checks;
  GpuChecks gpu = GpuChecks::enabled;
  std::vector<std::string> op_types;
  std::vector<std::string> definitions;
  std::string output_folder;
  std::string outputs;
  std::string shard;
  ExitPolicy exit_policy = ExitPolicy::by_findings;
  // Reference execution (both modes).
  bool exec = false;
  SmokeFlags smoke; // --smoke and the worker's options
  // Both modes.
  CacheFlags cache;
  std::size_t jobs = 0; // dataset mode: worker processes, 0 = one per core
};

namespace {

constexpr const char* k_validate_footer = R"(Two modes:
  fib validate FILE|DIR...     check files on their own (kind detected per file)
  fib validate --dataset DIR   check a dataset as flashinfer-bench validate does, and more
With neither paths nor --dataset, the dataset is $FIB_DATASET_PATH, else
~/.cache/flashinfer_bench/dataset. The options of one mode (--kind; --checks,
--disable-gpu, --op-types, --definitions, --output-folder, --outputs, --shard)
are a usage error in the other.

File mode prints one line per problem,
  FILE:LINE: SEVERITY[CODE] /json/pointer: MESSAGE
and a summary line. Codes are listed in docs/diagnostics.md.

In CI (both modes): --format github annotates each finding on the file and line
it is in (at most --max-annotations errors and as many warnings, then a notice;
paths relative to $GITHUB_WORKSPACE, or --path-prefix); --format sarif prints
SARIF 2.1.0 for code scanning; when $GITHUB_STEP_SUMMARY is set, a digest of the
findings is appended to it. docs/ci.md has the details.

Dataset mode writes report-YYYYMMDD-HHMMSS.{json,txt} under DIR/reports (or
--output-folder; a run that finds that name taken, by a run of the same second,
writes report-YYYYMMDD-HHMMSS-2, -3, ...) and prints the text report; fib's own
findings are marked [fib].
A tree of the Aug 2025 schema (`type` for `op_type`, capitalised languages,
traces/workloads/*.workload.jsonl) is named once, with counts and what to
rename (dataset.old-schema): an error when none of its definitions loads.

References run in fib-worker (libtorch + Python with torch; fib itself never
loads torch): --exec builds them as the old tool does (dataset mode does it by
default unless --disable-gpu); --smoke also runs each on tiny synthesized inputs
and compares its outputs' count, shapes and dtypes with the definition.

Exit status: 0 clean or warnings only, 1 errors (or warnings with --strict),
2 usage, 3 I/O or environment (unreadable file, embedded Python unavailable,
report file not writable). --exit-zero gives 0 whatever the findings, as the old tool.
An --op-types or --definitions value that matches no definition of the dataset is a
usage error naming it, with a close name if there is one (cli.filter-unmatched,
nothing checked); with --exit-zero it is a warning and the rest is checked.

Configuration: fib.toml, or [tool.fib] in pyproject.toml, found from the dataset
root (file mode: the first path) upward, sets strict, checks, select, ignore,
per-path-ignores, severity and baseline; --select, --ignore, --extend-ignore,
--strict/--no-strict, --checks and --baseline override it (--config FILE reads
another, --no-config none). Only findings are selected or ignored: what stops
fib from judging always shows. A baseline (--write-baseline FILE, then
--baseline FILE) leaves out known errors and warnings, says how many, and names
the entries that no longer match. docs/configuration.md has the keys and the
baseline's format.

Examples:
  fib validate definitions/gemm/gemm_n128_k2048.json
  fib validate --kind workload wl.jsonl --format json
  fib validate --dataset flashinfer-trace --disable-gpu
  fib validate --dataset ds --disable-gpu --shard 2/4 --outputs json
  fib validate --dataset ds --disable-gpu --write-baseline fib-baseline.json
  FIB_PYTHON=/usr/bin/python3 fib validate dump.json)";

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  if (text.empty()) {
    return items;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

std::string local_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%d-%H%M%S", &local);
  return buffer;
}

std::filesystem::path default_dataset_root() {
  if (const char* env = std::getenv("FIB_DATASET_PATH"); env != nullptr && *env != '\0') {
    std::string path = env;
    if (path.front() == '~') {
      const char* home = std::getenv("HOME");
      path = std::string(home != nullptr ? home : "") + path.substr(1);
    }
    return path;
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr ? home : "") / ".cache" / "flashinfer_bench" /
         "dataset";
}

// Prints a diagnostic that stops the run; its code's exit class gives the status.
int fail(const Diagnostic& d) {
  write_diagnostic(stderr, d);
  return exit_status(std::vector<Diagnostic>{d});
}

std::optional<Shard> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) {
    return std::nullopt;
  }
  try {
    std::size_t used = 0;
    const auto k = std::stoul(text.substr(0, slash), &used);
    if (used != slash) {
      return std::nullopt;
    }
    const std::string rest = text.substr(slash + 1);
    const auto n = std::stoul(rest, &used);
    if (used != rest.size() || n == 0 || k == 0 || k > n) {
      return std::nullopt;
    }
    return Shard{k, n};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Problems that stop fib from judging (Python start-up, the worker), printed as they come.
class StderrSink final : public DiagnosticSink {
public:
  void report(Diagnostic d) override { write_diagnostic(stderr, d); }
};

// --exit-zero: findings do not count, what fib could not do still does.
DiagnosticCounts counted(const ValidateCommand& command, DiagnosticCounts counts) {
  if (command.exit_policy == ExitPolicy::always_zero) {
    counts.errors = counts.environment_errors + counts.usage_errors;
    counts.warnings = 0;
  }
  return counts;
}

ReferenceRunnerOptions runner_options(const ValidateCommand& command) {
  return smoke_runner_options(command.subcommand, command.smoke);
}

// A dataset run, as decided before scanning.
struct DatasetPlan {
  ValidateDatasetOptions options;
  ReportTargets targets;
  std::filesystem::path report_folder;
  std::string timestamp; // the run's start, in the report files' names
  bool uses_worker = false;
  DatasetCoverage coverage = DatasetCoverage::whole; // what a baseline entry can be judged on
};

// The reference checks dataset mode runs: the old tool builds references unless --disable-gpu;
// --exec and --smoke ask for them anyway. None when the definition category is not checked.
ReferenceChecks dataset_reference_checks(const ValidateCommand& command,
                                         const std::vector<std::string>& checks) {
  if (std::find(checks.begin(), checks.end(), "definition") == checks.end()) {
    return ReferenceChecks::none;
  }
  return command.smoke.smoke                                 ? ReferenceChecks::build_and_smoke
         : command.exec || command.gpu == GpuChecks::enabled ? ReferenceChecks::build
                                                             : ReferenceChecks::none;
}

// The checks before scanning, in the old tool's order: the root, the check names, the output
// targets; then fib's --shard. The report files are named when they are written.
// The dataset root the command names.
std::filesystem::path dataset_root(const ValidateCommand& command) {
  return command.dataset.empty() ? default_dataset_root() : std::filesystem::path(command.dataset);
}

Expected<DatasetPlan> plan_dataset(const ValidateCommand& command,
                                   const FindingSettings& settings) {
  DatasetPlan plan;
  ValidateDatasetOptions& options = plan.options;
  options.root = dataset_root(command);
  options.checks = split_commas(command.checks);
  if (command.checks.empty() && settings.checks) {
    options.checks = *settings.checks; // the config's default
  }
  options.gpu = command.gpu;
  options.op_types = command.op_types;
  options.definitions = command.definitions;
  options.unmatched_filters = command.exit_policy == ExitPolicy::always_zero
                                  ? UnmatchedFilters::warned
                                  : UnmatchedFilters::refused;
  if (const auto problem = dataset_root_problem(options.root)) {
    return unexpected(make_diagnostic(
        codes::k_dataset_root_missing,
        fmt::format("dataset root {}: {}", *problem, normalize_root(options.root).string())));
  }
  FIB_TRY_ASSIGN(const auto checks, resolve_checks(options.checks, options.gpu));
  FIB_TRY_ASSIGN(const auto default_checks, resolve_checks({}, options.gpu));
  options.reference_checks = dataset_reference_checks(command, checks);
  options.reference_checks_requested =
      options.reference_checks != ReferenceChecks::none && (command.exec || command.smoke.smoke);
  // The worker also builds baseline solutions and runs the benchmark category (not under
  // --disable-gpu, as the old tool).
  plan.uses_worker =
      options.reference_checks != ReferenceChecks::none || options.gpu == GpuChecks::enabled;
  FIB_TRY_ASSIGN(plan.targets, parse_report_targets(command.outputs));
  if (!command.shard.empty()) {
    const auto shard = parse_shard(command.shard);
    if (!shard) {
      return unexpected(make_diagnostic(
          codes::k_usage,
          fmt::format("--shard wants K/N with 1 <= K <= N, got '{}'", command.shard)));
    }
    options.shard = *shard;
  }
  plan.report_folder = command.output_folder.empty() ? normalize_root(options.root) / "reports"
                                                     : std::filesystem::path(command.output_folder);
  plan.timestamp = local_timestamp();
  const bool every_category =
      std::all_of(default_checks.begin(), default_checks.end(), [&](const std::string& check) {
        return std::find(checks.begin(), checks.end(), check) != checks.end();
      });
  plan.coverage = !every_category ? DatasetCoverage::some_categories
                  : options.op_types.empty() && options.definitions.empty() && !options.shard
                      ? DatasetCoverage::whole
                      : DatasetCoverage::some_definitions;
  return plan;
}

// A progress line on standard error when it is a terminal; nothing otherwise.
std::function<void(std::size_t, std::size_t)> terminal_progress() {
  if (isatty(STDERR_FILENO) == 0) {
    return {};
  }
  return [](std::size_t done, std::size_t total) {
    std::fprintf(stderr, "\rfib: checked %zu/%zu definitions", done, total);
    if (done == total) {
      std::fputs("\r\033[K", stderr);
    }
  };
}

// The report on standard output for --format text or json (and the log lines of the files);
// github and sarif are print_dataset_ci_findings's.
void print_dataset_report(const ValidateCommand& command, const DatasetReport& report,
                          const DatasetPlan& plan, const ReportFiles& files) {
  if (plan.targets.json_file) {
    spdlog::info("Report JSON written to {}", files.json.string());
  }
  if (plan.targets.text_file) {
    spdlog::info("Report text written to {}", files.text.string());
  }
  if (command.format_name == "json") {
    write_line(stdout, render_report_json(report));
  } else if (command.format_name == "text" && plan.targets.stdout_text) {
    // The text report ends with one "\n"; print() adds another, as in the old tool.
    write_line(stdout, render_report_text(report));
  }
}

// --format github|sarif, and the step summary: the report's findings with their files and lines.
void print_dataset_ci_findings(const ValidateCommand& command, const DatasetReport& report,
                               const std::filesystem::path& root, DiagnosticSink& problems) {
  if (!wants_ci_findings(command.format_name)) {
    return;
  }
  const std::filesystem::path base = normalize_root(root);
  std::vector<Diagnostic> findings = report_findings_located(report, base);
  resolve_pointer_lines(findings);
  const CiPaths paths = ci_paths(command.ci, base);
  print_ci_findings(command.format_name, findings, command.ci, paths);
  const StatusCounts statuses = count_statuses(report);
  append_step_summary(findings, paths,
                      fmt::format("fib validate --dataset {}: {} definitions, {} ok, {} with "
                                  "warnings, {} with errors",
                                  base.string(), report.definitions.size(), statuses.ok,
                                  statuses.warning, statuses.error),
                      problems);
}

int run_dataset(const ValidateCommand& command, PythonFrontend& python) {
  // A dataset run allocates and touches tens of megabytes: a heap of huge pages faults far less.
  (void)prepare_huge_page_heap();
  StderrSink printed;
  CountingSink environment(printed);
  auto settings = resolve_finding_settings(command.findings, dataset_root(command), environment);
  if (!settings) {
    return exit_status(environment.counts());
  }
  auto plan = plan_dataset(command, *settings);
  if (!plan) {
    return fail(plan.error());
  }
  std::optional<ReferenceRunner> runner;
  if (plan->uses_worker) {
    plan->options.runner = &runner.emplace(runner_options(command));
  }
  plan->options.progress = terminal_progress();
  plan->options.processes = command.jobs;
  // The run's scan and target lists: the process ends soon, and the system frees them at once.
  plan->options.done_with = [](std::shared_ptr<void> leftovers) {
    keep_until_exit(std::move(leftovers));
  };
  ResultCache cache = open_result_cache(command.cache, environment);
  CachedPythonFrontend cached_python(python, cache);
  plan->options.cache = &cache;
  DatasetReport report = validate_dataset(plan->options, cached_python, environment);
  cache.commit(environment);
  if (environment.counts().usage_errors > 0) {
    return exit_status(environment.counts(), settings->strictness); // a filter selected nothing
  }
  if (!settle_dataset_findings(*settings, report, plan->coverage, environment)) {
    return exit_status(environment.counts());
  }
  const auto files =
      write_report_files(report, plan->report_folder, plan->timestamp, plan->targets);
  if (!files) {
    return fail(files.error());
  }
  print_dataset_report(command, report, *plan, *files);
  print_dataset_ci_findings(command, report, plan->options.root, printed);
  DiagnosticCounts counts = environment.counts();
  counts += counted(command, count_findings(report));
  keep_until_exit(std::move(report)); // the process ends next: the system frees it at once
  return exit_status(counts, settings->strictness);
}

ValidateFilesOptions files_options(const ValidateCommand& command) {
  ValidateFilesOptions options;
  options.paths.assign(command.paths.begin(), command.paths.end());
  options.kind = parse_file_kind(command.kind_name).value_or(FileKind::automatic);
  options.reference_checks = command.smoke.smoke ? ReferenceChecks::build_and_smoke
                             : command.exec      ? ReferenceChecks::build
                                                 : ReferenceChecks::none;
  return options;
}

// The diagnostics in the --format asked for, then the summary line (on standard error unless
// the format is text).
void print_file_findings(const ValidateCommand& command, const std::vector<Diagnostic>& found,
                         std::size_t files, std::size_t suppressed, DiagnosticSink& problems) {
  const CiPaths paths = ci_paths(command.ci, ".");
  if (command.format_name == "json") {
    write_line(stdout, render_json(found));
  } else if (command.format_name == "text") {
    for (const Diagnostic& d : found) {
      write_diagnostic(stdout, d);
    }
  } else {
    print_ci_findings(command.format_name, found, command.ci, paths);
  }
  const DiagnosticCounts counts = count_diagnostics(found);
  const auto plural = [](std::size_t n) { return n == 1 ? "" : "s"; };
  const std::string summary =
      fmt::format("fib validate: {} file{} checked: {} error{}, {} warning{}, {} note{}", files,
                  plural(files), counts.errors, plural(counts.errors), counts.warnings,
                  plural(counts.warnings), counts.notes, plural(counts.notes)) +
      (suppressed > 0 ? fmt::format(" ({} suppressed by the baseline)", suppressed)
                      : std::string());
  write_line(command.format_name == "text" ? stdout : stderr, summary);
  append_step_summary(found, paths, summary, problems);
}

int run_files(const ValidateCommand& command, PythonFrontend& python) {
  StderrSink printed;
  CountingSink problems(printed);
  auto settings = resolve_finding_settings(command.findings,
                                           std::filesystem::path(command.paths.front()), problems);
  if (!settings) {
    return exit_status(problems.counts());
  }
  ValidateFilesOptions options = files_options(command);
  std::optional<ReferenceRunner> runner;
  if (options.reference_checks != ReferenceChecks::none) {
    options.runner = &runner.emplace(runner_options(command));
  }
  DiagnosticList diagnostics;
  StderrSink notes;
  ResultCache cache = open_result_cache(command.cache, notes);
  CachedPythonFrontend cached_python(python, cache);
  const ValidateSummary summary = validate_files(options, cached_python, diagnostics);
  cache.commit(notes);
  std::vector<Diagnostic> found = diagnostics.items();
  const auto suppressed = settle_file_findings(*settings, found, options.paths, problems);
  if (!suppressed) {
    return exit_status(problems.counts());
  }
  print_file_findings(command, found, summary.files, *suppressed, printed);
  return exit_status(counted(command, count_diagnostics(found)), settings->strictness);
}

// Options that only dataset mode reads; with paths they are a usage error rather than ignored.
constexpr std::array k_dataset_only_options = {"--checks",      "--disable-gpu",   "--op-types",
                                               "--definitions", "--output-folder", "--outputs",
                                               "--shard",       "--jobs"};

// Options given together that do not go together (a `cli.usage` diagnostic), in a fixed order.
std::optional<Diagnostic> check_option_combination(const ValidateCommand& command) {
  const auto given = [&](const char* option) { return command.subcommand->count(option) > 0; };
  if (!command.smoke.smoke && (given("--device") || given("--max-bytes"))) {
    return make_diagnostic(codes::k_usage, "--device and --max-bytes need --smoke");
  }
  const bool references_run = command.exec || command.smoke.smoke ||
                              (command.paths.empty() && command.gpu == GpuChecks::enabled);
  if (!references_run && (given("--timeout") || given("--memory-limit"))) {
    return make_diagnostic(codes::k_usage,
                           "--timeout and --memory-limit need --exec or --smoke (or dataset mode "
                           "without --disable-gpu, which builds references)");
  }
  if (command.paths.empty()) {
    if (given("--kind")) {
      return make_diagnostic(codes::k_usage, "--kind is a file-mode option; it needs paths and "
                                             "cannot be used with a dataset");
    }
    return std::nullopt;
  }
  if (given("--dataset")) {
    return make_diagnostic(codes::k_usage, "give either paths or --dataset, not both");
  }
  for (const char* option : k_dataset_only_options) {
    if (given(option)) {
      return make_diagnostic(
          codes::k_usage,
          fmt::format("{} is a dataset-mode option; it cannot be used with paths", option));
    }
  }
  return std::nullopt;
}

} // namespace

Subcommand register_validate(CLI::App& app) {
  auto command = std::make_shared<ValidateCommand>();
  CLI::App* sub = app.add_subcommand(
      "validate", "Check files, or a whole dataset, against the FlashInfer-Trace schema");
  command->subcommand = sub;
  sub->add_option("paths", command->paths, "Files or directories to check (file mode)");
  sub->add_option("--kind", command->kind_name, "File mode: what the files hold (default: auto)")
      ->check(CLI::IsMember({"auto", "definition", "solution", "workload", "trace"}));
  sub->add_option("--format", command->format_name,
                  "Output: text (default), json, github (Actions annotations) or sarif (SARIF "
                  "2.1.0, for code scanning)")
      ->check(CLI::IsMember({"text", "json", "github", "sarif"}));
  add_ci_output_flags(sub, command->ci);
  sub->add_flag_callback(
      "--exit-zero", [command] { command->exit_policy = ExitPolicy::always_zero; },
      "Exit 0 whatever the findings (the old tool's behaviour)");
  sub->add_flag("--exec", command->exec,
                "Build each reference in fib-worker (import, `run`, arity); on by default with "
                "--dataset unless --disable-gpu");
  add_smoke_flags(sub, command->smoke,
                  "Also run each reference on tiny synthesized inputs and compare its outputs' "
                  "count, shapes and dtypes (implies --exec)");
  sub->add_option("--dataset", command->dataset, "Dataset mode: the dataset root");
  sub->add_option("--checks", command->checks,
                  "Comma-separated categories: layout, definition, workload, solution, trace, "
                  "baseline, benchmark (default: all; without benchmark under --disable-gpu)");
  sub->add_flag_callback(
      "--disable-gpu", [command] { command->gpu = GpuChecks::disabled; },
      "Skip what needs a GPU: reference and baseline builds, the benchmark category");
  sub->add_option("--op-types", command->op_types,
                  "Only definitions of these op_type dirs (each must match one)");
  sub->add_option("--definitions", command->definitions,
                  "Only these definitions (each must match one)");
  sub->add_option("--output-folder", command->output_folder,
                  "Where report files go (default: DATASET/reports)");
  sub->add_option("--outputs", command->outputs,
                  "Comma-separated: stdout, json, text (default: all three)");
  sub->add_option("--shard", command->shard,
                  "Check only shard K of N (K/N, 1-based; split by definition name)");
  sub->add_option("-j,--jobs", command->jobs,
                  "Dataset mode: worker processes (default 0: one per core; 1: none)");
  add_cache_flags(sub, command->cache);
  add_finding_flags(sub, command->findings);
  sub->add_option_function<std::string>(
         "--log-level",
         [](const std::string& level) {
           spdlog::set_level(level == "DEBUG"     ? spdlog::level::debug
                             : level == "WARNING" ? spdlog::level::warn
                             : level == "ERROR"   ? spdlog::level::err
                                                  : spdlog::level::info);
         },
         "DEBUG, INFO (default), WARNING or ERROR")
      ->check(CLI::IsMember({"DEBUG", "INFO", "WARNING", "ERROR"}));
  sub->footer(k_validate_footer);
  return {command->subcommand,
          [command](PythonFrontend& python) { return run_validate(*command, python); }};
}

int run_validate(const ValidateCommand& command, PythonFrontend& python) {
  if (auto misuse = check_option_combination(command)) {
    return fail(*misuse);
  }
  return command.paths.empty() ? run_dataset(command, python) : run_files(command, python);
}

} // namespace fib::app
