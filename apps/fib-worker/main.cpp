// fib-worker: runs references for fib (docs/execution.md). Started by fib with a socket as its
// standard input; speaks one JSON object per line on it (include/fib/exec/worker_client.hpp).
// Python's own output goes to standard error so that a reference's print() cannot corrupt the
// protocol. The only executable that loads libtorch.

#include <sandbox.hpp>

#include <fib/base/build_features.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/io/json_io.hpp>
#include <fib/util/subprocess.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <string_view>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace {

bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Reads one line (without the newline) from `fd`; false at EOF.
bool read_line(int fd, std::string& buffer, std::string& line) {
  while (true) {
    if (const auto newline = buffer.find('\n'); newline != std::string::npos) {
      line = buffer.substr(0, newline);
      buffer.erase(0, newline + 1);
      return true;
    }
    char chunk[65536];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

// A connection to the Unix socket at `path` (close-on-exec), or -1 with errno set.
int connect_channel(const char* path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof address.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::strncpy(address.sun_path, path, sizeof address.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

// Hands fib a descriptor of the scratch directory (the sandbox's own /tmp, which fib cannot reach
// by a path) with one byte on the channel, before any untrusted code runs: fib puts the inputs
// there and takes the outputs through it.
bool send_scratch_descriptor(int channel, const char* scratch) {
  const int directory = ::open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory < 0) {
    return false;
  }
  const bool sent = fib::send_descriptor(channel, directory, fib::k_scratch_descriptor_tag);
  ::close(directory);
  return sent;
}

// The limits fib asks for on the command line (0: not set).
struct Limits {
  unsigned long long address_space = 0; // RLIMIT_AS
  unsigned long long processes = 0;     // RLIMIT_NPROC
  unsigned long long file_size = 0;     // RLIMIT_FSIZE
  unsigned long long open_files = 0;    // RLIMIT_NOFILE
};

void set_limit(int resource, unsigned long long value, const char* name) {
  if (value == 0) {
    return;
  }
  rlimit current{};
  ::getrlimit(resource, &current);
  // Never above the hard limit fib was given: lowering is all an unprivileged process can do.
  const rlim_t wanted = current.rlim_max == RLIM_INFINITY
                            ? static_cast<rlim_t>(value)
                            : std::min(static_cast<rlim_t>(value), current.rlim_max);
  rlimit limit{wanted, wanted};
  if (::setrlimit(resource, &limit) != 0) {
    std::fprintf(stderr, "fib-worker: setrlimit(%s): %s\n", name, std::strerror(errno));
  }
}

// Bounds this process and everything it starts, before any untrusted code runs: the rlimits,
// no core dumps, no new privileges, and death with fib.
void confine(const Limits& limits) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if constexpr (!fib::k_built_with_address_sanitizer) {
    set_limit(RLIMIT_AS, limits.address_space, "RLIMIT_AS");
  }
  set_limit(RLIMIT_NPROC, limits.processes, "RLIMIT_NPROC");
  set_limit(RLIMIT_FSIZE, limits.file_size, "RLIMIT_FSIZE");
  set_limit(RLIMIT_NOFILE, limits.open_files, "RLIMIT_NOFILE");
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
}

} // namespace

int main(int argc, char** argv) {
  Limits limits;
  const char* scratch = nullptr;
  const char* connect_to = nullptr;
  auto device_name = fib::worker::Sandbox::DeviceName::omitted;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--address-space" && has_value) {
      limits.address_space = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--max-processes" && has_value) {
      limits.processes = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--max-file-size" && has_value) {
      limits.file_size = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--max-open-files" && has_value) {
      limits.open_files = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--connect" && has_value) {
      connect_to = argv[++i];
    } else if (arg == "--scratch" && has_value) {
      scratch = argv[++i];
    } else if (arg == "--device" && has_value) {
      device_name = std::string_view(argv[++i]) == "cuda"
                        ? fib::worker::Sandbox::DeviceName::included
                        : fib::worker::Sandbox::DeviceName::omitted;
    } else {
      std::fprintf(stderr, "fib-worker: unknown argument %s (it is started by fib)\n", argv[i]);
      return 2;
    }
  }
  // The protocol channel: the socket fib listens on (--connect), else standard input, moved off
  // fds 0/1: Python and references own stdin/stdout no more.
  const int channel = connect_to != nullptr ? connect_channel(connect_to)
                                            : ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
  if (channel < 0) {
    std::perror("fib-worker: no protocol channel");
    return 2;
  }
  if (connect_to != nullptr && scratch != nullptr && !send_scratch_descriptor(channel, scratch)) {
    std::perror("fib-worker: cannot hand fib its scratch directory");
    return 2;
  }
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDIN_FILENO);
    ::close(null_fd);
  }
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  if (scratch != nullptr) {
    // The scratch directory is the working directory and the temporary directory.
    if (::chdir(scratch) != 0) {
      std::fprintf(stderr, "fib-worker: cannot enter %s: %s\n", scratch, std::strerror(errno));
      return 2;
    }
    ::setenv("TMPDIR", scratch, 1);
  }
  confine(limits);
  fib::worker::Sandbox sandbox;
  const char* python = std::getenv("FIB_PYTHON");
  if (auto error = sandbox.start(python != nullptr && *python ? python : FIB_PYTHON_EXECUTABLE)) {
    std::fprintf(stderr, "fib-worker: %s\n", error->c_str());
    return 3;
  }
  if (!write_all(channel, sandbox.hello(device_name).dump() + "\n")) {
    return 3;
  }
  std::string buffer;
  std::string line;
  while (read_line(channel, buffer, line)) {
    fib::DiagnosticList sink;
    auto request = fib::parse_json(line, "<request>", sink, 1, fib::LineIndex::skipped);
    fib::Json reply;
    if (!request || !request->root.is_object()) {
      reply = fib::Json{{"id", 0}, {"outcome", "failed"}, {"diagnostics", fib::Json::array()}};
    } else {
      reply = sandbox.run(request->root, channel);
    }
    if (!write_all(channel,
                   reply.dump(-1, ' ', false, fib::Json::error_handler_t::replace) + "\n")) {
      std::_Exit(3);
    }
  }
  // EOF: fib is done. Finalizing Python and torch only costs time (about 0.2 s).
  std::fflush(stderr);
  std::_Exit(0);
}
