#pragma once
// Pieces of the text and JSON renderings shared by `fib report summary` and `fib report best`.

#include <fib/base/diagnostic.hpp>
#include <fib/io/json_io.hpp>
#include <fib/report/summary.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib::detail {

// {"code", "message"} of a diagnostic, null without one.
Json error_json(const std::optional<Diagnostic>& diagnostic);

// {"PASSED": 6, "RUNTIME_ERROR": 1}: the counts in status name order.
Json statuses_json(const EvaluationCounts& statuses);

// "12.5%".
std::string percent(double rate);

// "128 COMPILE_ERROR, 2 TIMEOUT": the counts of every status but PASSED, most frequent first (then
// by name); "" when there are none.
std::string failures_text(const EvaluationCounts& statuses);

// Rows as left-aligned columns two spaces apart, each line after `indent`; the last cell of a row
// is not padded (so it does not widen its column) and no line ends in blanks.
std::string render_table(const std::vector<std::vector<std::string>>& rows,
                         std::string_view indent);

} // namespace fib::detail
