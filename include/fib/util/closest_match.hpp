#pragma once
// "Did you mean": the known name closest to a mistyped one, for usage errors (an unknown
// subcommand, option or filter value).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// The edit distance between `a` and `b`: insertions, deletions, substitutions and swaps of two
// neighbouring bytes (optimal string alignment), each counting 1.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, compared without ASCII case: the one at the smallest edit
// distance, if that is at most a third of `word`'s length (at least 1); the first of equals in
// `candidates`' order. Empty when none is that close or `word` is itself a candidate.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

} // namespace fib
