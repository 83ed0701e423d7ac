#include "worker_process.hpp"

#include "scratch_files.hpp"
#include "timed_calls.hpp"

#include <fib/base/codes.hpp>
#include <fib/base/expected.hpp>
#include <fib/util/subprocess.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <random>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fib::detail {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(std::chrono::milliseconds duration) {
  return static_cast<double>(duration.count()) / 1000.0;
}

// A job id nobody can guess from the previous one.
std::uint64_t fresh_job_id() {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  return (generator() >> 1) | 1; // positive as a JSON integer, never 0
}

void write_to_stderr(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n <= 0) {
      if (n < 0 && errno == EINTR) {
        continue;
      }
      return;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

// The interpreter prefix of $FIB_PYTHON (what the worker embeds when set), to bind it.
std::vector<std::filesystem::path> interpreter_prefixes() {
  std::vector<std::filesystem::path> out;
  const char* python = std::getenv("FIB_PYTHON");
  if (python == nullptr || *python == '\0') {
    return out;
  }
  std::error_code ec;
  const std::filesystem::path given = std::filesystem::absolute(python, ec);
  out.push_back(given.parent_path().parent_path());
  const auto resolved = std::filesystem::canonical(given, ec);
  if (!ec) {
    out.push_back(resolved.parent_path().parent_path());
  }
  return out;
}

// What ran in the job, for its timeout message.
std::string what_ran(const Json& request) {
  const std::string kind = string_field(request, "job");
  if (kind == "solution_outputs" || kind == "solution_samples") {
    return "the solution";
  }
  if (kind == "build_solution") {
    return "the solution's build";
  }
  return "the reference";
}

std::string job_noun(const Json& request) {
  const std::string kind = string_field(request, "job");
  if (kind == "solution_outputs" || kind == "solution_samples") {
    return "the worker died while running the solution";
  }
  if (kind == "build_solution") {
    return "the worker died while building the solution";
  }
  return "the worker died while running the reference";
}

// A Unix socket listening at `path` (close-on-exec, backlog 1).
Expected<int> listen_on(const std::filesystem::path& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.string().size() >= sizeof address.sun_path) {
    return unexpected(
        make_diagnostic(codes::k_worker_unavailable,
                        "the scratch directory's path is too long for a socket: " + path.string()));
  }
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0 ||
      ::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener, 1) != 0) {
    const int error = errno;
    if (listener >= 0) {
      ::close(listener);
    }
    return unexpected(make_diagnostic(
        codes::k_worker_unavailable,
        fmt::format("cannot create the worker's channel: {}", std::strerror(error))));
  }
  return listener;
}

} // namespace

Json field(const Json& object, std::string_view key) {
  if (!object.is_object()) {
    return Json();
  }
  const auto it = object.find(key);
  return it == object.end() ? Json() : *it;
}

std::string string_field(const Json& object, std::string_view key) {
  const Json value = field(object, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

bool bool_field(const Json& object, std::string_view key) {
  const Json value = field(object, key);
  return value.is_boolean() && value.get<bool>();
}

std::string human_bytes(std::uintmax_t bytes) {
  if (bytes >= (std::uintmax_t{1} << 30)) {
    return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
  }
  if (bytes >= (std::uintmax_t{1} << 20)) {
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  }
  return fmt::format("{} bytes", bytes);
}

std::string clip_text(std::string text, std::size_t limit) {
  if (text.size() <= limit) {
    return text;
  }
  const std::size_t half = limit / 2;
  std::string head = text.substr(0, half);
  std::string tail = text.substr(text.size() - half);
  return fmt::format("{}\n[... {} bytes cut by fib ...]\n{}", head, text.size() - 2 * half, tail);
}

WorkerProcess::WorkerProcess(WorkerProcessOptions options) : m_options(std::move(options)) {}

WorkerProcess::~WorkerProcess() {
  stop();
}

const std::filesystem::path& WorkerProcess::scratch() const {
  static const std::filesystem::path none;
  return m_scratch_descriptor >= 0 ? m_scratch_view : none;
}

bool WorkerProcess::scratch_full() const {
  struct statvfs info {};
  if (m_scratch_descriptor < 0 || !m_sandboxed || ::fstatvfs(m_scratch_descriptor, &info) != 0) {
    return false;
  }
  // tmpfs counts in pages: less than 64 KiB left means a write was refused or nearly was.
  return static_cast<std::uint64_t>(info.f_bavail) * info.f_frsize < (std::uint64_t{64} << 10);
}

std::filesystem::path WorkerProcess::scratch_inside() const {
  if (!m_scratch) {
    return {};
  }
  return m_sandboxed ? std::filesystem::path("/tmp") : m_scratch->path();
}

std::optional<Diagnostic> WorkerProcess::ensure_started() {
  if (m_pid > 0) {
    return std::nullopt;
  }
  if (m_failed_start) {
    return m_failed_start;
  }
  if (auto problem = spawn()) {
    kill_tree(); // the scratch directory and the cgroup a failed start made go with it
    m_failed_start = problem;
    return problem;
  }
  std::string hello;
  const ReadEnd end = read_line(Clock::now() + options().startup_timeout, hello);
  if (end != ReadEnd::line) {
    const std::string how =
        end == ReadEnd::timed_out
            ? fmt::format("did not greet within {:g} s", seconds(options().startup_timeout))
            : fmt::format("ended before its greeting ({})", end_after_close());
    kill_tree();
    Diagnostic d = make_diagnostic(codes::k_worker_unavailable, fmt::format("{} {}", role(), how));
    d.hint = "its error output is above; it needs the Python that has torch";
    m_failed_start = d;
    return d;
  }
  DiagnosticList sink;
  auto document = parse_json(hello, "<worker>", sink, 1, LineIndex::skipped);
  if (!document || field(document->root, "fib_worker") != Json(1)) {
    kill_tree();
    Diagnostic d =
        make_diagnostic(codes::k_worker_protocol, role() + " greeted with " + text_excerpt(hello));
    m_failed_start = d;
    return d;
  }
  m_info = worker_info_of(document->root);
  return std::nullopt;
}

std::optional<Diagnostic> WorkerProcess::spawn() {
  const ReferenceRunnerOptions& o = options();
  auto worker = worker_executable(o.worker);
  if (!worker) {
    return worker.error();
  }
  const SandboxSupport& support = sandbox_support();
  m_sandboxed = o.sandbox == SandboxMode::enforced;
  if (m_sandboxed && !support.usable()) {
    Diagnostic d = make_diagnostic(
        codes::k_sandbox_unavailable,
        fmt::format("untrusted code not run: this machine cannot give it fib's sandbox: {}",
                    fmt::join(support.missing, "; ")));
    d.hint = "install bubblewrap and allow user namespaces, or pass --unsafe-no-sandbox to run "
             "references and solutions with your full rights";
    return d;
  }
  auto scratch = ScratchDirectory::create();
  if (!scratch) {
    return scratch.error();
  }
  m_scratch = std::move(*scratch);
  std::error_code ec;
  const std::filesystem::path executable = std::filesystem::absolute(*worker, ec);
  std::vector<std::string> program{executable.string(),
                                   "--address-space",
                                   std::to_string(o.address_space),
                                   "--max-processes",
                                   std::to_string(o.max_processes),
                                   "--max-file-size",
                                   std::to_string(o.max_file_bytes),
                                   "--max-open-files",
                                   std::to_string(o.max_open_files),
                                   "--device",
                                   std::string(to_string(o.device)),
                                   "--scratch",
                                   scratch_inside().string()};
  SpawnOptions spawn;
  if (support.process_limit == ProcessLimitKind::cgroup) {
    auto cgroup = ProcessCgroup::create(support, o.max_processes);
    if (!cgroup) {
      return cgroup.error();
    }
    m_cgroup = std::move(*cgroup);
    spawn.cgroup_procs_descriptor = m_cgroup->procs_descriptor();
  }
  // The channel is a socket fib listens on in the scratch directory; the worker connects first
  // thing, so no other process (bwrap itself included) holds the worker's end.
  const std::filesystem::path socket_path = m_scratch->path() / "channel.sock";
  auto listening = listen_on(socket_path);
  if (!listening) {
    return listening.error();
  }
  const int listener = *listening;
  program.insert(program.end(), {"--connect", m_sandboxed ? std::string("/run/fib/channel.sock")
                                                          : socket_path.string()});
  spawn.argv = command_line(support, executable, program);
  spawn.environment = device_environment();
  int output[2];
  if (::pipe2(output, O_CLOEXEC) != 0) {
    ::close(listener);
    return make_diagnostic(codes::k_worker_unavailable,
                           fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  spawn.output_descriptor = output[1];
  spawn.group = ProcessGroup::own;
  spawn.lookup = ProgramLookup::exact_path;
  spawn.parent_death = ParentDeath::killed;
  spawn.inherited_descriptors = InheritedDescriptors::closed;
  const Spawned child = spawn_process(spawn);
  ::close(output[1]);
  if (child.failure) {
    ::close(listener);
    ::close(output[0]);
    return make_diagnostic(codes::k_worker_unavailable,
                           fmt::format("cannot start the reference worker: {}",
                                       describe_spawn_failure(*child.failure, spawn.argv[0])));
  }
  m_pid = child.pid;
  m_output = output[0];
  m_socket = accept_channel(listener);
  ::close(listener);
  std::error_code ec_unlink;
  std::filesystem::remove(socket_path, ec_unlink);
  if (m_socket >= 0) {
    ::fcntl(m_socket, F_SETFL, ::fcntl(m_socket, F_GETFL) | O_NONBLOCK);
    if (!adopt_scratch()) {
      return make_diagnostic(codes::k_worker_unavailable,
                             role() + " did not hand over its scratch directory");
    }
  }
  m_output_passed = 0;
  m_buffer.clear();
  ++m_starts;
  return std::nullopt;
}

// The worker's command line: `program` itself, or bwrap running it in the sandbox.
std::vector<std::string>
WorkerProcess::command_line(const SandboxSupport& support, const std::filesystem::path& executable,
                            const std::vector<std::string>& program) const {
  if (!m_sandboxed) {
    return program;
  }
  SandboxLayout layout;
  layout.channel_directory = m_scratch->path();
  layout.scratch_bytes = options().scratch_bytes;
  layout.read_only = m_options.read_only;
  layout.writable = m_options.writable;
  layout.programs = interpreter_prefixes();
  layout.programs.push_back(executable);
  layout.device = options().device == SmokeDevice::cuda ? DeviceAccess::gpu : DeviceAccess::none;
  return sandbox_command(support.bwrap, layout, device_environment(), program);
}

// CUDA_VISIBLE_DEVICES for a worker pinned to one GPU (`--devices`): the index-th entry of fib's
// own list when it has one (so that `cuda:0` is the first GPU fib was given), else the index.
std::vector<std::pair<std::string, std::string>> WorkerProcess::device_environment() const {
  if (!options().cuda_device) {
    return {};
  }
  const int index = *options().cuda_device;
  std::string visible = std::to_string(index);
  if (const char* own = std::getenv("CUDA_VISIBLE_DEVICES"); own != nullptr && *own != '\0') {
    std::vector<std::string> entries;
    std::string_view rest(own);
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      entries.emplace_back(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    if (index >= 0 && static_cast<std::size_t>(index) < entries.size()) {
      visible = entries[static_cast<std::size_t>(index)];
    }
  }
  return {{"CUDA_VISIBLE_DEVICES", visible}};
}

// Takes the descriptor of the worker's scratch directory (receive_scratch_descriptor), which it
// sends right after it connects, before Python starts; false when none comes within the start-up
// timeout.
bool WorkerProcess::adopt_scratch() {
  if (!poll_with_output(POLLIN, Clock::now() + options().startup_timeout)) {
    return false;
  }
  m_scratch_descriptor = receive_scratch_descriptor(m_socket, m_sandboxed ? ScratchKind::tmpfs
                                                                          : ScratchKind::directory);
  if (m_scratch_descriptor < 0) {
    return false;
  }
  m_scratch_view = fmt::format("/proc/self/fd/{}", m_scratch_descriptor);
  return true;
}

// The worker's connection, within the start-up timeout (-1 when it ended or did not connect:
// the greeting then fails as "ended" or "did not greet").
int WorkerProcess::accept_channel(int listener) {
  const auto deadline = Clock::now() + options().startup_timeout;
  while (Clock::now() < deadline) {
    pollfd fds[2]{{listener, POLLIN, 0}, {m_output, POLLIN, 0}};
    const int ready = ::poll(fds, m_output >= 0 ? 2 : 1, 200);
    if (ready > 0 && m_output >= 0 && (fds[1].revents & (POLLIN | POLLHUP)) != 0) {
      drain_output();
    }
    if (ready > 0 && (fds[0].revents & POLLIN) != 0) {
      return ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    }
    if (::waitpid(m_pid, nullptr, WNOHANG) == m_pid) {
      m_pid = -1;
      return -1;
    }
  }
  return -1;
}

// Sends all of `text` before `deadline`. The socket is non-blocking: a worker that stops reading
// cannot hold fib past the deadline (its output is drained meanwhile).
WorkerProcess::SendEnd WorkerProcess::send_all(const std::string& text,
                                               Clock::time_point deadline) {
  std::size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n =
        ::send(m_socket, text.data() + sent, text.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) {
      continue;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return SendEnd::closed;
    }
    const auto revents = poll_with_output(POLLOUT, deadline);
    if (!revents) {
      return SendEnd::timed_out;
    }
    if ((*revents & (POLLERR | POLLHUP)) != 0) {
      return SendEnd::closed;
    }
  }
  return SendEnd::sent;
}

// Waits up to a second, never past `deadline`, for `events` on the channel, passing the worker's
// output on meanwhile: the channel's revents (0 when nothing came yet; POLLNVAL when poll itself
// failed), or nullopt once the deadline has passed.
std::optional<short> WorkerProcess::poll_with_output(short events, Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) {
    return std::nullopt;
  }
  pollfd fds[2]{{m_socket, events, 0}, {m_output, POLLIN, 0}};
  const int ready = ::poll(fds, m_output >= 0 ? 2 : 1,
                           static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
  if (ready < 0) {
    return errno == EINTR ? 0 : POLLNVAL;
  }
  if (ready > 0 && m_output >= 0 && (fds[1].revents & (POLLIN | POLLHUP)) != 0) {
    drain_output();
  }
  return ready > 0 ? fds[0].revents : 0;
}

// What the worker wrote to its standard output and error, passed on up to the cap.
void WorkerProcess::drain_output() {
  char chunk[65536];
  const ssize_t n = ::read(m_output, chunk, sizeof chunk);
  if (n <= 0) {
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      ::close(m_output);
      m_output = -1;
    }
    return;
  }
  const std::size_t cap = options().output_cap;
  const std::size_t size = static_cast<std::size_t>(n);
  if (m_output_passed < cap) {
    write_to_stderr(std::string_view(chunk, std::min(size, cap - m_output_passed)));
  }
  if (m_output_passed + size > cap && m_output_passed <= cap) {
    write_to_stderr(fmt::format("\n[fib] the worker's output passed {}; the rest is dropped\n",
                                human_bytes(cap)));
  }
  m_output_passed += size;
}

WorkerProcess::ReadEnd WorkerProcess::read_line(Clock::time_point deadline, std::string& line) {
  if (m_socket < 0) {
    return ReadEnd::closed; // the worker never connected
  }
  while (true) {
    if (const auto newline = m_buffer.find('\n'); newline != std::string::npos) {
      line = m_buffer.substr(0, newline);
      m_buffer.erase(0, newline + 1);
      return ReadEnd::line;
    }
    if (m_buffer.size() > k_max_reply_bytes) {
      return ReadEnd::oversized;
    }
    const auto revents = poll_with_output(POLLIN, deadline);
    if (!revents) {
      return ReadEnd::timed_out;
    }
    if ((*revents & POLLNVAL) != 0) {
      return ReadEnd::closed;
    }
    if ((*revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
      continue;
    }
    char chunk[65536];
    const ssize_t n = ::recv(m_socket, chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
      continue;
    }
    if (n <= 0) {
      return ReadEnd::closed;
    }
    m_buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

void WorkerProcess::kill_tree() {
  if (m_scratch_descriptor >= 0) {
    ::close(m_scratch_descriptor);
    m_scratch_descriptor = -1;
  }
  if (m_socket >= 0) {
    ::close(m_socket);
    m_socket = -1;
  }
  if (m_pid > 0) {
    ::kill(-m_pid, SIGKILL); // its process group (bwrap: the sandbox's PID namespace dies with it)
    if (m_cgroup) {
      m_cgroup->kill_all(); // what left the group (setsid) without a sandbox
    }
    kill_process(m_pid);
    m_pid = -1;
  }
  if (m_output >= 0) {
    ::close(m_output);
    m_output = -1;
  }
  m_cgroup.reset();
  m_scratch.reset();
  m_buffer.clear();
}

// After the worker closed the channel: its end as a wait status, when it comes within the grace;
// the tree is killed either way.
std::string WorkerProcess::end_after_close() {
  std::string how = "it closed the channel and was stopped";
  if (m_pid > 0) {
    if (const WaitResult waited = wait_for_exit(m_pid, Clock::now() + k_exit_grace);
        waited.status) {
      int status = *waited.status;
      // bwrap passes the worker's end on as an exit status of 128 + signal.
      if (m_sandboxed && WIFEXITED(status) && WEXITSTATUS(status) > 128) {
        how = describe_wait_status(WEXITSTATUS(status) - 128);
      } else {
        how = describe_wait_status(status);
      }
      m_pid = -1;
    }
  }
  kill_tree();
  return how;
}

void WorkerProcess::stop() {
  if (m_socket >= 0) {
    ::shutdown(m_socket, SHUT_WR); // EOF: the worker exits on its own
  }
  if (m_pid > 0 && wait_for_exit(m_pid, Clock::now() + std::chrono::milliseconds(500)).ended) {
    m_pid = -1;
  }
  kill_tree();
}

ReferenceOutcome WorkerProcess::failure(std::string_view code, std::string message,
                                        std::string hint) {
  ReferenceOutcome outcome;
  outcome.verdict =
      code == codes::k_worker_protocol ? ReferenceVerdict::unavailable : ReferenceVerdict::failed;
  Diagnostic d = make_diagnostic(code, std::move(message));
  d.hint = std::move(hint);
  outcome.diagnostics.push_back(std::move(d));
  return outcome;
}

ReferenceOutcome WorkerProcess::crashed(const Json& request) {
  const std::string how = end_after_close();
  return failure(
      codes::k_worker_crashed,
      fmt::format("{} ({}); it will be restarted for the next job", job_noun(request), how),
      fmt::format("a crash in native code, or the worker's memory limit ({}) was hit",
                  human_bytes(options().address_space)));
}

// Sends fib's answer to a timing message; the failure (the worker killed) when it cannot.
std::optional<ReferenceOutcome> WorkerProcess::send_timing_answer(const Json& answer,
                                                                  Clock::time_point deadline) {
  switch (send_all(answer.dump() + "\n", deadline)) {
  case SendEnd::sent:
    return std::nullopt;
  case SendEnd::timed_out:
    kill_tree();
    return failure(codes::k_smoke_timeout,
                   role() + " stopped reading during its timed calls until the timeout; it was "
                            "stopped");
  case SendEnd::closed:
    break;
  }
  kill_tree();
  return failure(codes::k_worker_protocol, role() + " closed the channel during its timed calls");
}

ReferenceOutcome WorkerProcess::read_outcome(const Json& root) {
  ReferenceOutcome outcome;
  const std::string verdict = string_field(root, "outcome");
  outcome.verdict = verdict == "ok"        ? ReferenceVerdict::ok
                    : verdict == "skipped" ? ReferenceVerdict::skipped
                    : verdict == "failed"  ? ReferenceVerdict::failed
                                           : ReferenceVerdict::unavailable;
  if (outcome.verdict == ReferenceVerdict::unavailable) {
    kill_tree();
    return failure(codes::k_worker_protocol,
                   role() + " sent an unknown outcome '" + text_excerpt(verdict) + "'");
  }
  const Json diagnostics =
      root.contains("diagnostics") ? field(root, "diagnostics") : Json::array();
  if (!diagnostics.is_array()) {
    kill_tree();
    return failure(codes::k_worker_protocol, role() + " sent diagnostics that are not a list");
  }
  for (const auto& item : diagnostics) {
    const std::string code = string_field(item, "code");
    if (find_code(code) == nullptr) {
      kill_tree();
      return failure(codes::k_worker_protocol,
                     role() + " sent an unknown diagnostic code '" + text_excerpt(code) + "'");
    }
    Diagnostic d =
        make_diagnostic(code, clip_text(string_field(item, "message"), k_max_worker_message_bytes));
    d.pointer = clip_text(string_field(item, "pointer"), 1024);
    d.hint = clip_text(string_field(item, "hint"), k_max_worker_message_bytes);
    outcome.diagnostics.push_back(std::move(d));
  }
  return outcome;
}

JobResult WorkerProcess::run_job(Json request, std::chrono::milliseconds timeout) {
  JobResult result;
  if (auto problem = ensure_started()) {
    result.outcome.verdict = ReferenceVerdict::unavailable;
    result.outcome.diagnostics.push_back(std::move(*problem));
    return result;
  }
  const std::uint64_t id = fresh_job_id();
  request["id"] = id;
  request["device"] = std::string(to_string(options().device));
  if (!request.contains("seed")) {
    request["seed"] = options().seed; // a job may ask for its own (the perturbed inputs' run)
  }
  const auto deadline = Clock::now() + timeout;
  TimingRound round = timing_round(request, deadline);
  switch (send_all(request.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n", deadline)) {
  case SendEnd::sent:
    break;
  case SendEnd::timed_out:
    kill_tree();
    result.outcome = failure(codes::k_smoke_timeout,
                             fmt::format("{} did not take the job within the {:g} s timeout; it "
                                         "was stopped",
                                         role(), seconds(timeout)));
    return result;
  case SendEnd::closed:
    result.outcome = crashed(request);
    return result;
  }
  CallState call;
  while (true) {
    std::string line;
    switch (read_line(deadline, line)) {
    case ReadEnd::line:
      break;
    case ReadEnd::timed_out:
      kill_tree();
      result.outcome =
          failure(codes::k_smoke_timeout,
                  fmt::format("{} ran past the {:g} s timeout; the worker was stopped and will be "
                              "restarted",
                              what_ran(request), seconds(timeout)),
                  "an endless loop, or inputs too big for --timeout (raise it)");
      return result;
    case ReadEnd::closed:
      result.outcome = crashed(request);
      return result;
    case ReadEnd::oversized:
      kill_tree();
      result.outcome = failure(codes::k_worker_protocol,
                               fmt::format("{} sent a message over {} without a line end; it was "
                                           "stopped",
                                           role(), human_bytes(k_max_reply_bytes)));
      return result;
    }
    DiagnosticList sink;
    auto document = parse_json(line, "<worker>", sink, 1, LineIndex::skipped);
    const Json reply_id = document ? field(document->root, "id") : Json();
    const bool ours = reply_id.is_number_integer() && reply_id.get<std::int64_t>() > 0 &&
                      reply_id.get<std::uint64_t>() == id;
    if (!ours) {
      kill_tree();
      result.outcome = failure(codes::k_worker_protocol,
                               role() + " sent an unexpected reply: " + text_excerpt(line));
      return result;
    }
    Json root = std::move(document->root);
    if (root.contains("timing")) {
      if (auto problem = answer_timing(root, id, round, result.timing, call)) {
        result.outcome = std::move(*problem);
        return result;
      }
      continue;
    }
    result.outcome = read_outcome(root);
    result.reply = std::move(root);
    return result;
  }
}

} // namespace fib::detail
