#pragma once
// Helpers shared by the result cache's tests: keys and values made from numbers, committing a
// range of them, reading them back, and looking at the pack files in a cache directory.

#include "test_support.hpp"

#include <fib/util/result_cache.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fib::result_cache_testing {

using testing::TempDir;

inline Sha256Digest key_of(int n) {
  return sha256("key " + std::to_string(n));
}

// A value of `size` bytes that differs for every `n` (and for every `variant`).
inline std::string value_of(int n, std::size_t size = 64, int variant = 0) {
  std::string value = "value " + std::to_string(n) + "/" + std::to_string(variant) + ":";
  while (value.size() < size) {
    value += static_cast<char>('a' + (value.size() * 7 + static_cast<std::size_t>(n)) % 26);
  }
  value.resize(size);
  return value;
}

inline ResultCacheOptions options_for(const std::filesystem::path& root,
                                      std::uintmax_t max_bytes = std::uintmax_t{256} << 20) {
  ResultCacheOptions options;
  options.directory = root;
  options.max_bytes = max_bytes;
  return options;
}

// The codes of `notes`, in order.
inline std::vector<std::string> codes_of(const DiagnosticList& notes) {
  std::vector<std::string> codes;
  for (const Diagnostic& d : notes.items()) {
    codes.push_back(d.code);
  }
  return codes;
}

// Opens the cache, puts keys [first, last) with value_of(n, size, variant) and commits; returns
// the codes of the notes of open and commit together.
inline std::vector<std::string> commit_range(const ResultCacheOptions& options, int first, int last,
                                             std::size_t size = 64, int variant = 0) {
  DiagnosticList notes;
  ResultCache cache = ResultCache::open(options, notes);
  for (int n = first; n < last; ++n) {
    cache.put(key_of(n), value_of(n, size, variant));
  }
  cache.commit(notes);
  return codes_of(notes);
}

// The value the cache finds under key_of(n); nullopt when it has none.
inline std::optional<std::string> found(const ResultCache& cache, int n) {
  const auto value = cache.find(key_of(n));
  return value ? std::optional<std::string>(std::string(*value)) : std::nullopt;
}

// How many of keys [first, last) the cache finds with their right value, value_of(n) (64 bytes,
// variant 0).
inline int found_count(const ResultCache& cache, int first, int last) {
  int count = 0;
  for (int n = first; n < last; ++n) {
    count += found(cache, n) == value_of(n) ? 1 : 0;
  }
  return count;
}

// The names in `root/v1` that look like packs (whatever they are), sorted.
inline std::vector<std::string> pack_names(const std::filesystem::path& root) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root / "v1", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("pack-") && name.ends_with(".bin")) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The total size of the regular pack files in `root/v1`.
inline std::uintmax_t pack_bytes(const std::filesystem::path& root) {
  std::uintmax_t total = 0;
  for (const std::string& name : pack_names(root)) {
    const auto path = root / "v1" / name;
    if (std::filesystem::is_regular_file(std::filesystem::symlink_status(path))) {
      total += std::filesystem::file_size(path);
    }
  }
  return total;
}

} // namespace fib::result_cache_testing
