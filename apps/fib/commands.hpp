#pragma once
// Subcommand registration. Each cmd_X.cpp pairs `register_X` (declares the options on the app) with
// `run_X` (calls the library entry point, renders, maps the exit status). No domain logic here.

#include <fib/python/runtime.hpp>

#include <memory>

namespace CLI {
class App;
}

namespace fib::app {

struct ValidateCommand;

// Adds `validate` to `app`; the returned handle is filled when the command line is parsed.
std::shared_ptr<ValidateCommand> register_validate(CLI::App& app);
// True when `validate` was chosen on the command line.
bool validate_selected(const ValidateCommand& command);
int run_validate(const ValidateCommand& command, python::Runtime& python);

struct ValidateRenderCommand;
std::shared_ptr<ValidateRenderCommand> register_validate_render(CLI::App& app);
bool validate_render_selected(const ValidateRenderCommand& command);
int run_validate_render(const ValidateRenderCommand& command);

struct ValidateMergeCommand;
std::shared_ptr<ValidateMergeCommand> register_validate_merge(CLI::App& app);
bool validate_merge_selected(const ValidateMergeCommand& command);
int run_validate_merge(const ValidateMergeCommand& command);

struct NormalizeCommand;
std::shared_ptr<NormalizeCommand> register_normalize(CLI::App& app);
bool normalize_selected(const NormalizeCommand& command);
int run_normalize(const NormalizeCommand& command, python::Runtime& python);

struct StageCommand;
std::shared_ptr<StageCommand> register_stage(CLI::App& app);
bool stage_selected(const StageCommand& command);
// Python starts only with --normalize.
int run_stage(const StageCommand& command, python::Runtime& python);

struct TagCommand;
std::shared_ptr<TagCommand> register_tag(CLI::App& app);
bool tag_selected(const TagCommand& command);
int run_tag(const TagCommand& command);

struct DumpCommand;
std::shared_ptr<DumpCommand> register_dump(CLI::App& app);
bool dump_selected(const DumpCommand& command);
// Python starts only for Path A (--stage).
int run_dump(const DumpCommand& command, python::Runtime& python);

struct RunCommand;
std::shared_ptr<RunCommand> register_run(CLI::App& app);
bool run_selected(const RunCommand& command);
int run_run(const RunCommand& command);

struct ReportCommand;
std::shared_ptr<ReportCommand> register_report(CLI::App& app);
bool report_selected(const ReportCommand& command);
int run_report(const ReportCommand& command);

} // namespace fib::app
