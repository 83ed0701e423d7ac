#pragma once
// The staging options that `fib stage` and `fib dump --stage` share (--on-conflict, --exclude,
// --force, --drop-curated): one definition of them, their cross-check and their mapping to the
// options of either command (StageOptions, DumpOptions: both have the same four fields).

#include <fib/base/enum_names.hpp>
#include <fib/stage/stage.hpp>

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace fib::app {

// --- Interface ---

struct StagingFlags {
  std::string on_conflict = "fail"; // checked by CLI11 against EnumNames<OnConflict>
  std::vector<std::string> exclude;
  bool force = false;
  bool drop_curated = false;
};

// Which command's help the options get: fib stage's own, or fib dump's ("With --stage: …").
enum class StagingHelp { stage, dump };

// Adds --on-conflict, --exclude, --force and --drop-curated to `sub`, bound to `flags`.
void add_staging_flags(CLI::App& sub, StagingFlags& flags, StagingHelp help);

// "--force needs --on-conflict overwrite" (or --drop-curated) when one is given without it.
std::optional<std::string> overwrite_flags_misuse(const StagingFlags& flags);

// Sets on_conflict, exclude, overwrite_breaking and curated of `options`.
template <class Options> void apply_staging_flags(const StagingFlags& flags, Options& options) {
  options.on_conflict = parse_enum<OnConflict>(flags.on_conflict).value_or(OnConflict::fail);
  options.exclude = flags.exclude;
  options.overwrite_breaking = flags.force ? OverwriteBreaking::force : OverwriteBreaking::refuse;
  options.curated = flags.drop_curated ? CuratedFields::drop : CuratedFields::keep;
}

} // namespace fib::app
