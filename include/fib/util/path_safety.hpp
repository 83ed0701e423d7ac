#pragma once
// Names fib may use as one path segment below a directory it writes into (a dataset, a build
// cache): the check behind `stage.unsafe-name` and the paths `fib run` builds from solution fields.

#include <string>
#include <string_view>

namespace fib {

// --- Interface ---

// Why `segment` cannot be a directory or file name below the dataset ("" when it can): empty,
// `.`/`..`, `/`, `\`, NUL or other control characters, a leading `-` or `.`, or longer than 200
// bytes.
std::string unsafe_segment_reason(std::string_view segment);

// Whether a '/'-separated relative path climbs: one of its segments (what lies between slashes) is
// `..`. The test std::filesystem::path's parts make on POSIX, without building a path.
bool has_parent_segment(std::string_view path);

} // namespace fib
