// `fib completion bash|zsh|fish` and `fib man`: shell completions and the manual page, generated
// from the command table of this very binary.

#include "command_table.hpp"
#include "commands.hpp"
#include "exit_status.hpp"
#include "render.hpp"
#include "shell_completion.hpp"

#include <CLI/CLI.hpp>
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <string>

namespace fib::app {

struct CompletionCommand {
  CLI::App* root = nullptr;
  std::string shell;
};

struct ManCommand {
  CLI::App* root = nullptr;
};

namespace {

// The page's date: SOURCE_DATE_EPOCH when set (reproducible builds), else today (UTC).
std::string page_date() {
  std::time_t when = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch != nullptr && *epoch != '\0') {
    char* end = nullptr;
    const long long seconds = std::strtoll(epoch, &end, 10);
    if (end != nullptr && *end == '\0' && seconds >= 0) {
      when = static_cast<std::time_t>(seconds);
    }
  }
  std::tm utc{};
  gmtime_r(&when, &utc);
  return fmt::format("{:%Y-%m-%d}", utc);
}

} // namespace

int run_completion(const CompletionCommand& command) {
  const CommandSpec table = describe_commands(*command.root);
  write_all(stdout, command.shell == "bash"  ? bash_completion(table)
                    : command.shell == "zsh" ? zsh_completion(table)
                                             : fish_completion(table));
  return k_exit_ok;
}

int run_man(const ManCommand& command) {
  write_all(stdout, man_page(describe_commands(*command.root), FIB_VERSION, page_date()));
  return k_exit_ok;
}

Subcommand register_completion(CLI::App& app) {
  auto command = std::make_shared<CompletionCommand>();
  command->root = &app;
  CLI::App* sub = app.add_subcommand("completion", "Print a shell completion script for fib");
  sub->add_option("shell", command->shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  sub->footer(R"(The script completes commands, options, option values (--format, --kind, ...)
and file names; it is generated from this fib's own command table. Installed
copies are under share/bash-completion/completions/fib,
share/zsh/site-functions/_fib and share/fish/vendor_completions.d/fib.fish.

Examples:
  source <(fib completion bash)
  fib completion zsh > "${fpath[1]}/_fib"
  fib completion fish > ~/.config/fish/completions/fib.fish)");
  return {sub, [command](PythonFrontend& /*python*/) { return run_completion(*command); }};
}

Subcommand register_man(CLI::App& app) {
  auto command = std::make_shared<ManCommand>();
  command->root = &app;
  CLI::App* sub = app.add_subcommand("man", "Print the manual page fib(1) (roff)");
  sub->footer(R"(The page lists every command and option, generated from this fib's command
table; it is installed as share/man/man1/fib.1. Its date is $SOURCE_DATE_EPOCH
when set, else today.

Examples:
  fib man | man -l -
  fib man > fib.1)");
  return {sub, [command](PythonFrontend& /*python*/) { return run_man(*command); }};
}

} // namespace fib::app
