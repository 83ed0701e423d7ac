#pragma once
// run_in_forked_workers: a small pool of forked child processes that work through numbered items
// and send each item's result (bytes) back to the parent. Used where the work holds a lock that
// threads cannot share (the embedded Python's GIL): each child has its own copy of the process.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace fib::detail {

// --- Interface ---

// Called around each fork() (each may be empty).
struct ForkHooks {
  std::function<void()> before_fork;  // in the parent, just before fork()
  std::function<void()> parent_after; // in the parent, just after fork() (also when it failed)
  std::function<void()> child_after;  // first thing in the child
};

struct ForkedWorkOutcome {
  std::size_t workers_started = 0;
  // Items whose result never arrived, ascending: the item a child was working on when it died
  // (or sent something that is not a result), and the items never handed out because no child
  // could be started or every child died. The caller runs them itself.
  std::vector<std::size_t> unfinished;
};

// Runs work(i) for the items i in [0, count) in up to `workers` child processes made by fork(),
// handing the items out in increasing order, one at a time to whichever child is free (a child
// gets its next item as soon as its result has arrived, before on_result takes that result). Each
// result reaches on_result(i, bytes) in this process, on the calling thread, in completion order;
// on_result must not throw. A child that throws from work() exits, and its item is unfinished.
// Children end with _exit() after their last item: no destructors, no atexit handlers and no stdio
// flush run there (stdout and stderr are flushed before forking), so work() must hand everything
// it has to say back in its result. The calling process must have no other threads while this
// runs (fork() copies only the calling thread). Every child is reaped before this returns.
ForkedWorkOutcome
run_in_forked_workers(std::size_t count, std::size_t workers,
                      const std::function<std::string(std::size_t)>& work,
                      const std::function<void(std::size_t, std::string_view)>& on_result,
                      const ForkHooks& hooks = {});

} // namespace fib::detail
