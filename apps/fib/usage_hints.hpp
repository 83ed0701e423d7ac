#pragma once
// "Did you mean" after a command-line error: the subcommand a mistyped name is closest to, the
// option an unknown one is closest to, and fib's name for a flag of flashinfer-bench.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace fib::app {

// What to say when parsing failed and CLI11's own message would mislead: for an unknown
// subcommand ("fib valdate …" parses as "A subcommand is required"), the line that replaces it,
// "fib: 'valdate' is not a fib command; did you mean 'validate'?" (or the list of commands).
// Empty when the first argument is a subcommand or an option.
std::string unknown_subcommand_message(const CLI::App& app);

// One line per unknown `--option` left over in the deepest subcommand that was parsed, said after
// CLI11's message: "fib: --local is flashinfer-bench's flag; fib run uses --dataset" for the old
// tool's flags that have a counterpart here, else "fib: unknown option --datset; did you mean
// --dataset?" when an option of that subcommand is close. Nothing for other leftovers.
std::vector<std::string> unknown_option_hints(const CLI::App& app);

} // namespace fib::app
