#pragma once
// Running another program as a child process: its own process group (so a timeout or an
// interrupt reaches everything it started), extra environment variables set before it starts,
// standard output and error streaming through, a wall-clock limit. POSIX only.

#include <fib/base/diagnostic.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fib {

// --- Interface ---

enum class ChildInput { inherited, null_device };

struct ChildOptions {
  std::vector<std::string> argv; // argv[0] is looked up in PATH when it has no '/'
  // Set (or replaced) in the child's environment; the rest of fib's environment is inherited.
  std::vector<std::pair<std::string, std::string>> environment;
  // Killed (SIGTERM to its process group, SIGKILL after `grace`) when it runs longer.
  std::optional<std::chrono::milliseconds> timeout;
  std::chrono::milliseconds grace{5000};
  // The child runs in its own process group, so it does not own the terminal: standard input
  // comes from /dev/null unless `inherited` (a background group reading the terminal would stop).
  ChildInput input = ChildInput::null_device;
};

struct ChildOutcome {
  bool started = false;
  std::optional<int> exit_code;         // when it exited
  std::optional<int> signal;            // when a signal ended it
  bool timed_out = false;               // fib killed it at the timeout
  std::chrono::milliseconds timeout{0}; // the limit it ran under (0: none)
  // Set when fib itself got SIGINT, SIGTERM or SIGHUP while waiting: the signal was passed on to
  // the child's process group.
  std::optional<int> interrupted_by;
  // Processes of its group still alive after it ended (they were sent SIGTERM, then SIGKILL).
  bool left_processes = false;
  std::chrono::milliseconds elapsed{0};
  std::optional<Diagnostic> launch_error; // `child.launch-failed`: fork or exec failed
};

// Runs the child to its end (or the timeout) and reports how it ended. While it runs, fib's
// SIGINT/SIGTERM/SIGHUP are forwarded to the child's group. Never throws.
ChildOutcome run_child_process(const ChildOptions& options);

// "exit status 3", "signal 6 (SIGABRT)", "killed at the 30 s timeout", …
std::string describe_outcome(const ChildOutcome& outcome);

} // namespace fib
