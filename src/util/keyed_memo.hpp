#pragma once
// KeyedMemo: a value computed at most once per key, shared by threads.

#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace fib::detail {

// The values one run has computed, by key. get() returns the value kept for `key`, calling
// `compute()` (outside the lock, so that slow look-ups run in parallel) the first time; when two
// threads compute the same key at once, the first value kept is the one both return. Thread-safe.
template <class Value> class KeyedMemo {
public:
  template <class Compute> Value get(const std::string& key, Compute&& compute) {
    {
      const std::lock_guard lock(m_mutex);
      if (const auto it = m_values.find(key); it != m_values.end()) {
        return it->second;
      }
    }
    Value computed = std::forward<Compute>(compute)();
    const std::lock_guard lock(m_mutex);
    return m_values.emplace(key, std::move(computed)).first->second;
  }

private:
  std::mutex m_mutex;
  std::unordered_map<std::string, Value> m_values;
};

} // namespace fib::detail
