#include "scratch_files.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/util/subprocess.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace fib::detail {
namespace {

// A descriptor closed at the end of its scope.
class Descriptor {
public:
  explicit Descriptor(int fd) : m_fd(fd) {}
  ~Descriptor() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return m_fd; }
  bool valid() const { return m_fd >= 0; }

private:
  int m_fd;
};

Unexpected refused(const std::filesystem::path& path, std::string_view what) {
  return unexpected(make_diagnostic(
      codes::k_worker_protocol,
      fmt::format("{}: {} (the worker's scratch directory holds something else than fib expects)",
                  path.string(), what)));
}

Unexpected failed(const std::filesystem::path& path, std::string_view what, int error) {
  return unexpected(
      make_diagnostic(codes::k_worker_protocol,
                      fmt::format("{}: cannot {}: {}", path.string(), what, std::strerror(error))));
}

bool copy_all(int from, int to, std::uint64_t limit, std::uint64_t& copied) {
  char buffer[1 << 16];
  copied = 0;
  while (true) {
    const ssize_t n = ::read(from, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return false;
    }
    if (n == 0) {
      return true;
    }
    copied += static_cast<std::uint64_t>(n);
    if (copied > limit) {
      errno = EFBIG;
      return false;
    }
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(to, buffer + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) {
        continue;
      }
      if (w <= 0) {
        return false;
      }
      done += w;
    }
  }
}

// The directory `scratch`/`directory`, opened without following a link.
Expected<int> open_directory(const std::filesystem::path& scratch, const std::string& directory) {
  const Descriptor root(::open(scratch.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) {
    return failed(scratch, "open the scratch directory", errno);
  }
  const int fd =
      ::openat(root.get(), directory.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return refused(scratch / directory, "not a directory of the job");
  }
  return fd;
}

} // namespace

Expected<std::filesystem::path> make_job_directory(const std::filesystem::path& scratch,
                                                   const std::string& name) {
  const Descriptor root(::open(scratch.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) {
    return failed(scratch, "open the scratch directory", errno);
  }
  if (::mkdirat(root.get(), name.c_str(), 0700) != 0) {
    return errno == EEXIST ? refused(scratch / name, "already exists")
                           : failed(scratch / name, "create", errno);
  }
  return scratch / name;
}

Expected<std::filesystem::path> take_file(const std::filesystem::path& scratch,
                                          const std::string& directory, const std::string& name,
                                          const std::filesystem::path& destination) {
  const std::filesystem::path shown = scratch / directory / name;
  auto dir = open_directory(scratch, directory);
  if (!dir) {
    return unexpected(dir.error());
  }
  const Descriptor parent(*dir);
  const Descriptor from(
      ::openat(parent.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!from.valid()) {
    return errno == ELOOP ? refused(shown, "a symbolic link") : failed(shown, "open", errno);
  }
  struct stat info {};
  if (::fstat(from.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return refused(shown, "not a regular file");
  }
  if (static_cast<std::uint64_t>(info.st_size) > k_max_taken_file_bytes) {
    return refused(shown, "larger than 16 GiB");
  }
  ::unlink(destination.c_str());
  const Descriptor to(
      ::open(destination.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!to.valid()) {
    return failed(destination, "create", errno);
  }
  std::uint64_t copied = 0;
  if (!copy_all(from.get(), to.get(), k_max_taken_file_bytes, copied)) {
    return failed(shown, "copy", errno);
  }
  return destination;
}

Expected<std::filesystem::path> put_file(const std::filesystem::path& source,
                                         const std::filesystem::path& scratch,
                                         const std::string& directory, const std::string& name) {
  const std::filesystem::path shown = scratch / directory / name;
  auto dir = open_directory(scratch, directory);
  if (!dir) {
    return unexpected(dir.error());
  }
  const Descriptor parent(*dir);
  const Descriptor from(::open(source.c_str(), O_RDONLY | O_CLOEXEC));
  if (!from.valid()) {
    return failed(source, "open", errno);
  }
  const Descriptor to(::openat(parent.get(), name.c_str(),
                               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!to.valid()) {
    return errno == EEXIST ? refused(shown, "already exists") : failed(shown, "create", errno);
  }
  std::uint64_t copied = 0;
  if (!copy_all(from.get(), to.get(), k_max_taken_file_bytes, copied)) {
    return failed(shown, "copy", errno);
  }
  return shown;
}

int receive_scratch_descriptor(int socket, ScratchKind kind) {
  const int descriptor = receive_descriptor(socket, k_scratch_descriptor_tag);
  if (descriptor < 0) {
    return -1;
  }
  struct stat info {};
  struct statfs where {};
  const bool directory = ::fstat(descriptor, &info) == 0 && S_ISDIR(info.st_mode);
  const bool tmpfs = ::fstatfs(descriptor, &where) == 0 && where.f_type == TMPFS_MAGIC;
  if (!directory || (kind == ScratchKind::tmpfs && !tmpfs)) {
    ::close(descriptor);
    return -1;
  }
  return descriptor;
}

} // namespace fib::detail
