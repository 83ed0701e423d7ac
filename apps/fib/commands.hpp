#pragma once
// The subcommands. Each cmd_X.cpp pairs `register_X` (declares the options on the app and returns
// the table entry main.cpp dispatches through) with `run_X` (calls the library entry point,
// renders, maps the exit status with exit_status()). No domain logic here.

#include <fib/model/python_frontend.hpp>

#include <functional>

namespace CLI {
class App;
}

namespace fib::app {

// One row of main.cpp's command table: the CLI11 subcommand, and what runs when it was chosen.
// `run` gets the process's Python runtime; commands that never need Python ignore it (it starts
// lazily, so passing it costs nothing).
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int(PythonFrontend&)> run;
};

Subcommand register_validate(CLI::App& app);
Subcommand register_validate_render(CLI::App& app);
Subcommand register_validate_merge(CLI::App& app);
Subcommand register_normalize(CLI::App& app);
Subcommand register_stage(CLI::App& app); // Python starts only with --normalize
Subcommand register_tag(CLI::App& app);
Subcommand register_dump(CLI::App& app); // Python starts only with --stage
Subcommand register_collect(CLI::App& app);
Subcommand register_run(CLI::App& app);
Subcommand register_report(CLI::App& app);
Subcommand register_schema(CLI::App& app);
// Both read the whole command table when they run: register them last.
Subcommand register_completion(CLI::App& app);
Subcommand register_man(CLI::App& app);

// The runners, declared here so that each register_X can bind its own.
struct ValidateCommand;
int run_validate(const ValidateCommand& command, PythonFrontend& python);
struct ValidateRenderCommand;
int run_validate_render(const ValidateRenderCommand& command);
struct ValidateMergeCommand;
int run_validate_merge(const ValidateMergeCommand& command);
struct NormalizeCommand;
int run_normalize(const NormalizeCommand& command, PythonFrontend& python);
struct StageCommand;
int run_stage(const StageCommand& command, PythonFrontend& python);
struct TagCommand;
int run_tag(const TagCommand& command);
struct DumpCommand;
int run_dump(const DumpCommand& command, PythonFrontend& python);
struct CollectCommand;
int run_collect(const CollectCommand& command);
struct RunCommand;
int run_run(const RunCommand& command);
struct ReportCommand;
int run_report(const ReportCommand& command, PythonFrontend& python);
struct SchemaCommand;
int run_schema(const SchemaCommand& command);
struct CompletionCommand;
int run_completion(const CompletionCommand& command);
struct ManCommand;
int run_man(const ManCommand& command);

} // namespace fib::app
