#pragma once
// Line-based unified diffs of two in-memory texts, in the format `diff -u` and `git diff` print,
// for showing what a rewrite (such as `fib normalize`) would change. No I/O.

#include <string>
#include <string_view>

namespace fib {

// --- Interface ---

// Unified diff (as `diff -u` / `git diff` print it) of `before` and `after`, split into lines at
// '\n'. Returns "" when the texts are equal. Headers are "--- <before_label>\n+++ <after_label>\n",
// hunks "@@ -l,s +l,s @@" with `context_lines` lines of context (default 3; a negative count counts
// as 0), lines prefixed ' ', '-', '+'. A last line without a trailing newline is followed by
// "\\ No newline at end of file\n" like GNU diff.
//
// Hunk headers follow GNU diff: a range of one line prints only its start ("-7"), an empty range
// prints the line before it with length 0 ("-7,0", "-0,0" for an empty text). Changes whose
// context would overlap or touch (at most 2 * context_lines unchanged lines apart) share one hunk.
// The diff is minimal (Myers' algorithm, linear space) unless the texts differ in very many
// places; then it may be coarser, but it is always correct: `patch` applied to `before` yields
// `after`. Bytes are compared exactly (no whitespace or line-ending normalisation; a "\r" stays
// part of its line).
std::string unified_diff(std::string_view before, std::string_view after,
                         std::string_view before_label, std::string_view after_label,
                         int context_lines = 3);

} // namespace fib
