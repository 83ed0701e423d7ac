// `fib schema NAME`: prints a built-in JSON Schema.

#include "commands.hpp"
#include "exit_status.hpp"
#include "render.hpp"

#include <fib/base/codes.hpp>
#include <fib/model/schemas.hpp>
#include <fib/util/closest_match.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

namespace fib::app {

struct SchemaCommand {
  std::string name;
  bool list = false;
};

namespace {

// The schema's "$id" as written in its text (the schemas are fib's own files: one "$id" member
// near the top, no escapes).
std::string_view schema_id(const SchemaFile& schema) {
  constexpr std::string_view key = "\"$id\": \"";
  const auto start = schema.text.find(key);
  if (start == std::string_view::npos) {
    return {};
  }
  const auto begin = start + key.size();
  const auto end = schema.text.find('"', begin);
  return end == std::string_view::npos ? std::string_view{}
                                       : schema.text.substr(begin, end - begin);
}

} // namespace

Subcommand register_schema(CLI::App& app) {
  auto command = std::make_shared<SchemaCommand>();
  CLI::App* sub =
      app.add_subcommand("schema", "Print the JSON Schema of definitions, solutions, workload "
                                   "lines or trace lines");
  sub->add_option("name", command->name,
                  "definition, solution, workload or trace (or a schema's file name or $id)");
  sub->add_flag("--list", command->list, "List the schemas: kind, file name and $id");
  sub->footer(R"(The schemas are built into fib (the same files are installed under
share/fib/schemas). Each has an $id of the form
https://flashinfer-trace.fib/schemas/<file name>, a name that fib resolves
(NAME may be the $id); editors map files to them by path (docs/schemas.md).

Examples:
  fib schema definition > definition.v1.schema.json
  fib schema https://flashinfer-trace.fib/schemas/solution.v1.schema.json
  fib schema --list)");
  return {sub, [command](PythonFrontend& /*python*/) { return run_schema(*command); }};
}

int run_schema(const SchemaCommand& command) {
  if (command.list) {
    for (const SchemaFile& schema : all_schemas()) {
      write_line(stdout,
                 fmt::format("{}\t{}\t{}", schema.kind, schema.file_name, schema_id(schema)));
    }
    return k_exit_ok;
  }
  std::vector<std::string> kinds;
  for (const SchemaFile& schema : all_schemas()) {
    kinds.emplace_back(schema.kind);
  }
  if (command.name.empty()) {
    const Diagnostic d = make_diagnostic(
        codes::k_usage, fmt::format("fib schema wants a name: {}", fmt::join(kinds, ", ")));
    write_diagnostic(stderr, d);
    return exit_status(std::vector<Diagnostic>{d});
  }
  const auto schema = find_schema(command.name);
  if (!schema) {
    std::string message =
        fmt::format("no schema '{}', valid: {}", command.name, fmt::join(kinds, ", "));
    if (const std::string close = closest_match(command.name, kinds); !close.empty()) {
      message += fmt::format("; did you mean '{}'?", close);
    }
    const Diagnostic d = make_diagnostic(codes::k_usage, std::move(message));
    write_diagnostic(stderr, d);
    return exit_status(std::vector<Diagnostic>{d});
  }
  write_all(stdout, schema->text);
  return k_exit_ok;
}

} // namespace fib::app
