#pragma once
// The normalize flags that `fib normalize` and `fib stage --normalize` share: --no-rule IDs and the
// --decisions file, turned into NormalizeOptions.

#include <fib/diagnostic.hpp>
#include <fib/normalize.hpp>

#include <optional>
#include <string>
#include <vector>

namespace fib::app {

// Fills `options.disabled_rules` from the --no-rule values. The error names the first id that is
// unknown, N20, or not a W rule (a usage error).
std::optional<Diagnostic> apply_disabled_rules(const std::vector<std::string>& ids,
                                               NormalizeOptions& options);

// Reads the --decisions file into `decisions` and points `options.decisions` at it; "" means none.
// Diagnostics of the file (its parse errors and invalid keys) are printed to stderr. Returns the
// exit status to stop with, or std::nullopt to go on.
std::optional<int> load_decisions(const std::string& file, NormalizeDecisions& decisions,
                                  NormalizeOptions& options);

} // namespace fib::app
