#pragma once
// Colour on terminals: `--color auto|always|never` (every subcommand) and NO_COLOR.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string_view>

namespace fib::app {

// --- Interface ---

enum class ColorChoice { automatic, always, never };

// The escape sequences a rendering uses; all empty when colour is off.
struct Palette {
  std::string_view bold;
  std::string_view error;   // bold red
  std::string_view warning; // bold yellow
  std::string_view note;    // bold cyan
  std::string_view dim;
  std::string_view reset;
};

// Adds `--color WHEN` to every subcommand of `app` (recursively); the value is the process's
// colour choice (default auto).
void add_color_option(CLI::App& app);

// The palette for text written to `stream`: colours with --color always; none with never; with
// auto, colours when `stream` is a terminal, NO_COLOR is unset or empty, and TERM is not "dumb".
Palette palette_for(std::FILE* stream);

} // namespace fib::app
