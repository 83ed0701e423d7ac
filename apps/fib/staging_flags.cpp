#include "staging_flags.hpp"

#include <fmt/format.h>

namespace fib::app {

void add_staging_flags(CLI::App& sub, StagingFlags& flags, StagingHelp help) {
  const bool dump = help == StagingHelp::dump;
  std::vector<std::string> modes;
  for (const auto& entry : EnumNames<OnConflict>::k_table) {
    modes.emplace_back(entry.name);
  }
  sub.add_option("--on-conflict", flags.on_conflict,
                 dump ? "With --stage: fail (default), skip or overwrite (as in fib stage)"
                      : "What a differing staged file means: fail (default), skip or overwrite")
      ->check(CLI::IsMember(modes));
  sub.add_option("--exclude", flags.exclude,
                 dump ? "With --stage: do not stage the dumped files that match this glob "
                        "(repeatable)"
                      : "Leave out the inputs that match this glob (repeatable)")
      ->allow_extra_args(false);
  sub.add_flag("--force", flags.force,
               "With --on-conflict overwrite: replace even when workloads, solutions or traces "
               "that name the definition would no longer validate");
  sub.add_flag("--drop-curated", flags.drop_curated,
               "With --on-conflict overwrite: do not keep the staged copy's descriptions and "
               "extra tags that the incoming one lacks");
}

std::optional<std::string> overwrite_flags_misuse(const StagingFlags& flags) {
  if (flags.on_conflict == "overwrite" || (!flags.force && !flags.drop_curated)) {
    return std::nullopt;
  }
  return fmt::format("{} needs --on-conflict overwrite",
                     flags.force ? "--force" : "--drop-curated");
}

} // namespace fib::app
