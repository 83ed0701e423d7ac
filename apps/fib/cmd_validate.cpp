// `fib validate`: individual files (FILE…), or a whole dataset (--dataset DIR) with the old
// tool's report files.

#include "commands.hpp"
#include "exit_status.hpp"
#include "render.hpp"

#include <fib/base/codes.hpp>
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
#include <optional>
#include <string>
#include <unistd.h>

namespace fib::app {

enum class ExitPolicy { by_findings, always_zero };

struct ValidateCommand {
  CLI::App* subcommand = nullptr;
  std::vector<std::string> paths;
  std::string kind_name = "auto";
  std::string format_name = "text";
  Strictness strictness = Strictness::normal;
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
  bool smoke = false;
  std::string device = "cpu";
  double timeout_seconds = 60;
  std::uintmax_t max_bytes = k_default_smoke_max_bytes;
  std::uintmax_t memory_limit = k_default_worker_address_space;
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

Dataset mode writes report-YYYYMMDD-HHMMSS.{json,txt} under DIR/reports (or
--output-folder) and prints the text report; fib's own findings are marked [fib].

References run in fib-worker (libtorch + Python with torch; fib itself never
loads torch): --exec builds them as the old tool does (dataset mode does it by
default unless --disable-gpu); --smoke also runs each on tiny synthesized inputs
and compares its outputs' count, shapes and dtypes with the definition.

Exit status: 0 clean or warnings only, 1 errors (or warnings with --strict),
2 usage, 3 I/O or environment (unreadable file, embedded Python unavailable,
report file exists). --exit-zero gives 0 whatever the findings, as the old tool.

Examples:
  fib validate definitions/gemm/gemm_n128_k2048.json
  fib validate --kind workload wl.jsonl --format json
  fib validate --dataset flashinfer-trace --disable-gpu
  fib validate --dataset ds --disable-gpu --shard 2/4 --outputs json
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

int report_environment(const Diagnostic& d) {
  write_line(stderr, render_text(d));
  const CodeInfo* info = find_code(d.code);
  return info != nullptr && info->exit_class == ExitClass::usage ? k_exit_usage
                                                                 : k_exit_environment;
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

// Problems that stop a run (I/O, Python) collected for the exit status.
class EnvironmentSink final : public DiagnosticSink {
public:
  void report(Diagnostic d) override {
    write_line(stderr, render_text(d));
    failed = failed || d.severity == Severity::error;
  }
  bool failed = false;
};

ReferenceRunnerOptions runner_options(const ValidateCommand& command) {
  ReferenceRunnerOptions options;
  options.job_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(command.timeout_seconds * 1000.0));
  options.device = command.device == "cuda" ? SmokeDevice::cuda : SmokeDevice::cpu;
  options.max_bytes = command.max_bytes;
  options.address_space = command.memory_limit;
  // CUDA reserves far more address space than memory (its unified address range): an
  // RLIMIT_AS sized for the CPU makes its start-up fail, so cuda runs without one unless asked.
  if (options.device == SmokeDevice::cuda && command.subcommand->count("--memory-limit") == 0) {
    options.address_space = 0;
  }
  return options;
}

// The order of the checks before scanning is the old tool's (contract §3.1): the root, the check
// names, the output targets, then fib's --shard, then the report files.
int run_dataset(const ValidateCommand& command, python::Runtime& python) {
  ValidateDatasetOptions options;
  options.root =
      command.dataset.empty() ? default_dataset_root() : std::filesystem::path(command.dataset);
  options.checks = split_commas(command.checks);
  options.gpu = command.gpu;
  options.op_types = command.op_types;
  options.definitions = command.definitions;
  std::error_code ec;
  if (!std::filesystem::is_directory(options.root, ec)) {
    return report_environment(make_diagnostic(
        codes::k_dataset_root_missing,
        fmt::format("dataset root does not exist: {}", normalize_root(options.root).string())));
  }
  auto resolved = resolve_checks(options.checks, options.gpu);
  if (!resolved) {
    return report_environment(resolved.error());
  }
  // The old tool builds references unless --disable-gpu; --exec and --smoke ask for it anyway.
  std::optional<ReferenceRunner> runner;
  const bool definition_checked =
      std::find(resolved->begin(), resolved->end(), "definition") != resolved->end();
  if (definition_checked) {
    options.reference_checks = command.smoke ? ReferenceChecks::build_and_smoke
                               : command.exec || command.gpu == GpuChecks::enabled
                                   ? ReferenceChecks::build
                                   : ReferenceChecks::none;
    options.reference_checks_requested = command.exec || command.smoke;
  }
  // The worker also builds baseline solutions and runs the benchmark category (not under
  // --disable-gpu, as the old tool).
  if (options.reference_checks != ReferenceChecks::none || options.gpu == GpuChecks::enabled) {
    runner.emplace(runner_options(command));
    options.runner = &*runner;
  }
  auto targets = parse_report_targets(command.outputs);
  if (!targets) {
    return report_environment(targets.error());
  }
  if (!command.shard.empty()) {
    auto shard = parse_shard(command.shard);
    if (!shard) {
      return report_environment(make_diagnostic(
          codes::k_usage,
          fmt::format("--shard wants K/N with 1 <= K <= N, got '{}'", command.shard)));
    }
    options.shard = *shard;
  }
  const std::filesystem::path folder = command.output_folder.empty()
                                           ? normalize_root(options.root) / "reports"
                                           : std::filesystem::path(command.output_folder);
  const ReportFiles files = report_files(folder, local_timestamp());
  if (auto busy = check_report_files_free(files, *targets)) {
    return report_environment(*busy);
  }
  if (isatty(STDERR_FILENO) != 0) {
    options.progress = [](std::size_t done, std::size_t total) {
      std::fprintf(stderr, "\rfib: checked %zu/%zu definitions", done, total);
      if (done == total) {
        std::fputs("\r\033[K", stderr);
      }
    };
  }
  EnvironmentSink environment;
  const DatasetReport report = validate_dataset(options, python, environment);
  if (auto failure = write_report_files(report, files, *targets)) {
    return report_environment(*failure);
  }
  if (targets->json_file) {
    spdlog::info("Report JSON written to {}", files.json.string());
  }
  if (targets->text_file) {
    spdlog::info("Report text written to {}", files.text.string());
  }
  if (command.format_name == "github") {
    write_all(stdout, render_github(report, normalize_root(options.root)));
  } else if (command.format_name == "json") {
    write_line(stdout, render_report_json(report));
  } else if (targets->stdout_text) {
    // The text report ends with one "\n"; print() adds another, as in the old tool.
    write_line(stdout, render_report_text(report));
  }
  if (environment.failed) {
    return k_exit_environment;
  }
  if (command.exit_policy == ExitPolicy::always_zero) {
    return k_exit_ok;
  }
  const StatusCounts counts = count_statuses(report);
  const CheckStatus dataset_status = report.dataset ? report.dataset->status : CheckStatus::ok;
  if (counts.error > 0 || dataset_status == CheckStatus::error) {
    return k_exit_findings;
  }
  if (command.strictness == Strictness::strict &&
      (counts.warning > 0 || dataset_status == CheckStatus::warning)) {
    return k_exit_findings;
  }
  return k_exit_ok;
}

int run_files(const ValidateCommand& command, python::Runtime& python) {
  ValidateFilesOptions options;
  options.paths.assign(command.paths.begin(), command.paths.end());
  for (const FileKind kind : {FileKind::automatic, FileKind::definition, FileKind::solution,
                              FileKind::workload, FileKind::trace}) {
    if (to_string(kind) == command.kind_name) {
      options.kind = kind;
    }
  }
  options.reference_checks = command.smoke  ? ReferenceChecks::build_and_smoke
                             : command.exec ? ReferenceChecks::build
                                            : ReferenceChecks::none;
  std::optional<ReferenceRunner> runner;
  if (options.reference_checks != ReferenceChecks::none) {
    runner.emplace(runner_options(command));
    options.runner = &*runner;
  }
  DiagnosticList diagnostics;
  const ValidateSummary summary = validate_files(options, python, diagnostics);
  if (command.format_name == "json") {
    write_line(stdout, render_json(diagnostics.items()));
  } else {
    for (const Diagnostic& d : diagnostics.items()) {
      const std::string line = command.format_name == "github" ? render_github(d) : render_text(d);
      if (!line.empty()) {
        write_line(stdout, line);
      }
    }
  }
  const std::string line =
      fmt::format("fib validate: {} file{} checked: {} error{}, {} warning{}, {} note{}",
                  summary.files, summary.files == 1 ? "" : "s", summary.errors,
                  summary.errors == 1 ? "" : "s", summary.warnings,
                  summary.warnings == 1 ? "" : "s", summary.notes, summary.notes == 1 ? "" : "s");
  write_line(command.format_name == "text" ? stdout : stderr, line);
  if (summary.environment_failed) {
    return k_exit_environment;
  }
  if (command.exit_policy == ExitPolicy::always_zero) {
    return k_exit_ok;
  }
  if (summary.errors > 0 || (command.strictness == Strictness::strict && summary.warnings > 0)) {
    return k_exit_findings;
  }
  return k_exit_ok;
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
                  "Output: text (default), json, or github (Actions annotations)")
      ->check(CLI::IsMember({"text", "json", "github"}));
  sub->add_flag_callback(
      "--strict", [command] { command->strictness = Strictness::strict; },
      "Exit 1 on warnings too");
  sub->add_flag_callback(
      "--exit-zero", [command] { command->exit_policy = ExitPolicy::always_zero; },
      "Exit 0 whatever the findings (the old tool's behaviour)");
  sub->add_flag("--exec", command->exec,
                "Build each reference in fib-worker (import, `run`, arity); on by default with "
                "--dataset unless --disable-gpu");
  sub->add_flag("--smoke", command->smoke,
                "Also run each reference on tiny synthesized inputs and compare its outputs' "
                "count, shapes and dtypes (implies --exec)");
  sub->add_option("--device", command->device, "Where --smoke runs: cpu (default) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  sub->add_option("--timeout", command->timeout_seconds,
                  "Seconds one reference may run (the worker is then restarted; default 60)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--max-bytes", command->max_bytes,
                  "Skip a smoke run whose inputs and outputs need more bytes (default 256 MiB)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--memory-limit", command->memory_limit,
                  "Address-space limit of the worker in bytes (default 8 GiB)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--dataset", command->dataset, "Dataset mode: the dataset root");
  sub->add_option("--checks", command->checks,
                  "Comma-separated categories: layout, definition, workload, solution, trace, "
                  "baseline, benchmark (default: all; without benchmark under --disable-gpu)");
  sub->add_flag_callback(
      "--disable-gpu", [command] { command->gpu = GpuChecks::disabled; },
      "Skip what needs a GPU: reference and baseline builds, the benchmark category");
  sub->add_option("--op-types", command->op_types, "Only definitions of these op_type dirs");
  sub->add_option("--definitions", command->definitions, "Only these definitions");
  sub->add_option("--output-folder", command->output_folder,
                  "Where report files go (default: DATASET/reports)");
  sub->add_option("--outputs", command->outputs,
                  "Comma-separated: stdout, json, text (default: all three)");
  sub->add_option("--shard", command->shard,
                  "Check only shard K of N (K/N, 1-based; split by definition name)");
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
          [command](python::Runtime& python) { return run_validate(*command, python); }};
}

// Options that only dataset mode reads; with paths they are a usage error rather than ignored.
constexpr std::array k_dataset_only_options = {"--checks",      "--disable-gpu",   "--op-types",
                                               "--definitions", "--output-folder", "--outputs",
                                               "--shard"};

int run_validate(const ValidateCommand& command, python::Runtime& python) {
  const auto given = [&](const char* option) { return command.subcommand->count(option) > 0; };
  if (!command.smoke && (given("--device") || given("--max-bytes"))) {
    return report_environment(
        make_diagnostic(codes::k_usage, "--device and --max-bytes need --smoke"));
  }
  const bool references_run =
      command.exec || command.smoke || (command.paths.empty() && command.gpu == GpuChecks::enabled);
  if (!references_run && (given("--timeout") || given("--memory-limit"))) {
    return report_environment(make_diagnostic(
        codes::k_usage, "--timeout and --memory-limit need --exec or --smoke (or dataset mode "
                        "without --disable-gpu, which builds references)"));
  }
  if (!command.paths.empty()) {
    if (command.subcommand->count("--dataset") > 0) {
      return report_environment(
          make_diagnostic(codes::k_usage, "give either paths or --dataset, not both"));
    }
    for (const char* option : k_dataset_only_options) {
      if (command.subcommand->count(option) > 0) {
        return report_environment(make_diagnostic(
            codes::k_usage,
            fmt::format("{} is a dataset-mode option; it cannot be used with paths", option)));
      }
    }
    return run_files(command, python);
  }
  if (command.subcommand->count("--kind") > 0) {
    return report_environment(make_diagnostic(
        codes::k_usage, "--kind is a file-mode option; it needs paths and cannot be used with a "
                        "dataset"));
  }
  return run_dataset(command, python);
}

} // namespace fib::app
