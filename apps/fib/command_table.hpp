#pragma once
// What the registered CLI11 commands look like, read back from the app after every subcommand was
// registered: the one source of shell completions and the manual page, so neither can drift from
// the options fib parses.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace fib::app {

// --- Interface ---

struct OptionSpec {
  std::vector<std::string> long_names;  // without "--"
  std::vector<std::string> short_names; // without "-"
  std::string value_name;               // "" for a flag; "TEXT", "UINT", … otherwise
  std::vector<std::string> choices;     // the values of a CLI::IsMember check, in its order
  std::string description;
  bool takes_value() const { return !value_name.empty(); }
};

struct PositionalSpec {
  std::string name;
  std::string description;
  std::vector<std::string> choices;
};

struct CommandSpec {
  std::string name;
  std::string description;
  std::string footer;
  std::vector<OptionSpec> options; // --help included, in registration order
  std::vector<PositionalSpec> positionals;
  std::vector<CommandSpec> subcommands; // in registration order
};

// The command tree of `app` (its name, options, positionals, subcommands, recursively).
CommandSpec describe_commands(CLI::App& app);

} // namespace fib::app
