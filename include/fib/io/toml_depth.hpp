#pragma once
// A check to run on TOML text before handing it to toml++: version 3.3 builds a dotted key
// (`a.b.c = 1`, `[a.b.c]`) by recursion without a limit, so a key of tens of thousands of parts
// overflows the stack.

#include <cstddef>
#include <optional>
#include <string_view>

namespace fib {

// The most parts a dotted key may have.
inline constexpr std::size_t k_max_toml_key_parts = 128;

// The 1-based line of the first key of `text` with more than k_max_toml_key_parts parts, nullopt
// when none: a run of bare-key characters, quoted strings, blanks and dots (floats count one dot;
// anything else ends the run), outside comments and multi-line strings.
std::optional<std::size_t> toml_key_too_deep(std::string_view text);

} // namespace fib
