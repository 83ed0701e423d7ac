#include "fib/util/subprocess.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <linux/close_range.h>
#include <string_view>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace fib {
namespace {

// The signal fib received while a child ran (0: none); set by the forwarding handler.
std::atomic<int> g_received_signal{0};
std::atomic<pid_t> g_child_group{0};

extern "C" void forward_signal(int signal) {
  g_received_signal.store(signal);
  const pid_t group = g_child_group.load();
  if (group > 0) {
    ::kill(-group, signal);
  }
}

// Installs the forwarding handlers for the lifetime of the object and restores the old ones.
class SignalForwarding {
public:
  explicit SignalForwarding(pid_t group) {
    g_received_signal.store(0);
    g_child_group.store(group);
    struct sigaction action {};
    action.sa_handler = forward_signal;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < k_signals.size(); ++i) {
      ::sigaction(k_signals[i], &action, &m_previous[i]);
    }
  }
  ~SignalForwarding() {
    for (std::size_t i = 0; i < k_signals.size(); ++i) {
      ::sigaction(k_signals[i], &m_previous[i], nullptr);
    }
    g_child_group.store(0);
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

private:
  static constexpr std::array<int, 3> k_signals{SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> m_previous{};
};

// fib's environment with `extra` set (replacing variables of the same name).
std::vector<std::string>
child_environment(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto name = text.substr(0, text.find('='));
    bool replaced = false;
    for (const auto& [key, value] : extra) {
      replaced = replaced || key == name;
    }
    if (!replaced) {
      out.emplace_back(text);
    }
  }
  for (const auto& [key, value] : extra) {
    out.push_back(key + "=" + value);
  }
  return out;
}

std::vector<char*> pointers_to(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& text : strings) {
    out.push_back(const_cast<char*>(text.c_str()));
  }
  out.push_back(nullptr);
  return out;
}

// In the forked child: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(const SpawnOptions& options, char* const* argv, char* const* envp,
                             int status_pipe, pid_t parent) {
  if (options.group == ProcessGroup::own) {
    ::setpgid(0, 0);
  }
  if (options.input_descriptor) {
    ::dup2(*options.input_descriptor, STDIN_FILENO);
  } else if (options.input == ChildInput::null_device) {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      ::close(null_fd);
    }
  }
  if (options.output_descriptor) {
    ::dup2(*options.output_descriptor, STDOUT_FILENO);
    ::dup2(*options.output_descriptor, STDERR_FILENO);
  }
  if (options.parent_death == ParentDeath::killed) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(127); // fib already ended between the fork and the prctl
    }
  }
  if (options.cgroup_procs_descriptor) {
    if (::write(*options.cgroup_procs_descriptor, "0", 1) != 1) {
      const int error = errno;
      [[maybe_unused]] const auto n = ::write(status_pipe, &error, sizeof error);
      ::_exit(127);
    }
  }
  if (options.inherited_descriptors == InheritedDescriptors::closed) {
    // Close-on-exec for all above 2 (the status pipe has it already, and must stay open until the
    // exec); a kernel without close_range gets the flag descriptor by descriptor.
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
      for (int fd = 3; fd < 65536; ++fd) {
        const int flags = ::fcntl(fd, F_GETFD);
        if (flags >= 0) {
          ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
        }
      }
    }
  }
  if (options.lookup == ProgramLookup::search_path) {
    ::execvpe(argv[0], argv, envp);
  } else {
    ::execve(argv[0], argv, envp);
  }
  const int error = errno;
  [[maybe_unused]] const auto n = ::write(status_pipe, &error, sizeof error);
  ::_exit(127);
}

std::string_view signal_name(int signal) {
  switch (signal) {
  case SIGABRT:
    return "SIGABRT";
  case SIGSEGV:
    return "SIGSEGV";
  case SIGKILL:
    return "SIGKILL";
  case SIGTERM:
    return "SIGTERM";
  case SIGINT:
    return "SIGINT";
  case SIGHUP:
    return "SIGHUP";
  case SIGBUS:
    return "SIGBUS";
  case SIGFPE:
    return "SIGFPE";
  case SIGILL:
    return "SIGILL";
  default:
    return "";
  }
}

} // namespace

Spawned spawn_process(const SpawnOptions& options) {
  Spawned out;
  if (options.argv.empty()) {
    out.failure = SpawnFailure{SpawnStep::exec, EINVAL};
    return out;
  }
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  const auto environment = child_environment(options.environment);
  const auto env_pointers = pointers_to(environment);
  const auto arg_pointers = pointers_to(options.argv);
  // exec failures travel back through a close-on-exec pipe: EOF means exec succeeded.
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    out.failure = SpawnFailure{SpawnStep::pipe, errno};
    return out;
  }
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    out.failure = SpawnFailure{SpawnStep::fork, errno};
    ::close(status_pipe[0]);
    ::close(status_pipe[1]);
    return out;
  }
  if (child == 0) {
    ::close(status_pipe[0]);
    exec_child(options, arg_pointers.data(), env_pointers.data(), status_pipe[1], parent);
  }
  if (options.group == ProcessGroup::own) {
    ::setpgid(child, child); // also in the parent: no race with the first signal
  }
  ::close(status_pipe[1]);
  int exec_error = 0;
  ssize_t got = 0;
  do {
    got = ::read(status_pipe[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  ::close(status_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_error)) {
    ::waitpid(child, nullptr, 0);
    out.failure = SpawnFailure{SpawnStep::exec, exec_error};
    return out;
  }
  out.pid = child;
  return out;
}

std::string describe_spawn_failure(const SpawnFailure& failure, std::string_view program) {
  switch (failure.step) {
  case SpawnStep::pipe:
    return fmt::format("cannot create a pipe: {}", std::strerror(failure.error));
  case SpawnStep::fork:
    return fmt::format("cannot fork: {}", std::strerror(failure.error));
  case SpawnStep::exec:
    break;
  }
  return fmt::format("cannot run {}: {}", program, std::strerror(failure.error));
}

WaitResult wait_for_exit(pid_t pid, std::optional<Deadline> deadline) {
  WaitResult result;
  while (true) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, deadline ? WNOHANG : 0);
    if (done == pid) {
      result.ended = true;
      result.status = status;
      return result;
    }
    if (done < 0 && errno != EINTR) {
      result.ended = true; // not (or no longer) fib's child: reaped elsewhere
      return result;
    }
    if (deadline && std::chrono::steady_clock::now() >= *deadline) {
      return result;
    }
    if (deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    const char* name = ::strsignal(signal);
    return fmt::format("signal {} ({})", signal, name != nullptr ? name : "?");
  }
  if (WIFEXITED(status)) {
    return fmt::format("exit status {}", WEXITSTATUS(status));
  }
  return "an unknown end";
}

bool process_group_alive(pid_t group) {
  return ::kill(-group, 0) == 0;
}

void end_process_group(pid_t group, std::chrono::milliseconds grace) {
  ::kill(-group, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (process_group_alive(group) && std::chrono::steady_clock::now() < deadline) {
    // Reap the leader if it is ours, so that a zombie does not count as alive.
    ::waitpid(group, nullptr, WNOHANG);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (process_group_alive(group)) {
    ::kill(-group, SIGKILL);
  }
}

void kill_process(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

ChildOutcome run_child_process(const ChildOptions& options) {
  ChildOutcome outcome;
  if (options.argv.empty()) {
    outcome.launch_error = make_diagnostic(codes::k_child_launch_failed, "no command to run");
    return outcome;
  }
  const auto start = std::chrono::steady_clock::now();
  SpawnOptions spawn;
  spawn.argv = options.argv;
  spawn.environment = options.environment;
  spawn.input = options.input;
  const Spawned child = spawn_process(spawn);
  if (child.failure) {
    outcome.launch_error = make_diagnostic(codes::k_child_launch_failed,
                                           describe_spawn_failure(*child.failure, spawn.argv[0]));
    return outcome;
  }
  outcome.started = true;
  outcome.timeout = options.timeout.value_or(std::chrono::milliseconds(0));

  const SignalForwarding forwarding(child.pid);
  std::optional<Deadline> deadline;
  if (options.timeout) {
    deadline = start + *options.timeout;
  }
  WaitResult waited = wait_for_exit(child.pid, deadline);
  if (!waited.ended) {
    outcome.timed_out = true;
    end_process_group(child.pid, options.grace);
    waited = wait_for_exit(child.pid, std::nullopt);
  }
  outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (waited.status && WIFEXITED(*waited.status)) {
    outcome.exit_code = WEXITSTATUS(*waited.status);
  } else if (waited.status && WIFSIGNALED(*waited.status)) {
    outcome.signal = WTERMSIG(*waited.status);
  }
  if (const int received = g_received_signal.load(); received != 0) {
    outcome.interrupted_by = received;
  }
  if (process_group_alive(child.pid)) {
    outcome.left_processes = true;
    end_process_group(child.pid, options.grace);
  }
  return outcome;
}

std::string describe_outcome(const ChildOutcome& outcome) {
  std::string text;
  if (!outcome.started) {
    return "not started";
  }
  if (outcome.timed_out) {
    text = fmt::format("killed at the {:g} s timeout",
                       static_cast<double>(outcome.timeout.count()) / 1000.0);
  } else if (outcome.exit_code) {
    text = fmt::format("exit status {}", *outcome.exit_code);
  } else if (outcome.signal) {
    const auto name = signal_name(*outcome.signal);
    text = name.empty() ? fmt::format("signal {}", *outcome.signal)
                        : fmt::format("signal {} ({})", *outcome.signal, name);
  } else {
    text = "ended in an unknown way";
  }
  if (outcome.interrupted_by) {
    text +=
        fmt::format(" (fib received {} and passed it on)", signal_name(*outcome.interrupted_by));
  }
  return text;
}

namespace {

// A message of one byte with room for one descriptor: `control` is the caller's buffer.
msghdr one_byte_message(iovec& data, char (&control)[CMSG_SPACE(sizeof(int))]) {
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  return message;
}

} // namespace

bool send_descriptor(int socket, int descriptor, char tag) {
  iovec data{&tag, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message = one_byte_message(data, control);
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(header), &descriptor, sizeof(int));
  return ::sendmsg(socket, &message, MSG_NOSIGNAL) == 1;
}

int receive_descriptor(int socket, char tag) {
  char byte = 0;
  iovec data{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message = one_byte_message(data, control);
  if (::recvmsg(socket, &message, MSG_CMSG_CLOEXEC | MSG_DONTWAIT) != 1) {
    return -1;
  }
  const cmsghdr* header = CMSG_FIRSTHDR(&message);
  if (header == nullptr || header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS ||
      header->cmsg_len != CMSG_LEN(sizeof(int))) {
    return -1;
  }
  int descriptor = -1;
  std::memcpy(&descriptor, CMSG_DATA(header), sizeof(int));
  if (byte != tag) {
    ::close(descriptor);
    return -1;
  }
  return descriptor;
}

} // namespace fib
