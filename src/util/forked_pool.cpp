// run_in_forked_workers (see forked_pool.hpp). Each child is connected to the parent by one
// Unix stream socket pair: the parent writes an 8-byte item number (or the stop mark), the child
// answers with the item number, the result size (8 bytes each) and the result. Sockets rather than
// pipes so that both sides can write with MSG_NOSIGNAL: a peer that died gives EPIPE, never
// SIGPIPE.

#include "util/forked_pool.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

namespace fib::detail {
namespace {

constexpr std::uint64_t k_stop = std::numeric_limits<std::uint64_t>::max();
constexpr std::size_t k_header_bytes = 16;
// A result larger than this is taken for garbage (the child is killed, its item unfinished).
constexpr std::uint64_t k_max_result_bytes = std::uint64_t{1} << 32;

void put_u64(char* out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((value >> (8 * i)) & 0xffu);
  }
}

std::uint64_t get_u64(const char* in) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) {
    value |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  }
  return value;
}

// Moves all `size` bytes at `data` with `transfer_once(data, size)`, one ::send or ::recv that
// returns what that call returns; a call interrupted by a signal (EINTR) is made again. False
// when a call fails or moves nothing (end of stream, peer gone).
template <typename Byte, typename TransferOnce>
bool transfer_all(Byte* data, std::size_t size, TransferOnce transfer_once) {
  while (size > 0) {
    const ssize_t n = transfer_once(data, size);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Writes all of `data`; false when the peer is gone.
bool send_all(int fd, const char* data, std::size_t size) {
  return transfer_all(data, size, [fd](const char* at, std::size_t left) {
    return ::send(fd, at, left, MSG_NOSIGNAL);
  });
}

// Reads exactly `size` bytes; false on end of stream or error.
bool receive_all(int fd, char* data, std::size_t size) {
  return transfer_all(data, size,
                      [fd](char* at, std::size_t left) { return ::recv(fd, at, left, 0); });
}

[[noreturn]] void serve_items(int fd, const std::function<std::string(std::size_t)>& work) {
  char number[8];
  while (receive_all(fd, number, sizeof number)) {
    const std::uint64_t item = get_u64(number);
    if (item == k_stop) {
      break;
    }
    std::string result;
    try {
      result = work(static_cast<std::size_t>(item));
    } catch (...) {
      _exit(1);
    }
    char header[k_header_bytes];
    put_u64(header, item);
    put_u64(header + 8, result.size());
    if (!send_all(fd, header, sizeof header) || !send_all(fd, result.data(), result.size())) {
      _exit(1);
    }
  }
  _exit(0);
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::uint64_t item = k_stop; // the item it is working on; k_stop when idle or stopped
  std::string buffer;          // result bytes received so far
};

// Gives the child its next item (or the stop mark when none are left); false when it is gone.
bool hand_out(Child& child, std::size_t& next, std::size_t count) {
  const std::uint64_t item = next < count ? next++ : k_stop;
  char number[8];
  put_u64(number, item);
  child.item = item;
  return send_all(child.fd, number, sizeof number);
}

void close_child(Child& child, std::vector<std::size_t>& unfinished, int kill_signal) {
  if (child.item != k_stop) {
    unfinished.push_back(static_cast<std::size_t>(child.item));
    child.item = k_stop;
  }
  if (kill_signal != 0) {
    ::kill(child.pid, kill_signal);
  }
  ::close(child.fd);
  child.fd = -1;
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// Reads what child sent; calls on_result for each complete result. False when the child is done
// (its end closed) or misbehaved; `kill_signal` then says whether it must be killed.
bool drain(Child& child, std::size_t& next, std::size_t count,
           const std::function<void(std::size_t, std::string_view)>& on_result, int& kill_signal) {
  char chunk[1 << 16];
  const ssize_t n = ::recv(child.fd, chunk, sizeof chunk, MSG_DONTWAIT);
  if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
    return true;
  }
  if (n <= 0) {
    return false;
  }
  child.buffer.append(chunk, static_cast<std::size_t>(n));
  while (child.buffer.size() >= k_header_bytes) {
    const std::uint64_t item = get_u64(child.buffer.data());
    const std::uint64_t size = get_u64(child.buffer.data() + 8);
    if (item != child.item || size > k_max_result_bytes) {
      kill_signal = SIGKILL;
      return false;
    }
    if (child.buffer.size() - k_header_bytes < size) {
      return true;
    }
    // The child gets its next item before this one's result is taken, so that it works while
    // this process decodes and stores the result instead of waiting for it.
    const bool handed_out = hand_out(child, next, count);
    on_result(static_cast<std::size_t>(item),
              std::string_view(child.buffer).substr(k_header_bytes, size));
    child.buffer.erase(0, k_header_bytes + size);
    if (!handed_out) {
      return false;
    }
  }
  return true;
}

// Forks one child; nullopt-like (pid -1) when fork or socketpair failed.
Child start_child(const std::vector<Child>& earlier,
                  const std::function<std::string(std::size_t)>& work, const ForkHooks& hooks) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return {};
  }
  std::fflush(stdout);
  std::fflush(stderr);
  if (hooks.before_fork) {
    hooks.before_fork();
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (hooks.child_after) {
      hooks.child_after();
    }
    ::close(fds[0]);
    for (const Child& other : earlier) {
      ::close(other.fd);
    }
    serve_items(fds[1], work);
  }
  if (hooks.parent_after) {
    hooks.parent_after();
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return {};
  }
  Child child;
  child.pid = pid;
  child.fd = fds[0];
  return child;
}

} // namespace

ForkedWorkOutcome run_in_forked_workers(
    std::size_t count, std::size_t workers, const std::function<std::string(std::size_t)>& work,
    const std::function<void(std::size_t, std::string_view)>& on_result, const ForkHooks& hooks) {
  ForkedWorkOutcome outcome;
  std::vector<Child> children;
  std::size_t next = 0;
  for (std::size_t w = 0; w < std::min(workers, count); ++w) {
    Child child = start_child(children, work, hooks);
    if (child.pid < 0) {
      break;
    }
    children.push_back(std::move(child));
    if (!hand_out(children.back(), next, count)) {
      close_child(children.back(), outcome.unfinished, SIGKILL);
      children.pop_back();
    }
  }
  outcome.workers_started = children.size();
  while (!children.empty()) {
    std::vector<pollfd> fds;
    for (const Child& child : children) {
      fds.push_back(pollfd{child.fd, POLLIN, 0});
    }
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    for (std::size_t i = children.size(); i-- > 0;) {
      if (fds[i].revents == 0) {
        continue;
      }
      int kill_signal = 0;
      if (!drain(children[i], next, count, on_result, kill_signal)) {
        close_child(children[i], outcome.unfinished, kill_signal);
        children.erase(children.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }
  // A poll failure leaves children behind: stop them, their items are unfinished.
  for (Child& child : children) {
    close_child(child, outcome.unfinished, SIGKILL);
  }
  for (; next < count; ++next) {
    outcome.unfinished.push_back(next);
  }
  std::sort(outcome.unfinished.begin(), outcome.unfinished.end());
  return outcome;
}

} // namespace fib::detail
