#pragma once
// parallel_for: runs task(i) for every i in [0, count) on all cores.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace fib::detail {

// The number of cores (std::thread::hardware_concurrency, at least 1), asked once per process:
// glibc answers it by reading /sys each time.
inline std::size_t core_count() {
  static const std::size_t cores = std::max<std::size_t>(1, std::thread::hardware_concurrency());
  return cores;
}

// Runs `task(i)` for i in [0, count) on up to `max_workers` threads (0: one per core), handing out
// indices in increasing order. If a task throws, the first exception is kept, the workers take no
// new items, all threads are joined and the exception is rethrown on the calling thread; the same
// holds when starting a thread fails. With one worker the tasks run on the calling thread.
template <class Task>
void parallel_for(std::size_t count, Task&& task, std::size_t max_workers = 0) {
  const std::size_t workers = std::min<std::size_t>(max_workers == 0 ? core_count() : max_workers,
                                                    std::max<std::size_t>(1, count));
  if (workers <= 1) {
    for (std::size_t i = 0; i < count; ++i) {
      task(i);
    }
    return;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const auto work = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= count) {
        return;
      }
      try {
        task(i);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) {
          failure = std::current_exception();
        }
        stop.store(true, std::memory_order_relaxed);
      }
    }
  };
  std::vector<std::thread> threads;
  try {
    threads.reserve(workers);
    for (std::size_t w = 0; w < workers; ++w) {
      threads.emplace_back(work);
    }
  } catch (...) {
    stop.store(true, std::memory_order_relaxed);
    for (std::thread& t : threads) {
      t.join();
    }
    throw;
  }
  for (std::thread& t : threads) {
    t.join();
  }
  if (failure) {
    std::rethrow_exception(failure);
  }
}

} // namespace fib::detail
