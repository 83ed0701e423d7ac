// fib: a command-line toolchain for FlashInfer-Trace kernel datasets. Parses the command line and
// dispatches to one subcommand; everything else lives in the library.

#include "color.hpp"
#include "commands.hpp"
#include "doc_paths.hpp"
#include "exit_status.hpp"
#include "usage_hints.hpp"

#include <fib/python/runtime.hpp>

#include <CLI/CLI.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
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
    // The command table: one row per subcommand, in the order `fib --help` lists them.
    const std::vector<Subcommand> commands = {
        register_validate(app),  register_validate_render(app), register_validate_merge(app),
        register_normalize(app), register_stage(app),           register_tag(app),
        register_dump(app),      register_collect(app),         register_run(app),
        register_report(app),    register_schema(app),          register_completion(app),
        register_man(app),
    };
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
    // Owned here so that Python objects die before the interpreter; started lazily.
    fib::python::Runtime python;
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
