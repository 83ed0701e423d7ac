#include "command_table.hpp"

#include <CLI/CLI.hpp>

namespace fib::app {
namespace {

// CLI11 renders a CLI::IsMember check into the type name: "TEXT:{a,b,c}".
std::vector<std::string> choices_of(const std::string& type_name) {
  const auto open = type_name.find(":{");
  const auto close = type_name.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return {};
  }
  std::vector<std::string> out;
  const std::string list = type_name.substr(open + 2, close - open - 2);
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) {
      out.push_back(list.substr(start, comma - start));
    }
    start = comma + 1;
  }
  return out;
}

std::string value_name_of(const std::string& type_name) {
  const auto colon = type_name.find(':');
  return colon == std::string::npos ? type_name : type_name.substr(0, colon);
}

} // namespace

CommandSpec describe_commands(CLI::App& app) {
  CommandSpec spec;
  spec.name = app.get_name();
  spec.description = app.get_description();
  spec.footer = app.get_footer();
  for (const CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (option->get_positional()) {
      spec.positionals.push_back({option->get_name(), option->get_description(), choices_of(type)});
      continue;
    }
    OptionSpec o;
    o.long_names = option->get_lnames();
    o.short_names = option->get_snames();
    if (option->get_expected_min() > 0) {
      o.value_name = type.empty() ? "VALUE" : value_name_of(type);
    }
    o.choices = choices_of(type);
    o.description = option->get_description();
    spec.options.push_back(std::move(o));
  }
  for (CLI::App* sub : app.get_subcommands({})) {
    spec.subcommands.push_back(describe_commands(*sub));
  }
  return spec;
}

} // namespace fib::app
