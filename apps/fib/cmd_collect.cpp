// `fib collect DUMP_DIR… --dataset DS`: workloads from FlashInfer Level-10 dumps.

#include "commands.hpp"
#include "exit_status.hpp"
#include "render.hpp"

#include <fib/base/codes.hpp>
#include <fib/collect/collect.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

namespace fib::app {

struct CollectCommand {
  CLI::App* subcommand = nullptr;
  std::vector<std::string> dumps;
  std::string dataset;
  std::vector<std::string> definitions;
  std::vector<std::string> op_types;
  std::vector<std::string> scalars;
  std::size_t max_workloads = k_default_max_workloads;
  std::size_t max_per_axes = k_default_max_per_axes;
  double max_blob_mb = static_cast<double>(k_default_max_blob_tensor_bytes >> 20);
  bool replace = false;
  bool dry_run = false;
  std::string format = "text";
};

namespace {

constexpr const char* k_collect_footer =
    R"TXT(Reads FlashInfer Level-10 dumps (FLASHINFER_LOGLEVEL=10 with
FLASHINFER_DUMP_SAFETENSORS=1; `fib dump --workloads` sets both) and writes workloads for
the dataset's definitions whose fi_api: tag names the dumped API (the class form
fi_api:flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper and the method form
....BatchDecodeWithPagedKVCacheWrapper.run both work). A wrapper's run is paired with
the last plan of the same process and the same object before it.

Each call is bound to the definition's inputs (k_cache/v_cache are the two halves of
paged_kv_cache; index buffers come from the plan, kv_indices cut to kv_indptr[-1]),
its var axes are read off the tensors and every const axis is checked: a call of
another model or tensor-parallel size is refused with the reason. Integer tensors are
stored as blobs, float tensors are `random`, scalars are the call's values. A scalar
the dump does not hold is asked for, never made up: --scalar NAME=VALUE answers it.

Selection: exact duplicates (same axes and data) of other calls or of the dataset's
workloads are dropped, at most --max-per-axes workloads share identical axes, and
--max-workloads are spread over the axes (each batch size seen first). Lines are
appended to workloads/<op_type>/<name>.jsonl (with --replace they take the place of
the definition's old lines, whose own blobs go; other lines stay, and nothing is
removed when nothing was accepted). Blobs are written only for selected workloads,
as ./blob/workloads/<op_type>/<name>/<name>_<uuid>.safetensors; every write is
atomic and runs under a lock.

Exit status: 0 done (refused calls are warnings), 1 a definition got no usable call
(collect.no-workloads), 2 usage (an unknown --definitions/--op-types value, a dump
root that is not a dump), 3 I/O.

Examples:
  fib collect dumps/ --dataset ds --definitions gqa_paged_decode_h32_kv8_d128_ps1
  fib collect dumps/run1 dumps/run2 --dataset ds --op-types rmsnorm --max-workloads 8
  fib collect dumps/ --dataset ds --scalar sm_scale=0.08838834764831845 --dry-run)TXT";

} // namespace

Subcommand register_collect(CLI::App& app) {
  auto command = std::make_shared<CollectCommand>();
  CLI::App* sub = app.add_subcommand(
      "collect", "Make workloads for a dataset's definitions from FlashInfer Level-10 dumps");
  command->subcommand = sub;
  sub->add_option("dumps", command->dumps, "Level-10 dump directories (FLASHINFER_DUMP_DIR)")
      ->required()
      ->type_name("DUMP_DIR");
  sub->add_option("--dataset", command->dataset, "The dataset to write workloads into")
      ->required()
      ->type_name("DIR");
  sub->add_option("--definitions", command->definitions,
                  "Only these definitions (names; repeatable)")
      ->type_name("NAME")
      ->allow_extra_args(false);
  sub->add_option("--op-types", command->op_types, "Only definitions of these op_types")
      ->type_name("OP")
      ->allow_extra_args(false);
  sub->add_option("--scalar", command->scalars,
                  "A scalar the dumps do not hold: NAME=VALUE or DEFINITION:NAME=VALUE "
                  "(repeatable)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  sub->add_option("--max-workloads", command->max_workloads,
                  "New workloads per definition (default 20)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--max-per-axes", command->max_per_axes,
                  "Workloads with identical axes, old and new (default 2)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--max-blob-mb", command->max_blob_mb,
                  "Largest tensor kept as a blob, in MiB; a larger one becomes random "
                  "(default 64)")
      ->check(CLI::Range(0.0, 1048576.0));
  sub->add_flag("--replace", command->replace,
                "Replace each definition's workloads (only where new ones were accepted)");
  sub->add_flag("--dry-run", command->dry_run, "Report what would be written; write nothing");
  sub->add_option("--format", command->format, "Report format on stdout")
      ->check(CLI::IsMember({"text", "json"}));
  sub->footer(k_collect_footer);
  return {command->subcommand, [command](PythonFrontend&) { return run_collect(*command); }};
}

int run_collect(const CollectCommand& command) {
  CollectOptions options;
  for (const std::string& dump : command.dumps) {
    options.dumps.emplace_back(dump);
  }
  options.dataset = command.dataset;
  options.definitions = command.definitions;
  options.op_types = command.op_types;
  for (const std::string& text : command.scalars) {
    auto answer = parse_scalar_answer(text);
    if (!answer) {
      write_diagnostic(stderr, answer.error());
      return k_exit_usage;
    }
    options.candidates.scalars.push_back(std::move(*answer));
  }
  options.candidates.max_blob_tensor_bytes =
      static_cast<std::uint64_t>(command.max_blob_mb * 1024.0 * 1024.0);
  options.write.replace = command.replace ? ReplaceMode::replace : ReplaceMode::append;
  options.write.dry_run = command.dry_run ? DryRun::yes : DryRun::no;
  options.write.policy.max_workloads = command.max_workloads;
  options.write.policy.max_per_axes = command.max_per_axes;
  DiagnosticList diagnostics;
  auto report = collect_workloads(options, diagnostics);
  for (const Diagnostic& d : diagnostics.items()) {
    write_diagnostic(stderr, d);
  }
  std::vector<Diagnostic> all = diagnostics.items();
  if (!report) {
    write_diagnostic(stderr, report.error());
    all.push_back(report.error());
    return exit_status(all);
  }
  if (command.format == "json") {
    Json json = collect_report_json(*report);
    json["dry_run"] = command.dry_run;
    write_line(stdout, json.dump(2));
  } else {
    write_all(stdout, render_collect_report(*report, options.write.dry_run));
  }
  return exit_status(all);
}

} // namespace fib::app
