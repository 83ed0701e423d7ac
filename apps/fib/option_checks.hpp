#pragma once
// Checks of numeric option values whose message says what the option wants. CLI11's own
// PositiveNumber names the range of a double ("not in range 0.000000 to 1797…", 309 digits).

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

namespace fib::app {

// --- Interface ---

// Accepts a number greater than 0; otherwise CLI11 reports "OPTION: must be a positive WHAT"
// (a usage error, exit 2). `what`, e.g. "number of bytes", names the unit.
inline CLI::Validator positive_number(std::string_view what) {
  const std::string message = "must be a positive " + std::string(what);
  return CLI::Validator(
      [message](std::string& input) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(input.c_str(), &end);
        const bool parsed = !input.empty() && end == input.c_str() + input.size();
        return parsed && std::isfinite(value) && value > 0 ? std::string() : message;
      },
      "POSITIVE");
}

} // namespace fib::app
