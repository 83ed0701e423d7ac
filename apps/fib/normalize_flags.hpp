#pragma once
// The normalize flags that `fib normalize` and `fib stage --normalize` share: --no-rule IDs and the
// --decisions file, turned into NormalizeOptions.

#include <fib/normalize/normalize.hpp>

#include <optional>
#include <string>
#include <vector>

namespace fib::app {

// Applies the --no-rule values (`options.disabled_rules`) and reads the --decisions file ("" means
// none) into `decisions`, pointing `options.decisions` at it. Problems are printed to stderr (an
// unknown id, N20 or a non-W rule; the decision file's parse errors and invalid keys). Returns the
// exit status to stop with, or std::nullopt to go on.
std::optional<int> apply_normalize_flags(const std::vector<std::string>& disabled_rules,
                                         const std::string& decisions_file,
                                         NormalizeDecisions& decisions, NormalizeOptions& options);

} // namespace fib::app
