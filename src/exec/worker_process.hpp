#pragma once
// One fib-worker process as ReferenceRunner uses it (internal to the exec layer): started on
// demand inside the sandbox (exec/sandbox.hpp), spoken to one job at a time over the line protocol
// of include/fib/exec/worker_client.hpp, and ended so that nothing it started outlives it.
//
// Every wait on it has a deadline. When it closes the channel, sends a reply over
// k_max_reply_bytes, or misses the deadline, it is killed first (its whole tree: the sandbox's PID
// namespace, its process group, its pids cgroup) and reaped after; a worker that ended on its own
// is given k_exit_grace to be reaped with its status. Its standard output and error come through
// a pipe and are passed on to fib's standard error up to `output_cap` bytes per process.

#include <fib/base/diagnostic.hpp>
#include <fib/exec/sandbox.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/io/json_io.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace fib::detail {

inline constexpr std::size_t k_max_reply_bytes = std::size_t{64} << 20;
inline constexpr std::chrono::milliseconds k_exit_grace{1000};
// The worker executable to start (`configured`, else find_worker_executable()), or why there is
// none (`worker.unavailable`).
Expected<std::filesystem::path> worker_executable(const std::filesystem::path& configured);

// The longest message of a worker's diagnostic fib keeps (head and tail around a marker).
inline constexpr std::size_t k_max_worker_message_bytes = std::size_t{64} << 10;
// The file the build job writes into a solution's cache entry, last, once the entry is built
// (src/worker/sandbox.py's BUILT_MARK): an entry without it is built again.
inline constexpr std::string_view k_built_mark = "built.json";

struct WorkerProcessOptions {
  ReferenceRunnerOptions runner;
  std::vector<std::filesystem::path> read_only; // bound read-only in the sandbox
  std::vector<std::filesystem::path> writable;  // bound read-write in the sandbox
  // Who it is in messages: "the reference worker", "the solution's worker".
  std::string role = "the reference worker";
};

// The timed calls of a job (docs/execution.md, "Trust model"), one entry per call: fib's
// interval between its "go" and the worker's "done", what the worker reported for the call
// alone, the preparation (from the worker's "prepare" to its "ready"), all in milliseconds; the
// seed fib sent for the call's fresh input values (none when the job varies no input), the key
// it sent with "go" and the commitment the worker sent with "done". The worker keeps every
// call's outputs (timed_<i>.safetensors). `stopped` when fib ended the calls early (the job's
// `stop_at_ci`, said with the last "keep"). `setup_ms`, for a solution with a setup(): per call,
// fib's interval from "go" to the worker's "setup" (its setup done, the device synchronized);
// the rest of the call is its kernel time.
struct TimedCalls {
  bool stopped = false;
  std::vector<double> setup_ms;
  std::vector<double> fib_ms;
  std::vector<double> reported_ms;
  std::vector<double> prep_ms;
  std::vector<std::optional<std::uint64_t>> seeds;
  std::vector<std::string> keys;
  std::vector<std::string> commits;
};

struct JobResult {
  ReferenceOutcome outcome;
  Json reply; // the reply object (null when there was none)
  TimedCalls timing;
};

// The worker's greeting (its first line, a JSON object) as WorkerInfo: unknown or malformed
// figures are 0 or left out.
WorkerInfo worker_info_of(const Json& greeting);

class WorkerProcess {
public:
  explicit WorkerProcess(WorkerProcessOptions options);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `request` (its "id" is set here: a fresh random number per job) and waits up to
  // `timeout` for the reply, answering the worker's timed calls on the way: each call's seed
  // when its preparation starts (those of the request's "timed_seeds", a field fib removes
  // before sending; else fresh secret ones when the request has "fresh_inputs" to vary; else
  // none), "go" with a fresh secret key, and after "done" that the call is kept. Starts the worker
  // first when none runs. Errors in the outcome: `smoke.timeout` (killed at the deadline),
  // `worker.crashed` (it died), `worker.protocol` (a malformed, oversized or unexpected message:
  // killed), `worker.unavailable` / `sandbox.unavailable` (it cannot be started).
  JobResult run_job(Json request, std::chrono::milliseconds timeout);

  // Starts the worker when none runs (run_job does this itself); why it cannot be started.
  std::optional<Diagnostic> start() { return ensure_started(); }

  // The scratch directory of the running worker as fib sees it, and as the worker sees it
  // (/tmp inside the sandbox); empty before a start.
  const std::filesystem::path& scratch() const;
  std::filesystem::path scratch_inside() const;
  // Whether the sandboxed worker's scratch (its /tmp, of ReferenceRunnerOptions::scratch_bytes)
  // is full: something it ran tried to write past the limit.
  bool scratch_full() const;

  const std::optional<WorkerInfo>& info() const { return m_info; }
  std::size_t starts() const { return m_starts; }
  const ReferenceRunnerOptions& options() const { return m_options.runner; }
  const std::string& role() const { return m_options.role; }

  // Ends the worker (EOF first, then the kill) and removes its scratch directory.
  void stop();

private:
  enum class ReadEnd { line, timed_out, closed, oversized };
  enum class SendEnd { sent, timed_out, closed };
  // The bounds of a job's timed calls: its deadline and how many it may make.
  struct TimingRound {
    std::chrono::steady_clock::time_point deadline;
    std::size_t max_calls = 0;
    std::vector<std::optional<std::uint64_t>> seeds; // one per call, said when it is prepared
    std::optional<double> stop_at_ci; // the job's adaptive stop (timed_calls.hpp, should_stop)
  };
  // Where the timed call in progress stands: none, prepared since `since`, or timed since it.
  enum class CallPhase { none, preparing, timing };
  struct CallState {
    CallPhase phase = CallPhase::none;
    std::chrono::steady_clock::time_point since;
    std::optional<std::chrono::steady_clock::time_point> setup_done; // its "setup", if any
  };
  std::optional<Diagnostic> ensure_started();
  std::optional<Diagnostic> spawn();
  int accept_channel(int listener);
  bool adopt_scratch();
  std::vector<std::string> command_line(const SandboxSupport& support,
                                        const std::filesystem::path& executable,
                                        const std::vector<std::string>& program) const;
  std::vector<std::pair<std::string, std::string>> device_environment() const;
  ReadEnd read_line(std::chrono::steady_clock::time_point deadline, std::string& line);
  void drain_output();
  std::optional<short> poll_with_output(short events,
                                        std::chrono::steady_clock::time_point deadline);
  std::optional<ReferenceOutcome>
  send_timing_answer(const Json& answer, std::chrono::steady_clock::time_point deadline);
  SendEnd send_all(const std::string& text, std::chrono::steady_clock::time_point deadline);
  std::string end_after_close();
  void kill_tree();
  ReferenceOutcome failure(std::string_view code, std::string message, std::string hint = "");
  ReferenceOutcome crashed(const Json& request);
  TimingRound timing_round(Json& request, std::chrono::steady_clock::time_point deadline);
  std::optional<ReferenceOutcome> answer_timing(const Json& message, std::uint64_t id,
                                                TimingRound& round, TimedCalls& timing,
                                                CallState& call);
  ReferenceOutcome read_outcome(const Json& root);

  WorkerProcessOptions m_options;
  pid_t m_pid = -1;
  int m_socket = -1;
  int m_output = -1;
  std::size_t m_output_passed = 0;
  std::string m_buffer;
  std::optional<ScratchDirectory> m_scratch; // fib's: the channel's socket, bound read-only
  int m_scratch_descriptor = -1;             // the worker's /tmp, which it handed over
  std::filesystem::path m_scratch_view;      // /proc/self/fd/N: that directory, by a path
  std::optional<ProcessCgroup> m_cgroup;
  bool m_sandboxed = false;
  std::size_t m_starts = 0;
  std::optional<WorkerInfo> m_info;
  std::optional<Diagnostic> m_failed_start;
};

// Fields of a message from a worker, which may be anything: the value of `key` when `object` is an
// object that has it, else null; its text when it is a string, else "". Never throw.
Json field(const Json& object, std::string_view key);
std::string string_field(const Json& object, std::string_view key);
bool bool_field(const Json& object, std::string_view key);

// "1.5 GiB", "3.0 MiB", "512 bytes".
std::string human_bytes(std::uintmax_t bytes);

// `text` cut to about `limit` bytes: its head and tail around a marker saying how much was cut.
std::string clip_text(std::string text, std::size_t limit);

} // namespace fib::detail
