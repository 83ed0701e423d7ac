// `fib stage`: puts definitions into `DATASET/definitions/<op_type>/<name>.json`, content-aware.

#include "commands.hpp"
#include "exit_status.hpp"
#include "normalize_flags.hpp"
#include "render.hpp"
#include "smoke_flags.hpp"
#include "staging_flags.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/source_diff.hpp>
#include <fib/stage/runnable.hpp>
#include <fib/stage/stage.hpp>
#include <fib/util/atomic_file.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace fib::app {

struct StageCommand {
  CLI::App* subcommand = nullptr;
  std::vector<std::string> sources;
  std::string dataset;
  bool normalize = false;
  std::string decisions;
  std::vector<std::string> disabled_rules;
  std::string flashinfer_src;
  bool dry_run = false;
  bool diff = false;
  std::string manifest;
  bool quiet = false;
  StagingFlags staging; // --on-conflict, --exclude, --force, --drop-curated
  SmokeFlags smoke;     // --smoke: the runnable verdict of every staged definition
};

namespace {

constexpr const char* k_stage_footer =
    R"TXT(Each definition goes to DIR/definitions/<op_type>/<name>.json, op_type and name
taken from its JSON (both must be plain path segments). Per input, one line on
stdout: added, unchanged (same content; formatting, key order and extra tags on
the staged copy ignored), overwritten, conflict, skipped, duplicate, rejected, or
failed (the write failed; the reason is on stderr, and nothing of it was written).
Conflicts list what differs (JSON pointer, staged vs incoming); --diff adds the
unified diff. Inputs that share a name are compared first (rule N20): same
content or a different Python text only -> the first is staged; other
differences -> a conflict, none of them staged.

With --dry-run, or when a conflict under --on-conflict fail stops the plan,
what was planned but not done says so: `would add` / `would overwrite` (dry
run) or `not written`. The summary counts the same words as the lines.

--on-conflict fail (default): a conflict stages nothing at all, exit 1.
              skip: conflicting names are left alone (warnings), the rest staged.
              overwrite: a differing staged file is replaced. A name staged under
              another op_type, or two differing inputs, stay conflicts.
  Before an overwrite, the workloads, solutions and traces of DIR that name the
  definition are checked against the new one; if some would no longer validate
  (stage.overwrite-breaks: counts, the first few as FILE:LINE, the field diff)
  the overwrite is refused unless --force. Curated fields the incoming copy
  lacks (descriptions of the definition, its axes, inputs and outputs; extra
  tags) are kept (the line says `kept: ...`) unless --drop-curated.

--exclude GLOB (repeatable) leaves out the inputs it matches (shell-style, `*`
also matches `/`; tried against the file name, the path below the directory
given, and the path as given): their lines say `excluded`. Two inputs that
share a name can also be told apart with a decisions entry for one file
(`"files": {"PATH": {"name": ...}}`, see fib normalize --help). Names that
differ only in case, among the inputs or against the dataset, are warned
(stage.case-clash): such files clash on macOS and Windows checkouts.

Nothing is ever written outside DIR: symbolic links below DIR are refused, not
followed. Every write is atomic (a temporary .fib-* file, then a rename).

--smoke runs each definition that is (or, with --dry-run or a blocking
conflict, would be) staged on tiny synthesized inputs in the sandboxed worker,
after staging: a failing run does not undo the write. Each line ends with the
verdict: runnable, not runnable here (with the reason), fails when run (with
the error), or needs a decision (rejected, in conflict, or an open normalize
question: nothing runs); a second summary line counts them.

Exit status: 0 staged (or nothing to do; skipped conflicts are warnings),
1 a conflict, a rejected input, or (--smoke) a definition that fails when run,
2 usage, 3 I/O or environment (with --smoke: the worker cannot be used).

Examples:
  fib stage /tmp/fi_dumps --dataset tmp/flashinfer-trace --normalize --manifest staged.json
  fib stage /tmp/fi_dumps --dataset tmp/flashinfer-trace --dry-run --diff
  fib tag add model:llama-3.1-8b tp:2 --manifest staged.json)TXT";

// The library options of the command line; the exit status to stop with on a usage error or a
// bad --decisions file.
std::optional<int> stage_options(const StageCommand& command, StageOptions& options,
                                 NormalizeDecisions& decisions) {
  if (auto misuse = check_smoke_flags(command.subcommand, command.smoke)) {
    write_diagnostic(stderr, *misuse);
    return exit_status(std::vector<Diagnostic>{*misuse});
  }
  for (const auto& source : command.sources) {
    options.sources.emplace_back(source);
  }
  options.dataset = command.dataset;
  options.dry_run = command.dry_run ? DryRun::yes : DryRun::no;
  apply_staging_flags(command.staging, options);
  if (auto misuse = overwrite_flags_misuse(command.staging)) {
    const Diagnostic d = make_diagnostic(codes::k_usage, *misuse);
    write_diagnostic(stderr, d);
    return exit_status(std::vector<Diagnostic>{d});
  }
  if (command.normalize) {
    options.normalize = StageNormalize::yes;
    return apply_normalize_flags(
        {command.disabled_rules, command.decisions, command.flashinfer_src}, decisions,
        options.normalize_options);
  }
  if (!command.decisions.empty() || !command.disabled_rules.empty() ||
      !command.flashinfer_src.empty()) {
    const Diagnostic d = make_diagnostic(
        codes::k_usage, "--decisions, --no-rule and --flashinfer-src need --normalize");
    write_diagnostic(stderr, d);
    return exit_status(std::vector<Diagnostic>{d});
  }
  return std::nullopt;
}

// The diagnostics, one line per input on stdout (with --diff, the diffs; with --smoke, the
// verdict), and the summary line (with --smoke, a second one counting the verdicts).
void print_stage_result(const StageCommand& command, const StageResult& result,
                        const std::optional<StagedRunnable>& runnable) {
  for (const auto& d : result.diagnostics) {
    write_diagnostic(stderr, d);
  }
  SmokePrinter smoke_printer(command.quiet ? SmokeNotes::hidden : SmokeNotes::shown);
  for (std::size_t i = 0; i < result.entries.size(); ++i) {
    const auto& entry = result.entries[i];
    for (const auto& d : entry.diagnostics) {
      write_diagnostic(stderr, d);
    }
    const auto& check = runnable ? runnable->checks[i] : std::nullopt;
    if (check) {
      smoke_printer.print(*check);
    }
    if (command.quiet && entry.action == StageAction::unchanged) {
      continue;
    }
    write_line(stdout, render_stage_line(entry, result.summary) + verdict_suffix(check));
    const bool differs = entry.action == StageAction::conflict ||
                         entry.action == StageAction::skipped ||
                         entry.action == StageAction::overwritten;
    if (command.diff && differs && !entry.staged_text.empty()) {
      const auto target = entry.target.generic_string();
      write_all(stdout, definition_unified_diff(entry.staged_text, entry.incoming_text,
                                                "staged/" + target, "incoming/" + target));
    }
  }
  const auto& s = result.summary;
  std::string tail;
  if (command.dry_run) {
    tail = " (dry run: nothing written)";
  } else if (s.blocked_by_conflicts) {
    tail = " (nothing written: --on-conflict fail)";
  }
  write_line(stderr,
             fmt::format("fib stage: {} input{}: {}{}", result.entries.size(),
                         result.entries.size() == 1 ? "" : "s", render_stage_counts(result), tail));
  if (runnable) {
    write_line(stderr, fmt::format("fib stage: smoke: {}", render_counts(runnable->counts)));
  }
}

// Writes the --manifest file; the counts of the error printed when that fails.
DiagnosticCounts write_manifest(const std::filesystem::path& file, const Json& manifest) {
  const std::string text = manifest.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  StaleTemporarySweeper().remove_stale_beside(file);
  auto written = write_file_atomically(file, text, Overwrite::allowed);
  if (written) {
    return {};
  }
  write_diagnostic(stderr, written.error());
  return count_diagnostics({written.error()});
}

} // namespace

Subcommand register_stage(CLI::App& app) {
  auto command = std::make_shared<StageCommand>();
  CLI::App* sub = app.add_subcommand(
      "stage", "Put definitions into DIR/definitions/<op_type>/<name>.json without clobbering");
  command->subcommand = sub;
  sub->add_option("sources", command->sources,
                  "Definition files, or dump directories searched for *.json")
      ->required();
  sub->add_option("--dataset", command->dataset, "The dataset root (must exist)")->required();
  add_staging_flags(*sub, command->staging, StagingHelp::stage);
  sub->add_flag("--normalize", command->normalize, "Run fib normalize on each input on the way in");
  sub->add_option("--decisions", command->decisions,
                  "With --normalize: a decisions file (see fib normalize --help)");
  sub->add_option("--no-rule", command->disabled_rules,
                  "With --normalize: do not apply this W rule (repeatable)")
      ->allow_extra_args(false);
  add_flashinfer_src_option(*sub, command->flashinfer_src, "With --normalize: ");
  sub->add_flag("--dry-run", command->dry_run, "Print the plan; write nothing");
  sub->add_flag("--diff", command->diff,
                "Print a unified diff (staged vs incoming) for every conflict and overwrite "
                "(reference and init as decoded Python lines)");
  sub->add_option("--manifest", command->manifest,
                  "Write what was added or overwritten to FILE (JSON; input of fib tag "
                  "--manifest)");
  sub->add_flag("--quiet", command->quiet, "Leave out the lines of unchanged definitions");
  add_smoke_flags(sub, command->smoke,
                  "Also run each staged definition on tiny synthesized inputs and say whether it "
                  "is runnable, not runnable here, fails when run, or needs a decision");
  sub->footer(k_stage_footer);
  return {command->subcommand,
          [command](PythonFrontend& python) { return run_stage(*command, python); }};
}

int run_stage(const StageCommand& command, PythonFrontend& python) {
  StageOptions options;
  NormalizeDecisions decisions;
  if (auto stop = stage_options(command, options, decisions)) {
    return *stop;
  }
  const StageResult result = stage_definitions(options, python);
  std::optional<StagedRunnable> runnable;
  if (command.smoke.smoke) {
    ReferenceRunner runner(smoke_runner_options(command.subcommand, command.smoke));
    runnable = check_staged_runnable(result, options.dataset, runner);
  }
  print_stage_result(command, result, runnable);
  DiagnosticCounts counts = count_stage_diagnostics(result);
  counts += count_smoke_diagnostics(runnable);
  if (!command.manifest.empty() && !command.dry_run) {
    counts += write_manifest(command.manifest, stage_manifest(result, options.dataset));
  }
  const bool unsettled = has_unresolved_conflicts(result) || result.summary.rejected > 0 ||
                         (runnable && runnable->counts.fails_when_run > 0);
  return exit_status(counts, Strictness::normal, unsettled ? Outcome::failed : Outcome::clean);
}

} // namespace fib::app
