#include "fib/util/child_process.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <string_view>
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

std::vector<std::string> child_environment(const ChildOptions& options) {
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto name = text.substr(0, text.find('='));
    bool replaced = false;
    for (const auto& [key, value] : options.environment) {
      replaced = replaced || key == name;
    }
    if (!replaced) {
      out.emplace_back(text);
    }
  }
  for (const auto& [key, value] : options.environment) {
    out.push_back(key + "=" + value);
  }
  return out;
}

// Whether a process of `group` is still alive.
bool group_alive(pid_t group) {
  return ::kill(-group, 0) == 0;
}

// SIGTERM to the group, then SIGKILL after `grace` when some member is still there.
void terminate_group(pid_t group, std::chrono::milliseconds grace) {
  ::kill(-group, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (group_alive(group) && std::chrono::steady_clock::now() < deadline) {
    // Reap the leader if it is ours, so that a zombie does not count as alive.
    ::waitpid(group, nullptr, WNOHANG);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (group_alive(group)) {
    ::kill(-group, SIGKILL);
  }
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

ChildOutcome run_child_process(const ChildOptions& options) {
  ChildOutcome outcome;
  if (options.argv.empty()) {
    outcome.launch_error = make_diagnostic(codes::k_child_launch_failed, "no command to run");
    return outcome;
  }
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  const auto environment = child_environment(options);
  std::vector<char*> env_pointers;
  for (const auto& entry : environment) {
    env_pointers.push_back(const_cast<char*>(entry.c_str()));
  }
  env_pointers.push_back(nullptr);
  std::vector<char*> arg_pointers;
  for (const auto& arg : options.argv) {
    arg_pointers.push_back(const_cast<char*>(arg.c_str()));
  }
  arg_pointers.push_back(nullptr);
  // exec failures travel back through a close-on-exec pipe: EOF means exec succeeded.
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    outcome.launch_error =
        make_diagnostic(codes::k_child_launch_failed,
                        fmt::format("cannot create a pipe: {}", std::strerror(errno)));
    return outcome;
  }
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child < 0) {
    const int error = errno;
    ::close(status_pipe[0]);
    ::close(status_pipe[1]);
    outcome.launch_error = make_diagnostic(codes::k_child_launch_failed,
                                           fmt::format("cannot fork: {}", std::strerror(error)));
    return outcome;
  }
  if (child == 0) {
    ::close(status_pipe[0]);
    ::setpgid(0, 0);
    if (options.input == ChildInput::null_device) {
      const int null_fd = ::open("/dev/null", O_RDONLY);
      if (null_fd >= 0) {
        ::dup2(null_fd, STDIN_FILENO);
        ::close(null_fd);
      }
    }
    ::execvpe(arg_pointers[0], arg_pointers.data(), env_pointers.data());
    const int error = errno;
    [[maybe_unused]] const auto n = ::write(status_pipe[1], &error, sizeof error);
    ::_exit(127);
  }
  ::setpgid(child, child); // also in the parent: no race with the first signal
  ::close(status_pipe[1]);
  int exec_error = 0;
  ssize_t got = 0;
  do {
    got = ::read(status_pipe[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  ::close(status_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_error)) {
    ::waitpid(child, nullptr, 0);
    outcome.launch_error = make_diagnostic(
        codes::k_child_launch_failed,
        fmt::format("cannot run {}: {}", options.argv[0], std::strerror(exec_error)));
    return outcome;
  }
  outcome.started = true;
  outcome.timeout = options.timeout.value_or(std::chrono::milliseconds(0));

  const SignalForwarding forwarding(child);
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) {
      break;
    }
    if (done < 0 && errno != EINTR) {
      break;
    }
    if (options.timeout && std::chrono::steady_clock::now() - start >= *options.timeout &&
        !outcome.timed_out) {
      outcome.timed_out = true;
      terminate_group(child, options.grace);
      ::waitpid(child, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
  if (const int received = g_received_signal.load(); received != 0) {
    outcome.interrupted_by = received;
  }
  if (group_alive(child)) {
    outcome.left_processes = true;
    terminate_group(child, options.grace);
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

} // namespace fib
