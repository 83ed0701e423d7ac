#pragma once
// The normalize flags that `fib normalize`, `fib stage --normalize` and `fib dump --stage
// --normalize` share: --no-rule IDs, the --decisions file and --flashinfer-src DIR, turned into
// NormalizeOptions.

#include <fib/normalize/normalize.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
} // namespace CLI

namespace fib::app {

// --- Interface ---

// The environment variable that names FlashInfer's source when --flashinfer-src is not given.
inline constexpr std::string_view k_flashinfer_src_env = "FIB_FLASHINFER_SRC";

// The values of the shared flags, as the command line gave them.
struct NormalizeFlags {
  std::vector<std::string> disabled_rules;
  std::string decisions_file; // "" means none
  std::string flashinfer_src; // "" means FIB_FLASHINFER_SRC, else the installed package
};

// Declares --flashinfer-src DIR on `sub`, storing into `value`; `prefix` starts its help text
// ("" or "With --normalize: ").
CLI::Option* add_flashinfer_src_option(CLI::App& sub, std::string& value, std::string_view prefix);

// Applies the --no-rule values (`options.disabled_rules`), reads the --decisions file into
// `decisions` (pointing `options.decisions` at it) and sets `options.flashinfer_source` from
// --flashinfer-src, else $FIB_FLASHINFER_SRC (a directory that must hold the `flashinfer` package
// directory). Problems are printed to stderr (an unknown id, N20 or a non-W rule; the decision
// file's parse errors and invalid keys; a source directory without a flashinfer package). Returns
// the exit status to stop with, or std::nullopt to go on.
std::optional<int> apply_normalize_flags(const NormalizeFlags& flags, NormalizeDecisions& decisions,
                                         NormalizeOptions& options);

} // namespace fib::app
