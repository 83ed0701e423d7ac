#pragma once
// Where fib keeps what it caches: the result cache (`ROOT/v1`, util/result_cache) and the
// solutions' builds (`ROOT/solutions/<content hash>`, exec) share one root.

#include <filesystem>
#include <optional>

namespace fib {

// $FIB_CACHE_DIR if set and non-empty, else $FIB_CACHE_PATH (the old tool's name for its cache,
// still accepted), else $XDG_CACHE_HOME/fib (XDG_CACHE_HOME set and absolute), else
// $HOME/.cache/fib (HOME set and non-empty); nullopt when none can be formed.
std::optional<std::filesystem::path> default_cache_directory();

} // namespace fib
