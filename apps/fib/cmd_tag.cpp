// `fib tag add|remove|list`: edits and counts the tags of definition files.

#include "commands.hpp"
#include "exit_status.hpp"
#include "render.hpp"

#include <fib/base/codes.hpp>
#include <fib/tag/tags.hpp>
#include <fib/util/text_diff.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace fib::app {

struct TagCommand {
  CLI::App* subcommand = nullptr;
  CLI::App* add = nullptr;
  CLI::App* remove = nullptr;
  CLI::App* list = nullptr;
  std::vector<std::string> tags;
  std::vector<std::string> files;
  std::string dataset;
  std::string manifest;
  std::vector<std::string> op_types;
  std::vector<std::string> names;
  std::string since;
  bool dry_run = false;
  bool force = false;
  std::string format = "text";
};

namespace {

constexpr const char* k_tag_footer =
    R"TXT(Selection (one of them is required):
  --file FILE (repeatable)  these definition files, nothing else;
  --dataset DIR             every DIR/definitions/<op_type>/<name>.json (exactly that
                            depth; symbolic links to directories are not followed);
  --manifest FILE           the files a `fib stage --manifest FILE` run staged, below
                            --dataset DIR or else the manifest's own dataset root.
  With --dataset or --manifest, the filters narrow the set (all must match):
  --op-type OP (the directory name), --name GLOB (fnmatch on the file name without
  .json), --since TIME (modified at or after TIME: epoch seconds such as 1764511500.5,
  or ISO-8601 2026-11-30, 2026-11-30T14:05:00[.fff][Z|+hh:mm|-hh:mm]; no offset
  means UTC). --op-type and --name are repeatable (any of the values).

Editing: tags end up sorted (byte order) without duplicates; the rest of the
document keeps its key order (`tags` is added after `op_type` when missing) and is
written as canonical JSON, atomically. A file whose tags do not change is not
rewritten, so its modification time stays. `remove NAMESPACE:*` removes every tag of
that namespace (quote it for the shell), e.g. fib tag remove 'model:*'. Symbolic links
are never written through (io.unsafe-path).

Tags given to `add` are checked (docs/tag.md has the table): bare flags (fused, moe)
are free; tp:N and ep:N take a positive integer, model: a lower-case slug
(llama-3.1-8b), fi_api: a dotted Python name; quantization: (quant:, quantize:) a
dtype or a scheme (fp8, nvfp4, mxfp4, mxfp8, ...); status: verified, unverified,
experimental, wip, draft, deprecated or reference; stage: prefill, decode, mtp,
indexer, comm or pod; arch:, backend:, gpu:, kv-cache:, layout:, moe:, sparse: any
value. A malformed tag (bad syntax, or tp:/ep:/model:/fi_api: without their form) is
an error and nothing is written (--force adds it anyway); an unknown value of the
other namespaces and an unknown namespace are warnings. status: and stage: hold one
value: adding status:X replaces the file's other status: value and the line says
"replaced status:A with status:X"; `fib tag list` and `fib validate` flag a file
carrying two (tag.conflict). Adding model:A where model:B stays is warned about
(tag.clash); tp:2 beside tp:4 is not: a model served in several parallel
configurations carries both.

Exit status: 0 done (warnings only; --dry-run too), 1 a malformed tag, two values
given for status: or stage:, a skipped
file or a manifest entry whose file is gone, 2 usage (bad --since, invalid
manifest, no selection), 3 I/O or environment (unreadable file, unsafe path).

Examples:
  fib tag add model:llama-3.1-8b tp:2 --dataset ds --op-type rmsnorm
  fib tag add status:verified --manifest staged.json --dry-run
  fib tag remove 'model:*' --file ds/definitions/gemm/gemm_n4096.json
  fib tag list --dataset ds --since 2026-11-30 --format json)TXT";

void add_selection_options(CLI::App& sub, TagCommand& command) {
  auto* file = sub.add_option("--file", command.files, "A definition file (repeatable)")
                   ->type_name("FILE")
                   ->allow_extra_args(false);
  auto* dataset = sub.add_option("--dataset", command.dataset,
                                 "A dataset root: its definitions/<op_type>/<name>.json files")
                      ->type_name("DIR");
  auto* manifest = sub.add_option("--manifest", command.manifest,
                                  "A `fib stage --manifest` file: the files it staged")
                       ->type_name("FILE");
  file->excludes(dataset)->excludes(manifest);
  sub.add_option("--op-type", command.op_types, "Only files of this op_type directory (repeatable)")
      ->type_name("OP")
      ->allow_extra_args(false);
  sub.add_option("--name", command.names,
                 "Only files whose name (without .json) matches this glob (repeatable)")
      ->type_name("GLOB")
      ->allow_extra_args(false);
  sub.add_option("--since", command.since,
                 "Only files modified at or after TIME (epoch seconds or ISO-8601; UTC unless "
                 "an offset is given)")
      ->type_name("TIME");
}

void print_diagnostics(const std::vector<Diagnostic>& diagnostics) {
  for (const auto& d : diagnostics) {
    write_diagnostic(stderr, d);
  }
}

// What a list or an edit reported, and whether it skipped files.
struct TagRun {
  DiagnosticCounts counts;
  Outcome outcome = Outcome::clean;
};

// The selection options of the command line, or the usage error that stops it.
Expected<TagSelectionOptions> selection_options(const TagCommand& command, TagAction action) {
  TagSelectionOptions options;
  for (const auto& file : command.files) {
    options.files.emplace_back(file);
  }
  options.dataset = command.dataset;
  options.manifest = command.manifest;
  options.op_types = command.op_types;
  options.name_globs = command.names;
  const std::string_view verb = command.list->parsed() ? "list" : to_string(action);
  if (options.files.empty() && options.dataset.empty() && options.manifest.empty()) {
    return unexpected(make_diagnostic(
        codes::k_usage, fmt::format("fib tag {} needs a selection: --file FILE, --dataset DIR or "
                                    "--manifest FILE",
                                    verb)));
  }
  const bool filtered =
      !command.op_types.empty() || !command.names.empty() || !command.since.empty();
  if (filtered && !options.files.empty()) {
    return unexpected(make_diagnostic(codes::k_usage,
                                      "--op-type, --name and --since select within --dataset or "
                                      "--manifest, not among --file files"));
  }
  if (!command.since.empty()) {
    FIB_TRY_ASSIGN(const TagTime since, parse_tag_time(command.since));
    options.since = since;
  }
  return options;
}

void print_table(std::string_view heading, const std::map<std::string, std::size_t>& rows) {
  std::size_t width = heading.size();
  for (const auto& [name, count] : rows) {
    width = std::max(width, name.size());
  }
  write_line(stdout, fmt::format("{:<{}}  {:>5}", heading, width, "files"));
  for (const auto& [name, count] : rows) {
    write_line(stdout, fmt::format("{:<{}}  {:>5}", name, width, count));
  }
}

TagRun list_tags(const TagCommand& command, const TagSelection& selection) {
  DiagnosticList sink;
  CountingSink counting(sink);
  const TagInventory inventory = inventory_tags(selection.files, counting);
  print_diagnostics(sink.items());
  if (command.format == "json") {
    write_all(stdout, tag_inventory_json(inventory).dump(2) + "\n");
  } else {
    write_line(stdout, fmt::format("{} file{}", inventory.files, inventory.files == 1 ? "" : "s"));
    write_line(stdout, "");
    print_table("namespace", inventory.namespaces);
    write_line(stdout, "");
    print_table("tag", inventory.tags);
  }
  write_line(stderr,
             fmt::format("fib tag list: {} file{} selected, {} skipped", selection.files.size(),
                         selection.files.size() == 1 ? "" : "s", inventory.skipped));
  return {counting.counts(), inventory.skipped > 0 ? Outcome::failed : Outcome::clean};
}

// Checks the operands of `add` (printing what check_tag_operands says); the counts of those
// diagnostics. Malformed tags are errors that stop the command, unless --force turns them into
// warnings; two values given for one single-valued namespace always stop it.
DiagnosticCounts check_added_tags(const TagCommand& command) {
  std::vector<Diagnostic> problems = check_tag_operands(command.tags);
  std::size_t malformed = 0;
  for (Diagnostic& problem : problems) {
    if (problem.code == codes::k_tag_malformed) {
      ++malformed;
      if (command.force) {
        problem.severity = Severity::warning;
        problem.message += " (added anyway: --force)";
      }
    }
    write_diagnostic(stderr, problem);
  }
  const DiagnosticCounts counts = count_diagnostics(problems);
  if (malformed > 0 && !command.force) {
    write_line(stderr,
               fmt::format("fib tag add: {} malformed tag{}: nothing written (--force "
                           "adds {} anyway)",
                           malformed, malformed == 1 ? "" : "s", malformed == 1 ? "it" : "them"));
  } else if (counts.errors > 0) {
    write_line(stderr, "fib tag add: contradictory tags: nothing written");
  }
  return counts;
}

TagRun edit_tags(const TagCommand& command, const TagSelection& selection, TagAction action) {
  TagEditOptions options;
  options.action = action;
  options.tags = command.tags;
  options.dry_run = command.dry_run ? DryRun::yes : DryRun::no;
  TagRun run;
  const auto on_file = [&](const TaggedFile& file) {
    print_diagnostics(file.diagnostics);
    run.counts += count_diagnostics(file.diagnostics);
    write_line(stderr, fmt::format("{}: {}", file.file.path.string(), render_tag_change(file)));
    if (command.dry_run && file.status == TagFileStatus::changed) {
      const std::string path = file.file.path.string();
      const bool absolute = file.file.path.is_absolute();
      write_all(stdout, unified_diff(file.original_text, file.new_text,
                                     absolute ? path : "a/" + path, absolute ? path : "b/" + path));
    }
  };
  const TagSummary summary = edit_tag_files(selection.files, options, on_file);
  write_line(stderr,
             fmt::format("fib tag {}: {} file{} selected: {} changed, {} unchanged, {} skipped{}",
                         to_string(action), summary.files, summary.files == 1 ? "" : "s",
                         summary.changed, summary.files - summary.changed - summary.skipped,
                         summary.skipped, command.dry_run ? " (dry run: nothing written)" : ""));
  run.outcome = summary.skipped > 0 ? Outcome::failed : Outcome::clean;
  return run;
}

} // namespace

Subcommand register_tag(CLI::App& app) {
  auto command = std::make_shared<TagCommand>();
  CLI::App* sub = app.add_subcommand("tag", "Add, remove or count the tags of definition files");
  command->subcommand = sub;
  sub->require_subcommand(1);
  sub->footer(k_tag_footer);

  command->add = sub->add_subcommand("add", "Add tags (checked against the namespaces) to the "
                                            "selected definitions");
  command->add->add_option("tags", command->tags, "Tags to add, e.g. model:llama-3.1-8b tp:2")
      ->type_name("TAG")
      ->required();
  add_selection_options(*command->add, *command);
  command->add->add_flag("--dry-run", command->dry_run,
                         "Write nothing; print a unified diff of each file that would change");
  command->add->add_flag("--force", command->force,
                         "Add malformed tags anyway (reported as warnings)");
  command->add->footer("See `fib tag --help` for the selection, the tag rules and exit statuses.");

  command->remove =
      sub->add_subcommand("remove", "Remove tags (or every tag of NAMESPACE:*) from the selected "
                                    "definitions");
  command->remove
      ->add_option("tags", command->tags,
                   "Tags to remove; NAMESPACE:* removes a "
                   "whole namespace")
      ->type_name("TAG")
      ->required();
  add_selection_options(*command->remove, *command);
  command->remove->add_flag("--dry-run", command->dry_run,
                            "Write nothing; print a unified diff of each file that would change");
  command->remove->footer(
      "See `fib tag --help` for the selection, the tag rules and exit statuses.");

  command->list = sub->add_subcommand(
      "list", "Count the selected definitions per tag namespace and per tag (stdout)");
  add_selection_options(*command->list, *command);
  command->list->add_option("--format", command->format, "text (a table) or json")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"text", "json"}));
  command->list->footer(
      "JSON: {\"files\": N, \"namespaces\": {NS: files}, \"tags\": {TAG: files}}; bare flags "
      "count under the namespace \"(flag)\". See `fib tag --help` for the selection.");
  return {command->subcommand, [command](PythonFrontend& /*python*/) { return run_tag(*command); }};
}

int run_tag(const TagCommand& command) {
  const TagAction action = command.add->parsed() ? TagAction::add : TagAction::remove;
  auto options = selection_options(command, action);
  if (!options) {
    write_diagnostic(stderr, options.error());
    return exit_status(std::vector<Diagnostic>{options.error()});
  }
  const TagSelection selection = select_tag_files(*options);
  print_diagnostics(selection.problems);
  print_diagnostics(selection.missing_entries);
  DiagnosticCounts counts = count_diagnostics(selection.problems);
  if (counts.usage_errors > 0 || counts.environment_errors > 0) {
    return exit_status(counts); // nothing was selected: an invalid manifest, an unreadable root
  }
  if (action == TagAction::add && !command.list->parsed()) {
    const DiagnosticCounts checks = check_added_tags(command);
    counts += checks;
    if (checks.errors > 0) {
      return exit_status(counts); // a malformed tag without --force: nothing is written
    }
  }
  const TagRun run = command.list->parsed() ? list_tags(command, selection)
                                            : edit_tags(command, selection, action);
  counts += run.counts;
  // A manifest entry whose file is gone is a finding: the other files were still handled.
  const bool failed = run.outcome == Outcome::failed || !selection.missing_entries.empty();
  return exit_status(counts, Strictness::normal, failed ? Outcome::failed : Outcome::clean);
}

} // namespace fib::app
