// fib-worker: runs references for fib (docs/execution.md). Started by fib with a socket as its
// standard input; speaks one JSON object per line on it (include/fib/exec/worker_client.hpp).
// Python's own output goes to standard error so that a reference's print() cannot corrupt the
// protocol. The only executable that loads libtorch.

#include <sandbox.hpp>

#include <fib/io/json_io.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <string_view>
#include <sys/resource.h>
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

} // namespace

int main(int argc, char** argv) {
  unsigned long long address_space = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--address-space" && i + 1 < argc) {
      address_space = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "fib-worker: unknown argument %s (it is started by fib)\n", argv[i]);
      return 2;
    }
  }
  // The protocol channel moves off fds 0/1: Python and references own stdin/stdout no more.
  const int channel = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
  if (channel < 0) {
    std::perror("fib-worker: no protocol channel");
    return 2;
  }
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDIN_FILENO);
    ::close(null_fd);
  }
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  if (address_space > 0) {
    rlimit limit{static_cast<rlim_t>(address_space), static_cast<rlim_t>(address_space)};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) {
      std::perror("fib-worker: setrlimit(RLIMIT_AS)");
    }
  }
  fib::worker::Sandbox sandbox;
  const char* python = std::getenv("FIB_PYTHON");
  if (auto error = sandbox.start(python != nullptr && *python ? python : FIB_PYTHON_EXECUTABLE)) {
    std::fprintf(stderr, "fib-worker: %s\n", error->c_str());
    return 3;
  }
  if (!write_all(channel, sandbox.hello().dump() + "\n")) {
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
      reply = sandbox.run(request->root);
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
