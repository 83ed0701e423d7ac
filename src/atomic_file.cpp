#include "fib/atomic_file.hpp"

#include <fib/codes.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
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

// Closes and unlinks the temporary file unless released.
class TempFile {
public:
  explicit TempFile(std::filesystem::path path) : m_path(std::move(path)) {}
  ~TempFile() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    if (!m_path.empty()) {
      std::error_code ec;
      std::filesystem::remove(m_path, ec);
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  int& fd() { return m_fd; }
  const std::filesystem::path& path() const { return m_path; }

private:
  std::filesystem::path m_path;
  int m_fd = -1;
};

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
  static std::atomic<unsigned> counter{0};
  TempFile temp(directory /
                fmt::format(".{}.tmp-{}-{}", target.filename().string(), ::getpid(), counter++));
  temp.fd() = ::open(temp.path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (temp.fd() < 0) {
    return unexpected(write_error(target, "cannot create a temporary file", errno));
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
  if (overwrite == Overwrite::forbidden) {
    if (::link(temp.path().c_str(), target.c_str()) != 0) {
      if (errno == EEXIST) {
        Diagnostic d = make_diagnostic(
            codes::k_report_exists, fmt::format("report file already exists: {}", target.string()));
        d.file = target;
        return unexpected(std::move(d));
      }
      return unexpected(write_error(target, "cannot link the file into place", errno));
    }
  } else if (::rename(temp.path().c_str(), target.c_str()) != 0) {
    return unexpected(write_error(target, "cannot rename the file into place", errno));
  }
  return target;
}

} // namespace fib
