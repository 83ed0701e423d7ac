#include "usage_hints.hpp"

#include <fib/util/closest_match.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

namespace fib::app {
namespace {

// flashinfer-bench's flags and the fib flag that does the same, where there is one.
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> k_old_tool_flags = {{
    {"--local", "--dataset"},
    {"--warmup-runs", "--warmup"},
    {"--no-save-results", "--dry-run"},
}};

// The subcommand the command line reached: the last parsed one, nested ones followed.
const CLI::App& deepest_parsed(const CLI::App& app) {
  const CLI::App* current = &app;
  while (true) {
    const auto parsed = current->get_subcommands(
        [](const CLI::App* sub) { return sub->parsed() && !sub->get_name().empty(); });
    if (parsed.empty()) {
      return *current;
    }
    current = parsed.back();
  }
}

std::vector<std::string> long_option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) {
      names.push_back("--" + name);
    }
  }
  return names;
}

// "fib run", "fib report best": the words of the command line up to `app`.
std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* parent = app.get_parent(); parent != nullptr;
       parent = parent->get_parent()) {
    path = parent->get_name() + " " + path;
  }
  return path;
}

} // namespace

std::string unknown_subcommand_message(const CLI::App& app) {
  if (&deepest_parsed(app) != &app) {
    return "";
  }
  const std::vector<std::string> left = app.remaining();
  if (left.empty() || left.front().empty() || left.front().front() == '-') {
    return "";
  }
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
  }
  const std::string& word = left.front();
  if (std::find(commands.begin(), commands.end(), word) != commands.end()) {
    return "";
  }
  if (const std::string close = closest_match(word, commands); !close.empty()) {
    return fmt::format("fib: '{}' is not a fib command; did you mean '{}'?", word, close);
  }
  std::string list;
  for (const std::string& name : commands) {
    list += (list.empty() ? "" : ", ") + name;
  }
  return fmt::format("fib: '{}' is not a fib command; the commands are: {}", word, list);
}

std::vector<std::string> unknown_option_hints(const CLI::App& app) {
  const CLI::App& reached = deepest_parsed(app);
  const std::vector<std::string> known = long_option_names(reached);
  std::vector<std::string> hints;
  for (const std::string& arg : reached.remaining()) {
    if (!arg.starts_with("--") || arg.size() == 2) {
      continue;
    }
    const std::string flag = arg.substr(0, arg.find('='));
    const auto old = std::find_if(k_old_tool_flags.begin(), k_old_tool_flags.end(),
                                  [&](const auto& entry) { return entry.first == flag; });
    if (old != k_old_tool_flags.end() &&
        std::find(known.begin(), known.end(), old->second) != known.end()) {
      hints.push_back(fmt::format("fib: {} is flashinfer-bench's flag; {} uses {}", flag,
                                  command_path(reached), old->second));
    } else if (const std::string close = closest_match(flag, known); !close.empty()) {
      hints.push_back(fmt::format("fib: unknown option {}; did you mean {}?", flag, close));
    }
  }
  return hints;
}

} // namespace fib::app
