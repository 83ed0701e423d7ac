// `fib dump`: the trace-dump pass, and optionally the rest of onboarding what it dumped
// (normalize, stage, tag, validate) in the same command.

#include "commands.hpp"
#include "exit_status.hpp"
#include "normalize_flags.hpp"
#include "option_checks.hpp"
#include "render.hpp"
#include "smoke_flags.hpp"
#include "staging_flags.hpp"

#include <fib/base/codes.hpp>
#include <fib/dump/dump.hpp>
#include <fib/model/dataset_layout.hpp>
#include <fib/tag/tags.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

namespace fib::app {

struct DumpCommand {
  CLI::App* subcommand = nullptr;
  std::string out;
  bool clean = false;
  bool keep = false;
  double timeout_seconds = 0;
  std::vector<std::string> command;
  bool sglang = false;
  std::string model;
  int tp = 1;
  int ep = 0;
  std::vector<int> page_sizes;     // --page-size P[,P…]: one run per page size
  std::vector<std::string> passes; // --pass NAME[,NAME…]
  std::string prompt = "The capital of France is";
  int max_new_tokens = 4;
  double mem_fraction = 0.5;
  std::string python = "python3";
  bool print_harness = false;
  std::string stage;
  bool normalize = false;
  std::string decisions;
  std::vector<std::string> disabled_rules;
  std::string flashinfer_src;
  std::vector<std::string> tags;
  std::string model_slug;
  StagingFlags staging;   // --on-conflict, --exclude, --force, --drop-curated (with --stage)
  SmokeFlags smoke;       // --smoke: the runnable verdict of every staged definition
  bool workloads = false; // --workloads: Level-10 dumps beside, collected
  std::vector<std::string> workloads_include; // --workloads-include PATTERN
  bool workloads_known_apis = false;          // --workloads-known-apis (with --stage)
  std::int64_t workloads_max_count = 50'000;
  double workloads_max_gb = 30;
  std::size_t max_workloads = k_default_max_workloads;
  std::vector<std::string> scalars; // --scalar (with --workloads --stage)
};

namespace {

constexpr const char* k_dump_footer =
    R"TXT(Runs COMMAND (after `--`) with FLASHINFER_TRACE_DUMP=1 and
FLASHINFER_TRACE_DUMP_DIR=<absolute DIR> in its environment from the start, so
before any import. Its output streams through. Afterwards fib lists the
definitions in DIR (new, rewritten or kept) and reports every truncated or
invalid JSON by name. Existing dumps are kept unless --clean (which refuses a
directory holding anything but *.json files, and with --workloads a level10/
directory of Level-10 calls, which it removes too).

--sglang generates an SGLang harness (attention backend flashinfer, CUDA
graphs off, engine shut down) and runs it with --python, once per pass and
page size: --pass serve (radix cache off, a short greedy generate: ragged
prefill, decode) and/or paged-prefill (radix cache on, deterministic
inference, requests extending a cached prefix), --page-size 1,16,64 for a
sweep. Default pass: serve; with --workloads, serve,paged-prefill. --timeout
applies to each run. --print-harness only prints the script (of one run: pick
it with --pass and --page-size).

--stage DATASET onboards what this run dumped: --normalize (optional),
fib stage into DATASET/definitions/<op_type>/ (--on-conflict fail by default;
skip stages the rest, overwrite replaces, with --force and --drop-curated as
in fib stage; --exclude GLOB leaves dumped files out), tags (--tag, plus
model:<slug>, tp:N and ep:N from the --sglang flags; --model-slug sets the
slug), then validates exactly those definitions (layout, definition). Two
dumps of one name: rename one with a decisions entry for its file
({"files": {"PATH": {"name": ...}}}, --decisions with --normalize), leave it
out with --exclude, or --on-conflict skip.
With --smoke each staged definition also runs on tiny synthesized inputs in
the sandboxed worker (--smoke-timeout, --device, --max-bytes, --memory-limit,
--unsafe-no-sandbox as fib validate's): each staged line ends with its
verdict (runnable, not runnable here, fails when run, needs a decision) and
the last line says how many are runnable.

--workloads also turns on FlashInfer's Level-10 tensor dumps for the child
(FLASHINFER_LOGLEVEL=10, FLASHINFER_DUMP_DIR=DIR/level10,
FLASHINFER_DUMP_SAFETENSORS=1, FLASHINFER_DUMP_EXCLUDE=*.__init__, count and size
limits per process); the serve pass then serves batches of 1, 4, 16 and 64
distinct prompts and three sampling passes with sampling_backend flashinfer,
the paged-prefill pass those batches on two prefix lengths. With
--stage, workloads of the staged definitions are collected from it as
`fib collect DIR/level10 --dataset DATASET --definitions ...` would.

Exit status: 0 dumped (and staged, tagged, valid), 1 the command failed or
timed out, nothing was dumped, a dump is invalid, a staging conflict, a
staged definition does not validate, or (--workloads) a staged definition got
no workload, 2 usage, 3 I/O or environment (the
command could not be started).

Examples:
  fib dump --out /tmp/fi_dumps --clean -- python3 my_harness.py
  fib dump --sglang --model meta-llama/Llama-3.2-3B-Instruct --tp 2 --out /tmp/fi_dumps \
           --stage tmp/flashinfer-trace --normalize --tag status:verified
  fib dump --sglang --model Qwen/Qwen3-30B-A3B --ep 2 --out d --print-harness > harness.py
  fib dump --sglang --model meta-llama/Llama-3.1-8B-Instruct --out d --clean --workloads \
           --page-size 1,16 --stage tmp/flashinfer-trace --normalize --max-workloads 8)TXT";

int usage(std::string message) {
  write_diagnostic(stderr, make_diagnostic(codes::k_usage, std::move(message)));
  return k_exit_usage;
}

// The tags --stage adds: --tag, then model/tp/ep derived from the flags.
std::vector<std::string> staging_tags(const DumpCommand& command) {
  std::vector<std::string> tags = command.tags;
  std::string slug = command.model_slug;
  if (slug.empty() && command.sglang) {
    slug = model_slug(command.model);
  }
  if (!slug.empty()) {
    tags.push_back("model:" + slug);
  }
  if (command.sglang) {
    tags.push_back(fmt::format("tp:{}", command.tp));
    if (command.ep > 0) {
      tags.push_back(fmt::format("ep:{}", command.ep));
    }
  }
  return tags;
}

void print_validation(const DatasetReport& report) {
  for (const auto& [name, definition] : report.definitions) {
    write_line(stdout, fmt::format("{:<12}{}", to_string(definition.status), name));
    for (const auto& category : definition.categories) {
      if (!category) {
        continue;
      }
      for (const auto& message : category->messages) {
        if (message.level == CheckLevel::error) {
          std::string text = message.message;
          std::replace(text.begin(), text.end(), '\n', ' ');
          write_line(stdout, fmt::format("              {}", text));
        }
      }
    }
  }
  const auto counts = count_statuses(report);
  write_line(stderr, fmt::format("fib dump: validation of the staged definitions: {} ok, {} with "
                                 "warnings, {} with errors",
                                 counts.ok, counts.warning, counts.error));
}

// The cross-option rules CLI11 cannot say with the messages fib gives: the usage error, or
// nullopt when the options fit together.
std::optional<std::string> validate_dump_options(const DumpCommand& command) {
  if (command.sglang == !command.command.empty()) {
    return command.sglang ? "--sglang generates its own command; give no command after --"
                          : "fib dump needs a command after `--` (or --sglang)";
  }
  const auto given = [&](const char* option) { return command.subcommand->count(option) > 0; };
  if (!command.sglang) {
    for (const char* option :
         {"--model", "--tp", "--ep", "--page-size", "--pass", "--prompt", "--max-new-tokens",
          "--mem-fraction", "--python", "--print-harness"}) {
      if (given(option)) {
        return fmt::format("{} needs --sglang", option);
      }
    }
  } else if (command.model.empty()) {
    return "--sglang needs --model HF_ID";
  }
  if (command.stage.empty()) {
    for (const char* option : {"--normalize", "--tag", "--model-slug", "--on-conflict", "--exclude",
                               "--force", "--drop-curated", "--smoke"}) {
      if (given(option)) {
        return fmt::format("{} needs --stage DATASET", option);
      }
    }
  }
  if (!command.normalize &&
      (given("--decisions") || given("--no-rule") || given("--flashinfer-src"))) {
    return "--decisions, --no-rule and --flashinfer-src need --normalize";
  }
  if (auto misuse = overwrite_flags_misuse(command.staging)) {
    return misuse;
  }
  if (!command.workloads) {
    for (const char* option :
         {"--workloads-include", "--workloads-known-apis", "--workloads-max-count",
          "--workloads-max-gb", "--max-workloads", "--scalar"}) {
      if (given(option)) {
        return fmt::format("{} needs --workloads", option);
      }
    }
  } else if (command.stage.empty() &&
             (given("--max-workloads") || given("--scalar") || command.workloads_known_apis)) {
    return "--max-workloads, --scalar and --workloads-known-apis need --stage DATASET (they "
           "choose what is collected)";
  }
  if (!(command.mem_fraction > 0.0 && command.mem_fraction <= 1.0)) { // NaN too
    return "--mem-fraction must be above 0 and at most 1";
  }
  if (command.sglang) {
    SglangHarness values;
    values.model = command.model;
    values.prompt = command.prompt;
    values.dump_directory = command.out;
    if (const auto option = harness_value_not_utf8(values)) {
      return fmt::format("{} is not valid UTF-8 (the SGLang harness writes it into its Python "
                         "source)",
                         *option);
    }
  }
  if (auto misuse =
          check_smoke_flags(command.subcommand, command.smoke, TimeoutFlag::smoke_timeout)) {
    return misuse->message;
  }
  return std::nullopt;
}

// The options of the dump itself (not the staging).
DumpOptions dump_options(const DumpCommand& command) {
  DumpOptions options;
  options.out = command.out;
  options.existing = command.clean ? ExistingDumps::clean : ExistingDumps::keep;
  if (command.timeout_seconds > 0) {
    options.timeout =
        std::chrono::milliseconds(static_cast<std::int64_t>(command.timeout_seconds * 1000.0));
  }
  options.source = command.sglang ? DumpSource::sglang : DumpSource::command;
  options.command = command.command;
  options.python = command.python;
  options.sglang.model = command.model;
  options.sglang.tp = command.tp;
  if (command.ep > 0) {
    options.sglang.ep = command.ep;
  }
  std::vector<HarnessPass> passes;
  for (const std::string& name : command.passes) {
    if (const auto pass = parse_enum<HarnessPass>(name)) {
      passes.push_back(*pass); // CLI11 checked the names
    }
  }
  if (passes.empty()) {
    passes = command.workloads ? std::vector{HarnessPass::serve, HarnessPass::paged_prefill}
                               : std::vector{HarnessPass::serve};
  }
  options.sglang_runs = plan_sglang_runs(passes, command.page_sizes);
  options.sglang.prompt = command.prompt;
  options.sglang.max_new_tokens = command.max_new_tokens;
  options.sglang.mem_fraction = command.mem_fraction;
  if (command.workloads) {
    WorkloadDump workloads;
    workloads.include = command.workloads_include;
    workloads.max_count = command.workloads_max_count;
    workloads.max_size_gb = command.workloads_max_gb;
    workloads.collect.write.policy.max_workloads = command.max_workloads;
    options.workloads = std::move(workloads);
    options.sglang.workloads = true;
  }
  return options;
}

// --workloads-known-apis: FLASHINFER_DUMP_INCLUDE gains the patterns of the APIs the dataset's
// definitions name. The exit status to stop with (nothing was run), or nullopt to go on.
std::optional<int> include_known_apis(const DumpCommand& command, DumpOptions& options) {
  DiagnosticList found;
  auto targets = dataset_api_targets(options.dataset, {}, found);
  for (const Diagnostic& d : found.items()) {
    write_diagnostic(stderr, d);
  }
  if (!targets) {
    write_diagnostic(stderr, targets.error());
    return exit_status(std::vector<Diagnostic>{targets.error()});
  }
  const std::vector<std::string> patterns = dump_include_patterns(*targets);
  if (patterns.empty()) {
    return usage(fmt::format("--workloads-known-apis: no definition of {} has an fi_api: tag, so "
                             "no API is known (nothing was run)",
                             command.stage));
  }
  std::vector<std::string>& include = options.workloads->include;
  for (const std::string& pattern : patterns) {
    if (std::find(include.begin(), include.end(), pattern) == include.end()) {
      include.push_back(pattern);
    }
  }
  return std::nullopt;
}

// --stage: the dataset, the tags (checked) and the normalize flags. Problems are printed before
// anything runs; the exit status to stop with, or nullopt to go on.
std::optional<int> stage_options(const DumpCommand& command, DumpOptions& options,
                                 NormalizeDecisions& decisions) {
  options.dataset = command.stage;
  options.tags = staging_tags(command);
  apply_staging_flags(command.staging, options);
  std::vector<Diagnostic> problems = check_tag_operands(options.tags);
  for (Diagnostic& problem : problems) {
    problem.message += " (nothing was run)";
    write_diagnostic(stderr, problem);
  }
  if (count_diagnostics(problems).errors > 0) {
    return exit_status(problems);
  }
  if (const auto problem = dataset_root_problem(options.dataset)) {
    const Diagnostic d = make_diagnostic(
        codes::k_dataset_root_missing,
        fmt::format("dataset root {}: {} (nothing was run)", *problem, command.stage));
    write_diagnostic(stderr, d);
    return exit_status(std::vector<Diagnostic>{d});
  }
  if (command.workloads_known_apis) {
    if (auto stop = include_known_apis(command, options)) {
      return stop;
    }
  }
  if (!command.normalize) {
    return std::nullopt;
  }
  options.normalize = StageNormalize::yes;
  return apply_normalize_flags({command.disabled_rules, command.decisions, command.flashinfer_src},
                               decisions, options.normalize_options);
}

// The dumped files (stdout) and their problems (stderr), then the summary line.
void print_dump(const DumpResult& result) {
  for (const auto& d : result.diagnostics) {
    write_diagnostic(stderr, d);
  }
  std::map<DumpFileState, std::size_t> states;
  std::size_t invalid = 0;
  for (const auto& file : result.files) {
    if (file.problem) {
      ++invalid;
      write_diagnostic(stderr, *file.problem);
      write_line(stdout, fmt::format("{:<12}{}", "invalid", file.file.filename().string()));
      continue;
    }
    ++states[file.state];
    write_line(stdout, fmt::format("{:<12}{}/{}", to_string(file.state), file.op_type, file.name));
  }
  if (!result.runs.empty() && result.runs.front().child.started) {
    write_line(stderr,
               fmt::format("fib dump: {} in {}: {} new, {} rewritten, {} kept, {} invalid; "
                           "{}: {}",
                           result.files.size() == 1 ? "1 file"
                                                    : fmt::format("{} files", result.files.size()),
                           result.out.string(), states[DumpFileState::created],
                           states[DumpFileState::rewritten], states[DumpFileState::kept], invalid,
                           result.runs.size() == 1 ? "the command" : "the runs",
                           describe_runs(result.runs)));
  }
}

// What staging, tagging and validation did; with --smoke, each staged line's verdict and, last,
// how many are runnable.
void print_staging(const DumpResult& result, const std::filesystem::path& dataset,
                   const std::optional<StagedRunnable>& runnable) {
  if (result.staged) {
    for (const auto& d : result.staged->diagnostics) {
      write_diagnostic(stderr, d);
    }
    SmokePrinter smoke_printer(SmokeNotes::hidden);
    for (std::size_t i = 0; i < result.staged->entries.size(); ++i) {
      const auto& entry = result.staged->entries[i];
      for (const auto& d : entry.diagnostics) {
        write_diagnostic(stderr, d);
      }
      const auto& check = runnable ? runnable->checks[i] : std::nullopt;
      if (check) {
        smoke_printer.print(*check);
      }
      write_line(stdout, render_stage_line(entry, result.staged->summary) + verdict_suffix(check));
    }
    write_line(stderr, fmt::format("fib dump: staged into {}: {}{}", dataset.string(),
                                   render_stage_counts(*result.staged),
                                   result.staged->summary.blocked_by_conflicts
                                       ? " (nothing written: a conflict)"
                                       : ""));
  }
  for (const auto& file : result.tagged_files) {
    for (const auto& d : file.diagnostics) {
      write_diagnostic(stderr, d);
    }
    write_line(stdout, fmt::format("{:<12}{}: {}", "tagged", file.file.relative.generic_string(),
                                   render_tag_change(file)));
  }
  for (const auto& d : result.validation_environment) {
    write_diagnostic(stderr, d);
  }
  if (result.validation) {
    print_validation(*result.validation);
  }
  if (runnable) {
    write_line(stderr, fmt::format("fib dump: of the staged definitions: {}",
                                   render_counts(runnable->counts)));
  }
  for (const auto& d : result.collect_diagnostics) {
    write_diagnostic(stderr, d);
  }
  if (result.collected) {
    write_all(stdout, render_collect_report(*result.collected, DryRun::no));
  }
}

// --smoke: the verdicts of what was staged; nullopt without --smoke or when nothing was staged.
std::optional<StagedRunnable> smoke_staged(const DumpCommand& command, const DumpResult& result,
                                           const std::filesystem::path& dataset) {
  if (!command.smoke.smoke || !result.staged) {
    return std::nullopt;
  }
  ReferenceRunner runner(smoke_runner_options(command.subcommand, command.smoke));
  return check_staged_runnable(*result.staged, dataset, runner);
}

} // namespace

Subcommand register_dump(CLI::App& app) {
  auto command = std::make_shared<DumpCommand>();
  CLI::App* sub = app.add_subcommand(
      "dump", "Run a FlashInfer trace-dump pass (and optionally stage, tag and validate it)");
  command->subcommand = sub;
  sub->add_option("--out", command->out, "The dump directory (created when missing)")->required();
  auto* clean = sub->add_flag("--clean", command->clean,
                              "Remove the *.json files of DIR first (refused if it holds "
                              "anything else)");
  auto* keep = sub->add_flag("--keep", command->keep, "Keep existing dumps (the default)");
  clean->excludes(keep);
  sub->add_option("--timeout", command->timeout_seconds,
                  "Kill the command (its whole process group) after S seconds")
      ->check(positive_number("number of seconds"));
  sub->add_option("command", command->command, "The command to run, after `--`");
  sub->add_flag("--sglang", command->sglang,
                "Generate and run an SGLang harness (one short generation)");
  sub->add_option("--model", command->model, "With --sglang: Hugging Face id or local path");
  sub->add_option("--tp", command->tp, "With --sglang: tensor parallel size (default 1)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--ep", command->ep, "With --sglang: expert parallel size")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--page-size", command->page_sizes,
                  "With --sglang: KV-cache page size; several (comma-separated or repeated) "
                  "sweep: one run of each pass per page size")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20))
      ->type_name("P[,P...]");
  sub->add_option("--pass", command->passes,
                  "With --sglang: what each run serves, serve and/or paged-prefill (default: "
                  "serve; with --workloads: serve,paged-prefill)")
      ->delimiter(',')
      ->check(CLI::IsMember({"serve", "paged-prefill"}))
      ->type_name("NAME[,NAME...]");
  sub->add_option("--prompt", command->prompt, "With --sglang: the prompt to generate from");
  sub->add_option("--max-new-tokens", command->max_new_tokens,
                  "With --sglang: tokens to generate (default 4)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--mem-fraction", command->mem_fraction,
                  "With --sglang: mem_fraction_static, in (0, 1] (default 0.5)")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--python", command->python,
                  "With --sglang: the interpreter that has sglang (default python3)");
  sub->add_flag("--print-harness", command->print_harness,
                "With --sglang: print the harness of the one run on stdout; run nothing");
  sub->add_option("--stage", command->stage,
                  "Stage what was dumped into this dataset, tag and validate it");
  sub->add_flag("--normalize", command->normalize, "With --stage: normalize on the way in");
  sub->add_option("--decisions", command->decisions, "With --normalize: a decisions file");
  sub->add_option("--no-rule", command->disabled_rules,
                  "With --normalize: do not apply this W rule (repeatable)")
      ->allow_extra_args(false);
  add_flashinfer_src_option(*sub, command->flashinfer_src, "With --normalize: ");
  sub->add_option("--tag", command->tags, "With --stage: add this tag (repeatable)")
      ->allow_extra_args(false);
  add_staging_flags(*sub, command->staging, StagingHelp::dump);
  sub->add_option("--model-slug", command->model_slug,
                  "With --stage: the slug of the model:<slug> tag (default: from --model)");
  sub->add_flag("--workloads", command->workloads,
                "Also dump the API calls' tensors (FlashInfer Level-10) into DIR/level10 and, "
                "with --stage, collect workloads for the staged definitions");
  sub->add_option("--workloads-include", command->workloads_include,
                  "With --workloads: dump only calls whose logged name matches (fnmatch; "
                  "repeatable; default every API)")
      ->type_name("PATTERN")
      ->allow_extra_args(false);
  sub->add_flag("--workloads-known-apis", command->workloads_known_apis,
                "With --workloads --stage: dump only the calls of the APIs the dataset's "
                "definitions name in their fi_api: tags (more workloads for definitions already "
                "onboarded)");
  sub->add_option("--workloads-max-count", command->workloads_max_count,
                  "With --workloads: FLASHINFER_DUMP_MAX_COUNT, calls per process (default 50000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  sub->add_option("--workloads-max-gb", command->workloads_max_gb,
                  "With --workloads: FLASHINFER_DUMP_MAX_SIZE_GB, per process (default 30)")
      ->check(CLI::Range(0.001, 1e6));
  sub->add_option("--max-workloads", command->max_workloads,
                  "With --workloads --stage: new workloads per definition (default 20)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--scalar", command->scalars,
                  "With --workloads --stage: a scalar the dump does not hold, NAME=VALUE or "
                  "DEFINITION:NAME=VALUE (repeatable)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  add_smoke_flags(sub, command->smoke,
                  "With --stage: also run each staged definition on tiny synthesized inputs and "
                  "say whether it is runnable",
                  TimeoutFlag::smoke_timeout);
  sub->footer(k_dump_footer);
  return {command->subcommand,
          [command](PythonFrontend& python) { return run_dump(*command, python); }};
}

int run_dump(const DumpCommand& command, PythonFrontend& python) {
  if (auto problem = validate_dump_options(command)) {
    return usage(std::move(*problem));
  }
  DumpOptions options = dump_options(command);
  for (const std::string& text : command.scalars) {
    auto answer = parse_scalar_answer(text);
    if (!answer) {
      write_diagnostic(stderr, answer.error());
      return k_exit_usage;
    }
    options.workloads->collect.candidates.scalars.push_back(std::move(*answer));
  }
  if (command.print_harness) {
    // One script is one run: scripts of several runs joined in one file would start their
    // engines in one process, after the first one's imports.
    if (options.sglang_runs.size() > 1) {
      std::string runs;
      for (const SglangRun& run : options.sglang_runs) {
        runs += (runs.empty() ? "" : "; ") + describe_run(run);
      }
      return usage(fmt::format("--print-harness prints the script of one run, and this "
                               "invocation has {} ({}): choose one with --pass and --page-size",
                               options.sglang_runs.size(), runs));
    }
    SglangHarness harness = options.sglang;
    std::error_code ec;
    harness.dump_directory = std::filesystem::absolute(command.out, ec).lexically_normal();
    harness.pass = options.sglang_runs.front().pass;
    harness.page_size = options.sglang_runs.front().page_size;
    write_all(stdout, render_sglang_harness(harness));
    return k_exit_ok;
  }
  NormalizeDecisions decisions; // options.normalize_options points at it
  if (!command.stage.empty()) {
    if (auto stop = stage_options(command, options, decisions)) {
      return *stop;
    }
  }
  const auto progress = [](std::string_view line) {
    write_line(stderr, fmt::format("fib dump: {}", line));
  };
  const DumpResult result = run_trace_dump(options, python, progress);
  const std::optional<StagedRunnable> runnable = smoke_staged(command, result, options.dataset);
  std::fflush(stdout);
  print_dump(result);
  print_staging(result, options.dataset, runnable);
  DiagnosticCounts counts = count_dump_diagnostics(result);
  // A smoke run failing is an outcome (exit 1); the worker not being usable is the environment.
  const DiagnosticCounts smoke = count_smoke_diagnostics(runnable);
  counts.environment_errors += smoke.environment_errors;
  counts.errors += smoke.environment_errors;
  const bool failed =
      dump_found_problems(result) || (runnable && runnable->counts.fails_when_run > 0);
  return exit_status(counts, Strictness::normal, failed ? Outcome::failed : Outcome::clean);
}

} // namespace fib::app
