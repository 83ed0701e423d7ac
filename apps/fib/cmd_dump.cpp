// `fib dump`: the trace-dump pass, and optionally the whole Path A (normalize, stage, tag,
// validate) in one command.

#include "commands.hpp"
#include "exit_status.hpp"
#include "normalize_flags.hpp"
#include "render.hpp"

#include <fib/base/codes.hpp>
#include <fib/dump/dump.hpp>
#include <fib/tag/tags.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

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
  int page_size = 0;
  std::string prompt = "The capital of France is";
  int max_new_tokens = 4;
  double mem_fraction = 0.5;
  std::string python = "python3";
  bool print_harness = false;
  std::string stage;
  bool normalize = false;
  std::string decisions;
  std::vector<std::string> disabled_rules;
  std::vector<std::string> tags;
  std::string model_slug;
};

namespace {

constexpr const char* k_dump_footer =
    R"TXT(Runs COMMAND (after `--`) with FLASHINFER_TRACE_DUMP=1 and
FLASHINFER_TRACE_DUMP_DIR=<absolute DIR> in its environment from the start, so
before any import. Its output streams through. Afterwards fib lists the
definitions in DIR (new, rewritten or kept) and reports every truncated or
invalid JSON by name. Existing dumps are kept unless --clean (which refuses a
directory holding anything but *.json files).

--sglang generates the SGLang harness of the workflow's step A2 (attention
backend flashinfer, CUDA graphs and radix cache off, a short greedy generate,
engine shut down) and runs it with --python; --print-harness only prints it.

--stage DATASET runs Path A on what this run dumped: --normalize (optional),
fib stage into DATASET/definitions/<op_type>/ (--on-conflict fail), tags
(--tag, plus model:<slug>, tp:N and ep:N from the --sglang flags; --model-slug
sets the slug), then validates exactly those definitions (layout, definition).

Exit status: 0 dumped (and staged, tagged, valid), 1 the command failed or
timed out, nothing was dumped, a dump is invalid, a staging conflict, or a
staged definition does not validate, 2 usage, 3 I/O or environment (the
command could not be started).

Examples:
  fib dump --out /tmp/fi_dumps --clean -- python3 my_harness.py
  fib dump --sglang --model meta-llama/Llama-3.2-3B-Instruct --tp 2 --out /tmp/fi_dumps \
           --stage tmp/flashinfer-trace --normalize --tag status:verified
  fib dump --sglang --model Qwen/Qwen3-30B-A3B --ep 2 --out d --print-harness > harness.py)TXT";

int usage(std::string message) {
  write_line(stderr, render_text(make_diagnostic(codes::k_usage, std::move(message))));
  return k_exit_usage;
}

// The tags Path A adds: --tag, then model/tp/ep derived from the flags.
std::vector<std::string> path_a_tags(const DumpCommand& command) {
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
      ->check(CLI::PositiveNumber);
  sub->add_option("command", command->command, "The command to run, after `--`");
  sub->add_flag("--sglang", command->sglang, "Generate and run the SGLang harness of step A2");
  sub->add_option("--model", command->model, "With --sglang: Hugging Face id or local path");
  sub->add_option("--tp", command->tp, "With --sglang: tensor parallel size (default 1)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--ep", command->ep, "With --sglang: expert parallel size")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--page-size", command->page_size, "With --sglang: KV-cache page size")
      ->check(CLI::Range(1, 1 << 20));
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
                "With --sglang: print the harness on stdout; run nothing");
  sub->add_option("--stage", command->stage,
                  "Path A: stage what was dumped into this dataset, tag and validate it");
  sub->add_flag("--normalize", command->normalize, "With --stage: normalize on the way in");
  sub->add_option("--decisions", command->decisions, "With --normalize: a decisions file");
  sub->add_option("--no-rule", command->disabled_rules,
                  "With --normalize: do not apply this W rule (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--tag", command->tags, "With --stage: add this tag (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--model-slug", command->model_slug,
                  "With --stage: the slug of the model:<slug> tag (default: from --model)");
  sub->footer(k_dump_footer);
  return {command->subcommand,
          [command](python::Runtime& python) { return run_dump(*command, python); }};
}

int run_dump(const DumpCommand& command, python::Runtime& python) {
  if (command.sglang == !command.command.empty()) {
    return usage(command.sglang ? "--sglang generates its own command; give no command after --"
                                : "fib dump needs a command after `--` (or --sglang)");
  }
  const auto sub = command.subcommand;
  const auto given = [&](const char* option) { return sub->count(option) > 0; };
  if (!command.sglang) {
    for (const char* option :
         {"--model", "--tp", "--ep", "--page-size", "--prompt", "--max-new-tokens",
          "--mem-fraction", "--python", "--print-harness"}) {
      if (given(option)) {
        return usage(fmt::format("{} needs --sglang", option));
      }
    }
  } else if (command.model.empty()) {
    return usage("--sglang needs --model HF_ID");
  }
  if (command.stage.empty()) {
    for (const char* option : {"--normalize", "--tag", "--model-slug"}) {
      if (given(option)) {
        return usage(fmt::format("{} needs --stage DATASET", option));
      }
    }
  }
  if (!command.normalize && (given("--decisions") || given("--no-rule"))) {
    return usage("--decisions and --no-rule need --normalize");
  }
  if (command.mem_fraction <= 0.0) {
    return usage("--mem-fraction must be above 0");
  }

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
  if (command.page_size > 0) {
    options.sglang.page_size = command.page_size;
  }
  options.sglang.prompt = command.prompt;
  options.sglang.max_new_tokens = command.max_new_tokens;
  options.sglang.mem_fraction = command.mem_fraction;

  if (command.print_harness) {
    SglangHarness harness = options.sglang;
    std::error_code ec;
    harness.dump_directory = std::filesystem::absolute(command.out, ec).lexically_normal();
    write_all(stdout, render_sglang_harness(harness));
    return k_exit_ok;
  }

  NormalizeDecisions decisions;
  if (!command.stage.empty()) {
    options.dataset = command.stage;
    options.tags = path_a_tags(command);
    bool malformed = false;
    for (const auto& tag : options.tags) {
      if (auto problem = check_tag(tag)) {
        problem->message += " (nothing was run)";
        write_line(stderr, render_text(*problem));
        malformed = malformed || problem->severity == Severity::error;
      }
    }
    if (malformed) {
      return k_exit_findings;
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(options.dataset, ec)) {
      Diagnostic d = make_diagnostic(
          codes::k_dataset_root_missing,
          fmt::format("dataset root does not exist: {} (nothing was run)", command.stage));
      write_line(stderr, render_text(d));
      return k_exit_environment;
    }
    if (command.normalize) {
      options.normalize = StageNormalize::yes;
      if (auto stop = apply_normalize_flags(command.disabled_rules, command.decisions, decisions,
                                            options.normalize_options)) {
        return *stop;
      }
    }
  }

  const auto progress = [](std::string_view line) {
    write_line(stderr, fmt::format("fib dump: {}", line));
  };
  const DumpResult result = run_trace_dump(options, python, progress);
  std::fflush(stdout);

  for (const auto& d : result.diagnostics) {
    write_line(stderr, render_text(d));
  }
  std::size_t created = 0;
  std::size_t rewritten = 0;
  std::size_t kept = 0;
  std::size_t invalid = 0;
  for (const auto& file : result.files) {
    if (file.problem) {
      ++invalid;
      write_line(stderr, render_text(*file.problem));
      write_line(stdout, fmt::format("{:<12}{}", "invalid", file.file.filename().string()));
      continue;
    }
    created += file.state == DumpFileState::created ? 1 : 0;
    rewritten += file.state == DumpFileState::rewritten ? 1 : 0;
    kept += file.state == DumpFileState::kept ? 1 : 0;
    write_line(stdout, fmt::format("{:<12}{}/{}", to_string(file.state), file.op_type, file.name));
  }
  if (result.child.started) {
    write_line(stderr,
               fmt::format("fib dump: {} in {}: {} new, {} rewritten, {} kept, {} invalid; "
                           "the command: {}",
                           result.files.size() == 1 ? "1 file"
                                                    : fmt::format("{} files", result.files.size()),
                           result.out.string(), created, rewritten, kept, invalid,
                           describe_outcome(result.child)));
  }
  bool findings =
      invalid > 0 || std::any_of(result.diagnostics.begin(), result.diagnostics.end(),
                                 [](const Diagnostic& d) { return d.severity == Severity::error; });
  if (result.staged) {
    for (const auto& entry : result.staged->entries) {
      for (const auto& d : entry.diagnostics) {
        write_line(stderr, render_text(d));
      }
      write_line(stdout, render_stage_line(entry));
    }
    const auto& s = result.staged->summary;
    write_line(stderr, fmt::format("fib dump: staged into {}: {} added, {} unchanged, {} "
                                   "conflict{}, {} rejected{}",
                                   options.dataset.string(), s.added, s.unchanged, s.conflicts,
                                   s.conflicts == 1 ? "" : "s", s.rejected,
                                   s.blocked_by_conflicts ? " (nothing written: a conflict)" : ""));
    findings = findings || s.conflicts > 0 || s.rejected > 0;
  }
  for (const auto& file : result.tagged_files) {
    for (const auto& d : file.diagnostics) {
      write_line(stderr, render_text(d));
    }
    write_line(stdout, fmt::format("{:<12}{}: {}", "tagged", file.file.relative.generic_string(),
                                   render_tag_change(file)));
  }
  if (result.tagged) {
    findings = findings || result.tagged->skipped > 0;
  }
  for (const auto& d : result.validation_environment) {
    write_line(stderr, render_text(d));
  }
  if (result.validation) {
    print_validation(*result.validation);
    findings = findings || count_statuses(*result.validation).error > 0;
  }
  if (result.environment_failed || !result.validation_environment.empty()) {
    return k_exit_environment;
  }
  for (const auto& d : result.diagnostics) {
    if (const auto* info = find_code(d.code);
        info != nullptr && info->exit_class == ExitClass::usage) {
      return k_exit_usage;
    }
  }
  return findings ? k_exit_findings : k_exit_ok;
}

} // namespace fib::app
