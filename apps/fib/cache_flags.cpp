#include "cache_flags.hpp"

namespace fib {

void add_cache_flags(CLI::App* sub, CacheFlags& flags) {
  auto* dir = sub->add_option("--cache-dir", flags.directory,
                              "Result cache directory (default: $FIB_CACHE_DIR, else "
                              "$FIB_CACHE_PATH, else $XDG_CACHE_HOME/fib, else ~/.cache/fib)");
  sub->add_flag("--no-cache", flags.disabled,
                "Neither read nor write the result cache (results are the same either way)")
      ->excludes(dir);
}

ResultCache open_result_cache(const CacheFlags& flags, DiagnosticSink& notes) {
  if (flags.disabled) {
    return ResultCache();
  }
  ResultCacheOptions options;
  if (!flags.directory.empty()) {
    options.directory = flags.directory;
  } else if (auto directory = default_cache_directory()) {
    options.directory = std::move(*directory);
  } else {
    return ResultCache();
  }
  return ResultCache::open(options, notes);
}

} // namespace fib
