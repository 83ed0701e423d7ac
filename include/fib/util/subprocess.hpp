#pragma once
// Starting other programs and ending them. POSIX only.
//
// The primitives: spawn_process (fork + exec with everything prepared before the fork, an exec
// failure reported back through a close-on-exec pipe), wait_for_exit (with a deadline),
// end_process_group and kill_process. `fib dump` runs the traced command through
// run_child_process, built on them; the reference worker client (exec/worker_client) spawns
// fib-worker with a socket as its standard input and ends it with kill_process.

#include <fib/base/diagnostic.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace fib {

// --- Interface ---

enum class ChildInput { inherited, null_device };

// ProcessGroup::own: the child leads a new process group, so that signals sent to the group reach
// everything it starts. inherited: it stays in fib's group (a Ctrl-C at the terminal reaches it).
enum class ProcessGroup { own, inherited };

// search_path: argv[0] without a '/' is looked up in PATH (execvpe). exact_path: it is run as
// given.
enum class ProgramLookup { search_path, exact_path };

// killed: the child gets SIGKILL when the thread of fib that started it ends (PR_SET_PDEATHSIG;
// fib's process ending, for any reason, included). Start such children from a thread that lives
// as long as they should. outlives: no such link.
enum class ParentDeath { killed, outlives };

// closed: every descriptor of fib's above 2 is closed at exec, also those fib inherited without
// close-on-exec (a sandbox must receive nothing of the host). kept: those stay open.
enum class InheritedDescriptors { kept, closed };

struct SpawnOptions {
  std::vector<std::string> argv; // not empty
  // Set (or replaced) in the child's environment; the rest of fib's environment is inherited.
  std::vector<std::pair<std::string, std::string>> environment;
  // The child's standard input: a copy of this descriptor when set, else as `input` says.
  std::optional<int> input_descriptor;
  ChildInput input = ChildInput::null_device;
  ProcessGroup group = ProcessGroup::own;
  ProgramLookup lookup = ProgramLookup::search_path;
  // The child's standard output and standard error: copies of this descriptor when set, else
  // fib's own.
  std::optional<int> output_descriptor;
  // When set, the child writes "0" to this descriptor before exec: an open `cgroup.procs` file
  // moves it (and everything it later starts) into that cgroup. A failed write fails the spawn
  // (SpawnStep::exec with the write's errno).
  std::optional<int> cgroup_procs_descriptor;
  ParentDeath parent_death = ParentDeath::outlives;
  InheritedDescriptors inherited_descriptors = InheritedDescriptors::kept;
};

enum class SpawnStep { pipe, fork, exec };

struct SpawnFailure {
  SpawnStep step = SpawnStep::exec;
  int error = 0; // errno
};

struct Spawned {
  pid_t pid = -1; // > 0 once the program runs
  std::optional<SpawnFailure> failure;
};

// Starts argv[0] and returns once it has been exec'ed (or failed to be: a failed exec's child is
// reaped before this returns). Standard output and error are fib's unless `output_descriptor`.
// Never throws.
Spawned spawn_process(const SpawnOptions& options);

// "cannot create a pipe: …", "cannot fork: …", "cannot run PROGRAM: No such file or directory".
std::string describe_spawn_failure(const SpawnFailure& failure, std::string_view program);

using Deadline = std::chrono::steady_clock::time_point;

struct WaitResult {
  bool ended = false;        // false: the deadline came first and it still runs
  std::optional<int> status; // its wait status, when it was reaped here (not elsewhere)
};

// Waits for the child `pid` to end, until `deadline` when one is given (polling every 20 ms).
WaitResult wait_for_exit(pid_t pid, std::optional<Deadline> deadline);

// "exit status 3", "signal 11 (Segmentation fault)", for a wait status.
std::string describe_wait_status(int status);

// Whether some process of group `group` is still alive.
bool process_group_alive(pid_t group);

// SIGTERM to the process group, then SIGKILL after `grace` when some member is still there. A
// group leader that is fib's child is reaped meanwhile (its status is not kept).
void end_process_group(pid_t group, std::chrono::milliseconds grace);

// SIGKILL to the child `pid`, then reaps it.
void kill_process(pid_t pid);

// --- Running a program to its end ---

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

// Runs the child in its own process group to its end (or the timeout) and reports how it ended.
// While it runs, fib's SIGINT/SIGTERM/SIGHUP are forwarded to the child's group. Never throws.
ChildOutcome run_child_process(const ChildOptions& options);

// "exit status 3", "signal 6 (SIGABRT)", "killed at the 30 s timeout", …
std::string describe_outcome(const ChildOutcome& outcome);

// Passing a descriptor between processes over a Unix socket: one byte `tag` carrying `descriptor`
// (SCM_RIGHTS). send_descriptor says whether it went; receive_descriptor reads one byte (without
// blocking) and returns the descriptor it carried, close-on-exec, or -1 when the byte is not
// `tag` or carried no single descriptor.
bool send_descriptor(int socket, int descriptor, char tag);
int receive_descriptor(int socket, char tag);

} // namespace fib
