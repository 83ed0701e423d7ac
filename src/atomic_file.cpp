#include "fib/atomic_file.hpp"

#include <fib/codes.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace fib {
namespace {

Diagnostic write_error(const std::filesystem::path& target, std::string_view what, int error) {
  Diagnostic d = make_diagnostic(codes::k_io_write,
                                 fmt::format("cannot write: {}: {}", what, std::strerror(error)));
  d.file = target;
  return d;
}

// The process umask, read without changing it (umask(2) can only set it, which would race with
// other threads creating files); 022 when /proc is not there.
mode_t current_umask() {
  mode_t mask = 022;
  if (std::FILE* status = std::fopen("/proc/self/status", "re")) {
    char line[256];
    while (std::fgets(line, sizeof line, status) != nullptr) {
      if (std::strncmp(line, "Umask:", 6) == 0) {
        mask = static_cast<mode_t>(std::strtoul(line + 6, nullptr, 8));
        break;
      }
    }
    std::fclose(status);
  }
  return mask;
}

// Owns the temporary file: closes it and removes its name unless released.
class TempFile {
public:
  TempFile(std::string path, int fd) : m_path(std::move(path)), m_fd(fd) {}
  ~TempFile() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    if (!m_path.empty()) {
      ::unlink(m_path.c_str());
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  int fd() const { return m_fd; }
  const std::string& path() const { return m_path; }
  // Closes the descriptor; false (errno set) when close(2) reports a failed write-back.
  bool close() {
    const int fd = m_fd;
    m_fd = -1;
    return ::close(fd) == 0;
  }
  // The name is no longer ours (it was renamed away): the destructor leaves it alone.
  void release_name() { m_path.clear(); }

private:
  std::string m_path;
  int m_fd;
};

// Makes the directory entry changes (the new name) durable. File systems that cannot sync a
// directory (EINVAL) are accepted.
int sync_directory(const std::filesystem::path& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return errno;
  }
  int error = 0;
  if (::fsync(fd) != 0 && errno != EINVAL) {
    error = errno;
  }
  ::close(fd);
  return error;
}

} // namespace

Expected<std::filesystem::path> write_file_atomically(const std::filesystem::path& target,
                                                      std::string_view content,
                                                      Overwrite overwrite) {
  std::error_code ec;
  const auto directory =
      target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::filesystem::create_directories(directory, ec);
  if (ec) {
    return unexpected(write_error(target, "cannot create the directory", ec.value()));
  }
  // A short fixed name: a temporary derived from the target's name could exceed NAME_MAX.
  std::string name = (directory / ".fib-XXXXXX").string();
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    return unexpected(write_error(target, "cannot create a temporary file", errno));
  }
  TempFile temp(std::move(name), fd);
  // mkostemp creates the file 0600; give it the mode an ordinary new file would get.
  if (::fchmod(temp.fd(), 0644 & ~current_umask()) != 0) {
    return unexpected(write_error(target, "cannot set the file mode", errno));
  }
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(temp.fd(), content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return unexpected(write_error(target, "write failed", errno));
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(temp.fd()) != 0) {
    return unexpected(write_error(target, "fsync failed", errno));
  }
  if (!temp.close()) {
    return unexpected(write_error(target, "close failed", errno));
  }
  if (overwrite == Overwrite::forbidden) {
    // link(2) fails if the name exists: the check and the write are one step.
    if (::link(temp.path().c_str(), target.c_str()) != 0) {
      if (errno == EEXIST) {
        Diagnostic d = make_diagnostic(
            codes::k_report_exists, fmt::format("report file already exists: {}", target.string()));
        d.file = target;
        return unexpected(std::move(d));
      }
      return unexpected(write_error(target, "cannot link the file into place", errno));
    }
    ::unlink(temp.path().c_str());
    temp.release_name();
  } else {
    if (::rename(temp.path().c_str(), target.c_str()) != 0) {
      return unexpected(write_error(target, "cannot rename the file into place", errno));
    }
    temp.release_name();
  }
  if (const int error = sync_directory(directory); error != 0) {
    return unexpected(write_error(target, "fsync of the directory failed", error));
  }
  return target;
}

} // namespace fib
