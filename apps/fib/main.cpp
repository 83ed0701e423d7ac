// fib: a command-line toolchain for FlashInfer-Trace kernel datasets. Parses the command line and
// dispatches to one subcommand; everything else lives in the library.

#include "color.hpp"
#include "commands.hpp"
#include "doc_paths.hpp"
#include "exit_status.hpp"
#include "keep_until_exit.hpp"
#include "usage_hints.hpp"

#include <fib/python/lazy_runtime.hpp>

#include <CLI/CLI.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

// `%L` for the log pattern: the level as Python's logging spells it (INFO, WARNING, …).
class PythonLevelName final : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg& message, const std::tm& /*time*/,
              spdlog::memory_buf_t& out) override {
    std::string_view name = "INFO";
    switch (message.level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      name = "DEBUG";
      break;
    case spdlog::level::warn:
      name = "WARNING";
      break;
    case spdlog::level::err:
      name = "ERROR";
      break;
    case spdlog::level::critical:
      name = "CRITICAL";
      break;
    default:
      break;
    }
    out.append(name.data(), name.data() + name.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<PythonLevelName>();
  }
};

// One row of the command table.
struct CommandRow {
  std::string_view name;
  fib::app::Subcommand (*add)(CLI::App&);
};

// The command table: one row per subcommand, in the order `fib --help` lists them.
constexpr std::array<CommandRow, 13> k_commands = {{
    {"validate", fib::app::register_validate},
    {"validate-render", fib::app::register_validate_render},
    {"validate-merge", fib::app::register_validate_merge},
    {"normalize", fib::app::register_normalize},
    {"stage", fib::app::register_stage},
    {"tag", fib::app::register_tag},
    {"dump", fib::app::register_dump},
    {"collect", fib::app::register_collect},
    {"run", fib::app::register_run},
    {"report", fib::app::register_report},
    {"schema", fib::app::register_schema},
    {"completion", fib::app::register_completion},
    {"man", fib::app::register_man},
}};

// Registers the subcommands the command line needs: only the one it starts with, when it starts
// with the exact name of one (as every run does: fib has no options before the subcommand but
// --help, --help-all and --version), since parsing needs no other and registering all of them
// costs about 2 ms of every start; else all of them (help, version, a misspelled or missing name,
// and `completion` and `man`, which read the whole table).
std::vector<fib::app::Subcommand> register_commands(CLI::App& app, int argc, char** argv) {
  std::vector<fib::app::Subcommand> commands;
  const std::string_view first = argc > 1 ? std::string_view(argv[1]) : std::string_view();
  const bool reads_table = first == "completion" || first == "man";
  for (const CommandRow& row : k_commands) {
    if (!reads_table && row.name == first) {
      commands.push_back(row.add(app));
      if (commands.back().app->get_name() == row.name) {
        return commands;
      }
      throw std::logic_error("the command table names a subcommand differently from its parser");
    }
  }
  for (const CommandRow& row : k_commands) {
    commands.push_back(row.add(app));
  }
  return commands;
}

} // namespace

int main(int argc, char** argv) {
  using namespace fib::app;
  try {
    CLI::App app{"fib: a fast, strict toolchain for FlashInfer-Trace kernel datasets"};
    app.name("fib");
    app.require_subcommand(1);
    app.set_version_flag("--version", "fib " FIB_VERSION);
    app.set_help_all_flag("--help-all", "Show help for every subcommand");
    // Logs go to standard error, as `[HH:MM:SS] LEVEL fib: message` (the old tool's layout).
    auto logger = spdlog::stderr_logger_st("fib");
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<PythonLevelName>('*').set_pattern("[%H:%M:%S] %* %n: %v");
    logger->set_formatter(std::move(formatter));
    spdlog::set_default_logger(logger);
    const std::vector<Subcommand> commands = register_commands(app, argc, argv);
    name_installed_docs(app);
    add_color_option(app);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (const std::string unknown = unknown_subcommand_message(app); !unknown.empty()) {
        std::fprintf(stderr, "%s\nRun with --help for the list of commands.\n", unknown.c_str());
        return k_exit_usage;
      }
      const int code = app.exit(e);
      for (const std::string& hint : unknown_option_hints(app)) {
        std::fprintf(stderr, "%s\n", hint.c_str());
      }
      return code == 0 ? k_exit_ok : k_exit_usage;
    }
    // Nothing of Python is loaded until a check needs it (fib/python/lazy_runtime.hpp). Never
    // destroyed: finalising a started interpreter (a garbage collection of all it made, then its
    // teardown) cost a cold `validate --dataset` run 14 ms after its last output, and the system
    // takes the memory back at once. The interpreter writes no file and holds nothing else that
    // needs its finaliser; its streams are line-buffered and the helper prints nothing.
    fib::python::LazyRuntime& python =
        keep_until_exit(std::in_place_type<fib::python::LazyRuntime>);
    for (const Subcommand& command : commands) {
      if (command.app->parsed()) {
        return command.run(python);
      }
    }
    return k_exit_usage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fib: internal error: %s\n", e.what());
    return k_exit_internal;
  } catch (...) {
    std::fprintf(stderr, "fib: internal error: unknown exception\n");
    return k_exit_internal;
  }
}
