#pragma once
// keep_until_exit: hands a large structure that a command has finished with to the end of the
// process instead of destroying it piece by piece.

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace fib::app {

namespace detail {

// What keep_until_exit keeps: reachable from a static, so leak checkers do not count it.
inline std::vector<std::shared_ptr<void>>& kept_until_exit() {
  static auto* const kept = new std::vector<std::shared_ptr<void>>();
  return *kept;
}

} // namespace detail

// Keeps `value` until the process exits, never destroying it. Meant for a structure of tens of
// thousands of allocations (the report of a dataset of thousands of definitions) that a command
// is done with just before it returns to exit: freeing such a report one allocation at a time
// cost a warm run over 1,900 definitions about 6% of its wall time, and the system takes the
// process's memory back at once. Only for values whose destructor does nothing the system does
// not do at exit anyway: no file to flush, lock or child process that needs it to run. Main
// thread only (commands call it on their way out).
template <class T> void keep_until_exit(T&& value) {
  detail::kept_until_exit().push_back(std::make_shared<std::decay_t<T>>(std::forward<T>(value)));
}

// The same for what a shared pointer owns (the library hands such structures over, e.g.
// ValidateDatasetOptions::done_with).
inline void keep_until_exit(std::shared_ptr<void> owned) {
  detail::kept_until_exit().push_back(std::move(owned));
}

// The same for an object made here from `args` and used until the process exits (one that
// cannot be moved); returns it.
template <class T, class... Args>
T& keep_until_exit(std::in_place_type_t<T> /*type*/, Args&&... args) {
  auto made = std::make_shared<T>(std::forward<Args>(args)...);
  T& object = *made;
  detail::kept_until_exit().push_back(std::move(made));
  return object;
}

} // namespace fib::app
