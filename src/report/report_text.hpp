#pragma once
// Pieces shared by `fib report summary`, `best` and `fastp`: the selection of definitions and the
// text and JSON renderings.

#include <fib/base/diagnostic.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/trace_set.hpp>
#include <fib/report/summary.hpp>

#include <set>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib::detail {

// The definitions of `set` that `wanted` names, in name order (all of them when `wanted` is
// empty); the names found go into `seen`.
std::vector<std::string> selected_definitions(const TraceSet& set,
                                              const std::vector<std::string>& wanted,
                                              std::set<std::string, std::less<>>& seen);

// `score.unknown-definition`, once per name, for each name of `wanted` not in `seen` (the names
// no loaded dataset has).
void report_unknown_definitions(const std::vector<std::string>& wanted,
                                const std::set<std::string, std::less<>>& seen,
                                DiagnosticSink& sink);

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
