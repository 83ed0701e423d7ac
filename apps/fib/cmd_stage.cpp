// `fib stage`: puts definitions into `DATASET/definitions/<op_type>/<name>.json`, content-aware.

#include "commands.hpp"
#include "exit_status.hpp"
#include "normalize_flags.hpp"
#include "render.hpp"

#include <fib/base/codes.hpp>
#include <fib/stage/stage.hpp>
#include <fib/util/atomic_file.hpp>
#include <fib/util/text_diff.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace fib::app {

struct StageCommand {
  CLI::App* subcommand = nullptr;
  std::vector<std::string> sources;
  std::string dataset;
  std::string on_conflict = "fail";
  bool normalize = false;
  std::string decisions;
  std::vector<std::string> disabled_rules;
  bool dry_run = false;
  bool diff = false;
  std::string manifest;
  bool quiet = false;
};

namespace {

constexpr const char* k_stage_footer =
    R"TXT(Each definition goes to DIR/definitions/<op_type>/<name>.json, op_type and name
taken from its JSON (both must be plain path segments). Per input, one line on
stdout: added, unchanged (same content; formatting, key order and extra tags on
the staged copy ignored), overwritten, conflict, skipped, duplicate or rejected.
Conflicts list what differs (JSON pointer, staged vs incoming); --diff adds the
unified diff. Inputs that share a name are compared first (rule N20): same
content or a different Python text only -> the first is staged; other
differences -> a conflict, none of them staged.

--on-conflict fail (default): a conflict stages nothing at all, exit 1.
              skip: conflicting names are left alone (warnings), the rest staged.
              overwrite: a differing staged file is replaced. A name staged under
              another op_type, or two differing inputs, stay conflicts.

Nothing is ever written outside DIR: symbolic links below DIR are refused, not
followed. Every write is atomic (a temporary .fib-* file, then a rename).

Exit status: 0 staged (or nothing to do; skipped conflicts are warnings),
1 a conflict or a rejected input, 2 usage, 3 I/O or environment.

Examples:
  fib stage /tmp/fi_dumps --dataset tmp/flashinfer-trace --normalize --manifest staged.json
  fib stage /tmp/fi_dumps --dataset tmp/flashinfer-trace --dry-run --diff
  fib tag add model:llama-3.1-8b tp:2 --manifest staged.json)TXT";

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
  const std::map<std::string, OnConflict> modes{
      {"fail", OnConflict::fail}, {"skip", OnConflict::skip}, {"overwrite", OnConflict::overwrite}};
  sub->add_option("--on-conflict", command->on_conflict,
                  "What a differing staged file means: fail (default), skip or overwrite")
      ->check(CLI::IsMember({"fail", "skip", "overwrite"}));
  sub->add_flag("--normalize", command->normalize, "Run fib normalize on each input on the way in");
  sub->add_option("--decisions", command->decisions,
                  "With --normalize: a decisions file (see fib normalize --help)");
  sub->add_option("--no-rule", command->disabled_rules,
                  "With --normalize: do not apply this W rule (repeatable)")
      ->allow_extra_args(false);
  sub->add_flag("--dry-run", command->dry_run, "Print the plan; write nothing");
  sub->add_flag("--diff", command->diff,
                "Print a unified diff (staged vs incoming) for every conflict and overwrite");
  sub->add_option("--manifest", command->manifest,
                  "Write what was added or overwritten to FILE (JSON; input of fib tag "
                  "--manifest)");
  sub->add_flag("--quiet", command->quiet, "Leave out the lines of unchanged definitions");
  sub->footer(k_stage_footer);
  return {command->subcommand,
          [command](python::Runtime& python) { return run_stage(*command, python); }};
}

int run_stage(const StageCommand& command, python::Runtime& python) {
  const auto usage = [](std::string message) {
    write_line(stderr, render_text(make_diagnostic(codes::k_usage, std::move(message))));
    return k_exit_usage;
  };
  StageOptions options;
  for (const auto& source : command.sources) {
    options.sources.emplace_back(source);
  }
  options.dataset = command.dataset;
  options.on_conflict = command.on_conflict == "overwrite" ? OnConflict::overwrite
                        : command.on_conflict == "skip"    ? OnConflict::skip
                                                           : OnConflict::fail;
  options.dry_run = command.dry_run ? DryRun::yes : DryRun::no;
  NormalizeDecisions decisions;
  if (command.normalize) {
    options.normalize = StageNormalize::yes;
    if (auto stop = apply_normalize_flags(command.disabled_rules, command.decisions, decisions,
                                          options.normalize_options)) {
      return *stop;
    }
  } else if (!command.decisions.empty() || !command.disabled_rules.empty()) {
    return usage("--decisions and --no-rule need --normalize");
  }

  const StageResult result = stage_definitions(options, python);
  for (const auto& d : result.diagnostics) {
    write_line(stderr, render_text(d));
  }
  for (const auto& entry : result.entries) {
    for (const auto& d : entry.diagnostics) {
      write_line(stderr, render_text(d));
    }
    if (command.quiet && entry.action == StageAction::unchanged) {
      continue;
    }
    write_line(stdout, render_stage_line(entry));
    const bool differs = entry.action == StageAction::conflict ||
                         entry.action == StageAction::skipped ||
                         entry.action == StageAction::overwritten;
    if (command.diff && differs && !entry.staged_text.empty()) {
      const auto target = entry.target.generic_string();
      write_all(stdout, unified_diff(entry.staged_text, entry.incoming_text, "staged/" + target,
                                     "incoming/" + target));
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
             fmt::format("fib stage: {} input{}: {} added, {} unchanged, {} overwritten, {} "
                         "conflict{}, {} rejected, {} duplicate{}{}",
                         result.entries.size(), result.entries.size() == 1 ? "" : "s", s.added,
                         s.unchanged, s.overwritten, s.conflicts, s.conflicts == 1 ? "" : "s",
                         s.rejected, s.duplicates, s.duplicates == 1 ? "" : "s", tail));
  bool manifest_failed = false;
  if (!command.manifest.empty() && !command.dry_run) {
    const std::string text = stage_manifest(result, options.dataset)
                                 .dump(2, ' ', false, Json::error_handler_t::replace) +
                             "\n";
    if (auto written = write_file_atomically(command.manifest, text, Overwrite::allowed);
        !written) {
      write_line(stderr, render_text(written.error()));
      manifest_failed = true;
    }
  }
  if (s.environment_failed || manifest_failed) {
    return k_exit_environment;
  }
  const bool unresolved =
      std::any_of(result.entries.begin(), result.entries.end(),
                  [](const StageEntry& e) { return e.action == StageAction::conflict; });
  if (unresolved || s.rejected > 0) {
    return k_exit_findings;
  }
  return k_exit_ok;
}

} // namespace fib::app
