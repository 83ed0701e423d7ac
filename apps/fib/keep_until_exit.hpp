#pragma once
// keep_until_exit: hands a large structure that a command has finished with to the end of the
// process instead of destroying it piece by piece.

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace fib::app {

// Keeps `value` until the process exits, never destroying it. Meant for a structure of tens of
// thousands of allocations (the report of a dataset of thousands of definitions) that a command
// is done with just before it returns to exit: freeing such a report one allocation at a time
// cost a warm run over 1,900 definitions about 6% of its wall time, and the system takes the
// process's memory back at once. Only for values that own nothing but memory: no file, lock or
// child process that needs its destructor to run. The kept values stay reachable from a static,
// so leak checkers do not count them. Main thread only (commands call it on their way out).
template <class T> void keep_until_exit(T&& value) {
  static auto* const kept = new std::vector<std::shared_ptr<const void>>();
  kept->push_back(std::make_shared<const std::decay_t<T>>(std::forward<T>(value)));
}

} // namespace fib::app
