// `fib normalize`: repairs raw FlashInfer trace dumps into valid, runnable definitions.

#include "commands.hpp"
#include "exit_status.hpp"
#include "normalize_flags.hpp"
#include "render.hpp"
#include "smoke_flags.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/source_diff.hpp>
#include <fib/normalize/normalize.hpp>
#include <fib/normalize/runnable.hpp>
#include <fib/util/atomic_file.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <system_error>

namespace fib::app {

enum class NormalizeMode { stdout_json, in_place, output_dir, check, diff_only };

struct NormalizeCommand {
  CLI::App* subcommand = nullptr;
  std::vector<std::string> paths;
  bool in_place = false;
  std::string output_dir;
  bool check = false;
  bool diff = false;
  std::string decisions;
  std::vector<std::string> disabled_rules;
  std::string flashinfer_src;
  std::string evidence; // --evidence DUMP_DIR: a Level-10 dump of the same pass
  bool strip_extras = false;
  std::string report;
  bool list_rules = false;
  bool quiet = false;
  std::vector<std::string> exclude;
  SmokeFlags smoke; // --smoke: the runnable verdict of every file
};

namespace {

constexpr const char* k_normalize_footer =
    R"TXT(Rules (docs/normalize.md; `--list-rules` prints them): M mechanical, applied
and listed; W heuristic, applied with a warning, switched off with --no-rule ID;
H never guessed: reported with file, JSON pointer and the decision to make.
Answer H findings once in a decisions file (--decisions FILE.json):
  {"definitions": {"<name>": {"input_dtypes": {"top_p": "float32"},
    "drop_inputs": ["workspace_buffer"], "rename_outputs": {"q": "q_out"},
    "drop_outputs": [], "output_dtypes": {}, "axis_values": {"page_size": 16},
    "run_arguments": {"paged_kv_cache": "(k_cache, v_cache)"}, "name": "new"}},
   "files": {"dumps/gqa_paged_decode_cuda_graph.json": {"name": "other"}}}
"definitions" is keyed by definition name; "files" by the path of one source
file (relative to the current directory, or absolute; compared resolved): its
entry is used instead of the name's, so two dumps of one name can be told
apart. An entry that matches no input is warned (normalize.decision-unused).

Helpers the reference calls but never defines are inlined from FlashInfer's
trace templates (rule N22), found in --flashinfer-src DIR, else
$FIB_FLASHINFER_SRC, else the installed flashinfer package (never imported);
DIR is the directory holding the flashinfer/ package directory.

Output: one file and no mode prints the normalized JSON on stdout. Otherwise
choose --in-place (atomic replace of changed files), --output-dir DIR, --check
(no writes; a unified diff of every file that would change; exit 1 if any) or
--diff (the diffs on stdout; alone it writes nothing, with --in-place or
--output-dir it also writes). The diffs show `reference` and `init` as decoded
Python, one source line per diff line marked "reference|" or "init|" (for
reading: such a diff does not apply with patch). Findings go to stderr.

--smoke runs each valid result on tiny synthesized inputs in the sandboxed
worker (as fib validate --smoke does) and gives every file one verdict:
runnable, not runnable here (with the reason: float8 on an old torch, needs
CUDA, over --max-bytes, packed fp4 inputs), fails when run (with the error), or
needs a decision (invalid, or an open question: nothing runs). Each status line
ends with it; the summary counts the four.

Exit status: 0 every file valid after normalization (and, with --check, none
would change), 1 some file still invalid, skipped as malformed, (--check) in
need of changes, or (--smoke) failing when run, 2 usage, 3 I/O or environment
(with --smoke: the worker cannot be used).

Examples:
  fib normalize dumps/rmsnorm_h7168.json > rmsnorm_h7168.json
  fib normalize --output-dir staged/ fi_trace_out/
  fib normalize --check definitions/        # CI lint step
  fib normalize --in-place --decisions decisions.json --report report.json dumps/)TXT";

// The finding with its rule's id and level in front of the message.
Diagnostic finding_with_rule(const RuleFinding& finding) {
  Diagnostic d = finding.diagnostic;
  if (const auto* rule = rule_of_code(d.code)) {
    d.message = fmt::format("{} {}: {}", rule->id, to_string(rule->level), d.message);
  }
  return d;
}

void print_rules() {
  for (const auto& rule : all_normalize_rules()) {
    write_line(stdout, fmt::format("{:<6} {}  {:<34} {}", rule.id, to_string(rule.level), rule.code,
                                   rule.title));
  }
}

int usage_error(std::string message) {
  const Diagnostic usage = make_diagnostic(codes::k_usage, std::move(message));
  write_diagnostic(stderr, usage);
  return exit_status({usage});
}

// What the command line asks for, decided before any file is read. Not copyable: `options`
// points at `decisions`.
struct NormalizePlan {
  NormalizeFilesOptions options;
  NormalizeDecisions decisions;
  std::optional<Level10Dump> evidence; // what options.rules.evidence points at
  NormalizeMode mode = NormalizeMode::stdout_json;
  bool print_diff = false;

  NormalizePlan() = default;
  NormalizePlan(const NormalizePlan&) = delete;
  NormalizePlan& operator=(const NormalizePlan&) = delete;
};

// The mode of `command`; the exit status of a usage error when the paths do not fit it.
std::optional<int> choose_mode(const NormalizeCommand& command, NormalizePlan& plan) {
  NormalizeFilesOptions& options = plan.options;
  if (command.check) {
    plan.mode = NormalizeMode::check;
  } else if (command.in_place) {
    plan.mode = NormalizeMode::in_place;
    options.write = NormalizeWrite::in_place;
  } else if (!command.output_dir.empty()) {
    plan.mode = NormalizeMode::output_dir;
    options.write = NormalizeWrite::output_dir;
    options.output_dir = command.output_dir;
    for (const auto& path : options.paths) {
      std::error_code ec;
      if (std::filesystem::is_directory(path, ec) &&
          std::filesystem::equivalent(path, options.output_dir, ec)) {
        return usage_error(fmt::format("--output-dir {} is an input directory; use --in-place to "
                                       "replace files",
                                       command.output_dir));
      }
    }
  } else if (command.diff) {
    plan.mode = NormalizeMode::diff_only;
  } else {
    std::error_code ec;
    if (command.paths.size() != 1 || std::filesystem::is_directory(command.paths.front(), ec)) {
      return usage_error("more than one file: choose --in-place, --output-dir DIR, --check or "
                         "--diff (only a single file is printed on stdout)");
    }
  }
  plan.print_diff = command.diff || plan.mode == NormalizeMode::check;
  return std::nullopt;
}

// Maps the options of `command` into `plan`; the exit status to stop with on a usage or decisions
// file problem (already printed).
std::optional<int> plan_normalize(const NormalizeCommand& command, NormalizePlan& plan) {
  if (command.paths.empty()) {
    return usage_error("fib normalize needs at least one file or directory");
  }
  if (auto misuse = check_smoke_flags(command.subcommand, command.smoke)) {
    return usage_error(misuse->message);
  }
  for (const auto& path : command.paths) {
    plan.options.paths.emplace_back(path);
  }
  plan.options.exclude = command.exclude;
  plan.options.rules.strip_extras = command.strip_extras ? StripExtras::yes : StripExtras::no;
  if (auto stop =
          apply_normalize_flags({command.disabled_rules, command.decisions, command.flashinfer_src},
                                plan.decisions, plan.options.rules)) {
    return stop;
  }
  if (!command.evidence.empty()) {
    auto dump = read_level10_dump(command.evidence);
    if (!dump) {
      write_diagnostic(stderr, dump.error());
      return k_exit_usage;
    }
    for (const RejectedCall& rejected : dump->rejected) {
      if (rejected.reason.severity == Severity::error) {
        write_diagnostic(stderr, rejected.reason); // a torch-format dump: no evidence in it
      }
    }
    plan.evidence = std::move(*dump);
    plan.options.rules.evidence = &*plan.evidence;
  }
  return choose_mode(command, plan);
}

// `FILE: changed (written to …), valid` and the like; with --smoke the verdict follows
// (`valid; runnable`, `still invalid; needs a decision: CODE: REASON:`).
std::string status_line(const NormalizedFile& file, const std::optional<RunnableCheck>& check) {
  const std::string verdict = check ? "; " + render_verdict(check->verdict) : "";
  if (file.verdict == NormalizeVerdict::skipped) {
    return fmt::format("{}: skipped{}", file.input.string(), verdict);
  }
  std::string status = "valid" + verdict;
  if (file.verdict == NormalizeVerdict::invalid) {
    status = "still invalid" + verdict + ":";
    for (const auto& finding : file.findings) {
      if (finding.diagnostic.severity == Severity::error) {
        status += fmt::format("\n    {} {}: {}", finding.diagnostic.code,
                              finding.diagnostic.pointer.empty() ? "/" : finding.diagnostic.pointer,
                              "see above");
      }
    }
    for (const auto& d : file.validation) {
      if (d.severity == Severity::error) {
        status +=
            fmt::format("\n    {} {}: {}", d.code, d.pointer.empty() ? "/" : d.pointer, d.message);
      }
    }
  }
  return fmt::format("{}: {}{}, {}", file.input.string(), file.changed ? "changed" : "unchanged",
                     file.written ? " (written to " + file.written->string() + ")" : std::string(),
                     status);
}

// Prints each file as it is done (findings and status to stderr; diff or JSON to stdout), collects
// the report entries, and counts every diagnostic for the exit status.
class NormalizeOutput {
public:
  // `runner`: the smoke runs of --smoke (null without it).
  NormalizeOutput(const NormalizeCommand& command, const NormalizePlan& plan,
                  ReferenceRunner* runner)
      : m_command(command), m_plan(plan), m_runner(runner),
        m_smoke_printer(command.quiet ? SmokeNotes::hidden : SmokeNotes::shown) {}

  void print_file(const NormalizedFile& file) {
    for (const auto& finding : file.findings) {
      if (m_command.quiet && finding.diagnostic.severity == Severity::note) {
        continue;
      }
      write_diagnostic(stderr, finding_with_rule(finding));
    }
    std::optional<RunnableCheck> check;
    if (m_runner != nullptr) {
      check = check_runnable(file, *m_runner);
      m_smoke_printer.print(*check);
      m_counts += count_diagnostics(check->diagnostics);
      m_runnable.add(check->verdict.runnability);
    }
    write_line(stderr, status_line(file, check));
    if (m_plan.print_diff && file.changed) {
      const std::string path = file.input.string();
      const bool absolute = file.input.is_absolute();
      write_all(stdout, definition_unified_diff(file.original_text, file.normalized_text,
                                                absolute ? path : "a/" + path,
                                                absolute ? path : "b/" + path));
    }
    if (m_plan.mode == NormalizeMode::stdout_json && file.verdict != NormalizeVerdict::skipped) {
      write_all(stdout, file.normalized_text);
    }
    if (!m_command.report.empty()) {
      m_entries.push_back(normalize_report_entry(file));
      if (check) {
        m_entries.back()["runnable"] = to_json(check->verdict);
      }
    }
    m_counts += count_diagnostics(all_diagnostics(file));
  }

  // The run's own diagnostics, the summary line, and the --report file.
  void finish(const NormalizeSummary& summary) {
    for (const auto& d : summary.diagnostics) {
      write_diagnostic(stderr, d);
    }
    m_counts += count_diagnostics(summary.diagnostics);
    write_line(
        stderr,
        fmt::format("fib normalize: {} file{}: {} changed, {} valid, {} invalid, {} "
                    "skipped; {} need{} a human decision{}",
                    summary.files, summary.files == 1 ? "" : "s", summary.changed, summary.valid,
                    summary.invalid, summary.skipped, summary.decisions_needed,
                    summary.decisions_needed == 1 ? "s" : "",
                    m_runner != nullptr ? "; smoke: " + render_counts(m_runnable) : std::string()));
    if (m_command.report.empty()) {
      return;
    }
    Json report = normalize_report(m_entries, summary);
    if (m_runner != nullptr) {
      report["summary"]["runnable"] = to_json(m_runnable);
    }
    const std::string text = report.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
    StaleTemporarySweeper().remove_stale_beside(m_command.report);
    if (auto written = write_file_atomically(m_command.report, text, Overwrite::allowed);
        !written) {
      write_diagnostic(stderr, written.error());
      m_counts += count_diagnostics({written.error()});
    }
  }

  const DiagnosticCounts& counts() const { return m_counts; }

private:
  const NormalizeCommand& m_command;
  const NormalizePlan& m_plan;
  ReferenceRunner* m_runner;
  SmokePrinter m_smoke_printer;
  std::vector<Json> m_entries;
  DiagnosticCounts m_counts;
  RunnableCounts m_runnable;
};

// --check fails when some file would change.
Outcome check_outcome(const NormalizePlan& plan, const NormalizeSummary& summary) {
  return plan.mode == NormalizeMode::check && summary.changed > 0 ? Outcome::failed
                                                                  : Outcome::clean;
}

} // namespace

Subcommand register_normalize(CLI::App& app) {
  auto command = std::make_shared<NormalizeCommand>();
  CLI::App* sub = app.add_subcommand(
      "normalize", "Repair raw FlashInfer trace dumps into valid, runnable definitions");
  command->subcommand = sub;
  sub->add_option("paths", command->paths, "Definition files, or directories searched for *.json");
  auto* in_place =
      sub->add_flag("--in-place", command->in_place, "Replace each changed file (atomically)");
  auto* output_dir = sub->add_option("--output-dir", command->output_dir,
                                     "Write every normalized file below DIR (same relative path)");
  auto* check = sub->add_flag("--check", command->check,
                              "Write nothing; print the diff of each file that would change; "
                              "exit 1 if any would");
  sub->add_flag("--diff", command->diff,
                "Print a unified diff of every change (reference and init as decoded Python "
                "lines, marked reference| and init|)");
  in_place->excludes(output_dir);
  check->excludes(in_place)->excludes(output_dir);
  sub->add_option("--decisions", command->decisions,
                  "JSON file with a human's answers (see below); applied before the rules");
  sub->add_option("--no-rule", command->disabled_rules,
                  "Do not apply this W rule (repeatable): what it would change is left as it is "
                  "and reported")
      ->allow_extra_args(false);
  add_flashinfer_src_option(*sub, command->flashinfer_src, "");
  sub->add_option("--evidence", command->evidence,
                  "A FlashInfer Level-10 dump of the same pass: rules R1, R2 and R3 repair dtypes, "
                  "head counts and 0-D scalars its captured calls prove")
      ->type_name("DUMP_DIR");
  sub->add_flag("--strip-extras", command->strip_extras,
                "Remove init, check, optional and param (kept by default)");
  sub->add_option("--report", command->report,
                  "Write a JSON report (per file: rules applied, warnings, decisions needed, "
                  "verdict)");
  sub->add_option("--exclude", command->exclude,
                  "Leave out the files found below a directory that match this glob "
                  "(repeatable; `*` also matches `/`)")
      ->allow_extra_args(false);
  sub->add_flag("--list-rules", command->list_rules, "Print the rules table and exit");
  sub->add_flag("--quiet", command->quiet,
                "Leave out notes (M rules applied); warnings, questions, per-file status lines and "
                "the summary are still printed");
  add_smoke_flags(sub, command->smoke,
                  "Also run each valid result on tiny synthesized inputs and say whether it is "
                  "runnable, not runnable here, fails when run, or needs a decision");
  sub->footer(k_normalize_footer);
  return {command->subcommand,
          [command](PythonFrontend& python) { return run_normalize(*command, python); }};
}

int run_normalize(const NormalizeCommand& command, PythonFrontend& python) {
  if (command.list_rules) {
    print_rules();
    return k_exit_ok;
  }
  NormalizePlan plan;
  if (auto stop = plan_normalize(command, plan)) {
    return *stop;
  }
  std::optional<ReferenceRunner> runner;
  if (command.smoke.smoke) {
    runner.emplace(smoke_runner_options(command.subcommand, command.smoke));
  }
  NormalizeOutput output(command, plan, runner ? &*runner : nullptr);
  const NormalizeSummary summary = normalize_files(
      plan.options, python, [&](const NormalizedFile& file) { output.print_file(file); });
  output.finish(summary);
  return exit_status(output.counts(), Strictness::normal, check_outcome(plan, summary));
}

} // namespace fib::app
