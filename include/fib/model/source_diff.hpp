#pragma once
// Unified diffs of definition documents for people to read: the Python the `reference` and `init`
// strings hold is shown decoded, one source line per diff line, instead of as one JSON string
// line of many kilobytes. Used by `fib normalize --diff/--check` and `fib stage --diff`. No I/O.

#include <string>
#include <string_view>

namespace fib {

// --- Interface ---

// `text` with each line that is exactly one JSON member `"reference": "<string>"` or
// `"init": "<string>"` (any indentation, an optional trailing comma) replaced by a marker line
// `<indent>"reference": (decoded Python: the lines marked "reference|")` followed by one line
// `<indent>reference| <source line>` per line of the decoded string. Control characters of the
// decoded source other than tab are shown as `\xNN` (a terminal never receives them raw). Every
// other line is kept byte for byte, so a text without such members comes back unchanged (a
// compact one-line document too).
std::string definition_display_text(std::string_view text);

// unified_diff (fib/util/text_diff.hpp) of the display texts of `before` and `after`: a change
// inside `reference` or `init` shows as the changed Python lines, each marked with its field.
// Unlike a plain unified diff, the result cannot be applied with `patch` where it shows decoded
// lines. "" when the texts are equal.
std::string definition_unified_diff(std::string_view before, std::string_view after,
                                    std::string_view before_label, std::string_view after_label);

} // namespace fib
