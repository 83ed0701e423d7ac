// fib: a command-line toolchain for FlashInfer-Trace kernel datasets. Parses the command line and
// dispatches to one subcommand; everything else lives in the library.

#include "commands.hpp"
#include "exit_codes.hpp"

#include <fib/python_runtime.hpp>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  using namespace fib::app;
  try {
    CLI::App app{"fib: a fast, strict toolchain for FlashInfer-Trace kernel datasets"};
    app.name("fib");
    app.require_subcommand(1);
    app.set_version_flag("--version", "fib " FIB_VERSION);
    app.set_help_all_flag("--help-all", "Show help for every subcommand");
    // Logs go to standard error, as `[HH:MM:SS] level fib: message`.
    auto logger = spdlog::stderr_logger_st("fib");
    logger->set_pattern("[%H:%M:%S] %l %n: %v");
    spdlog::set_default_logger(logger);
    auto validate = register_validate(app);
    auto validate_render = register_validate_render(app);
    auto validate_merge = register_validate_merge(app);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      const int code = app.exit(e);
      return code == 0 ? k_exit_ok : k_exit_usage;
    }
    // Owned here so that Python objects die before the interpreter; started lazily.
    fib::python::Runtime python;
    if (validate_selected(*validate)) {
      return run_validate(*validate, python);
    }
    if (validate_render_selected(*validate_render)) {
      return run_validate_render(*validate_render);
    }
    if (validate_merge_selected(*validate_merge)) {
      return run_validate_merge(*validate_merge);
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
