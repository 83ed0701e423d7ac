#pragma once
// The result-cache flags (--cache-dir, --no-cache) and how they open the cache.

#include <fib/base/diagnostic.hpp>
#include <fib/util/cache_root.hpp>
#include <fib/util/result_cache.hpp>

#include <CLI/CLI.hpp>

#include <string>

namespace fib {

// --- Interface ---

struct CacheFlags {
  std::string directory; // --cache-dir; empty: default_cache_directory()
  bool disabled = false; // --no-cache
};

void add_cache_flags(CLI::App* sub, CacheFlags& flags);

// The cache the flags ask for: disabled with --no-cache, or when no directory can be formed
// (no --cache-dir, FIB_CACHE_DIR, XDG_CACHE_HOME or HOME); else ResultCache::open, whose one
// note (cache.unavailable) goes to `notes`.
ResultCache open_result_cache(const CacheFlags& flags, DiagnosticSink& notes);

} // namespace fib
