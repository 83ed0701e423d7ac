#include "color.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <unistd.h>

namespace fib::app {
namespace {

ColorChoice g_choice = ColorChoice::automatic; // set once, while the command line is parsed

bool colour_wanted(std::FILE* stream) {
  switch (g_choice) {
  case ColorChoice::always:
    return true;
  case ColorChoice::never:
    return false;
  case ColorChoice::automatic:
    break;
  }
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') {
    return false;
  }
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) {
    return false;
  }
  return isatty(fileno(stream)) != 0;
}

} // namespace

void add_color_option(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({})) {
    sub->add_option_function<std::string>(
           "--color",
           [](const std::string& when) {
             g_choice = when == "always"  ? ColorChoice::always
                        : when == "never" ? ColorChoice::never
                                          : ColorChoice::automatic;
           },
           "Colour: auto (default: on a terminal, unless NO_COLOR is set), always or never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    add_color_option(*sub);
  }
}

Palette palette_for(std::FILE* stream) {
  if (!colour_wanted(stream)) {
    return {};
  }
  return Palette{"\033[1m", "\033[1;31m", "\033[1;33m", "\033[1;36m", "\033[2m", "\033[0m"};
}

} // namespace fib::app
