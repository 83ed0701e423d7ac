#pragma once
// Shell completion scripts for bash, zsh and fish, and the roff manual page, generated from the
// command table (command_table.hpp).

#include "command_table.hpp"

#include <string>

namespace fib::app {

// --- Interface ---

// A bash script that defines `_fib` and registers it with `complete -F _fib fib`: subcommands
// (nested ones too), each command's options after "-", an option's choices after it, files
// elsewhere.
std::string bash_completion(const CommandSpec& root);

// A zsh completion function (`#compdef fib`): subcommands and options with their descriptions,
// choices, files for positionals and option values.
std::string zsh_completion(const CommandSpec& root);

// fish `complete -c fib …` lines with descriptions: subcommands where no subcommand was given yet,
// each command's options once its subcommand is on the line, choices for options that have them.
std::string fish_completion(const CommandSpec& root);

// The manual page fib(1) in roff (man macros): name, synopsis, description, every command with its
// options (and the footer text of its --help), exit status, environment, files and where the
// documentation is installed. `date` is the page's date (YYYY-MM-DD).
std::string man_page(const CommandSpec& root, const std::string& version, const std::string& date);

} // namespace fib::app
