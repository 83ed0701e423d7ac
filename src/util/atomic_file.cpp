#include "fib/util/atomic_file.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <random>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <utility>

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

// The temporary of one atomic write: a descriptor for the data and a second descriptor of the same
// open file that holds the flock(2) marking the temporary as live (atomic_file.hpp, "Stale
// temporaries"); `lock_fd` is -1 where the file system has no flock(2).
struct CreatedTemporary {
  int fd = -1;
  int lock_fd = -1;
};

// True when `name` in `dirfd` is still the file open as `fd` (a sweep may have removed the name in
// the instant between its creation and its lock).
bool name_leads_to(int dirfd, const std::string& name, int fd) {
  struct stat named {};
  struct stat opened {};
  return ::fstatat(dirfd, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
         ::fstat(fd, &opened) == 0 && named.st_dev == opened.st_dev &&
         named.st_ino == opened.st_ino;
}

// Creates the temporary file in `dirfd` with a random `.fib-XXXXXX` name, never following a link,
// and locks it before it counts as created: a sweep that took the unlocked name for a dead write's
// and removed it, or holds it locked to remove it, sends the writer on to another name.
CreatedTemporary create_temporary(int dirfd, std::string& name) {
  static constexpr std::string_view k_alphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device random;
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = ".fib-";
    for (int i = 0; i < 6; ++i) {
      name += k_alphabet[random() % k_alphabet.size()];
    }
    const int fd =
        ::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      if (errno == EEXIST) {
        continue;
      }
      return {};
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) {
        ::close(fd); // a sweep holds it and removes the name
        continue;
      }
      return {fd, -1}; // no flock(2) here: no sweep can lock it either
    }
    if (!name_leads_to(dirfd, name, fd)) {
      ::close(fd); // swept before the lock
      continue;
    }
    const int lock_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (lock_fd < 0) {
      const int error = errno;
      ::close(fd);
      ::unlinkat(dirfd, name.c_str(), 0);
      errno = error;
      return {};
    }
    return {fd, lock_fd};
  }
  errno = EEXIST;
  return {};
}

// Owns the temporary file: closes it and removes its name unless released. The lock descriptor is
// closed last, after the data descriptor and after the name was renamed away or removed.
class TempFile {
public:
  TempFile(int dirfd, std::string name, CreatedTemporary created)
      : m_dirfd(dirfd), m_name(std::move(name)), m_fd(created.fd), m_lock_fd(created.lock_fd) {}
  ~TempFile() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    if (!m_name.empty()) {
      ::unlinkat(m_dirfd, m_name.c_str(), 0);
    }
    if (m_lock_fd >= 0) {
      ::close(m_lock_fd);
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  int fd() const { return m_fd; }
  const std::string& name() const { return m_name; }
  // Closes the data descriptor; false (errno set) when close(2) reports a failed write-back.
  bool close() {
    const int fd = m_fd;
    m_fd = -1;
    return ::close(fd) == 0;
  }
  // The name is no longer ours (it was renamed away): the destructor leaves it alone.
  void release_name() { m_name.clear(); }

private:
  int m_dirfd;
  std::string m_name;
  int m_fd;
  int m_lock_fd;
};

} // namespace

void detail::inject_fault_before_rename() {
  const char* fault = std::getenv(k_fault_injection_variable.data());
  if (fault == nullptr) {
    return;
  }
  if (std::string_view(fault) == "kill-before-rename") {
    ::kill(::getpid(), SIGKILL);
  } else if (std::string_view(fault) == "stop-before-rename") {
    ::kill(::getpid(), SIGSTOP);
  }
}

namespace {

// The first step of an atomic write: the locked temporary in `dirfd`, with its final mode bits.
Expected<std::unique_ptr<TempFile>> begin_write(int dirfd, const std::filesystem::path& target,
                                                FileMode mode) {
  std::string temp_name;
  const CreatedTemporary created = create_temporary(dirfd, temp_name);
  if (created.fd < 0) {
    return unexpected(write_error(target, "cannot create a temporary file", errno));
  }
  auto temp = std::make_unique<TempFile>(dirfd, std::move(temp_name), created);
  const mode_t bits = mode ? static_cast<mode_t>(*mode & std::filesystem::perms::mask)
                           : static_cast<mode_t>(0644 & ~current_umask());
  if (::fchmod(temp->fd(), bits) != 0) {
    return unexpected(write_error(target, "cannot set the file mode", errno));
  }
  return temp;
}

// Appends `content` to the temporary.
std::optional<Diagnostic> append_to(TempFile& temp, const std::filesystem::path& target,
                                    std::string_view content) {
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(temp.fd(), content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return write_error(target, "write failed", errno);
    }
    written += static_cast<std::size_t>(n);
  }
  return std::nullopt;
}

// The last step: the temporary synced (with Durability::synced), closed and put in place as
// `name`. `exists` is set when Overwrite::forbidden met an existing name.
Expected<std::filesystem::path> finish_write(int dirfd, TempFile& temp,
                                             const std::filesystem::path& target,
                                             std::string_view name, Overwrite overwrite,
                                             bool& exists, Durability durability) {
  exists = false;
  if (durability == Durability::synced && ::fsync(temp.fd()) != 0) {
    return unexpected(write_error(target, "fsync failed", errno));
  }
  if (!temp.close()) {
    return unexpected(write_error(target, "close failed", errno));
  }
  detail::inject_fault_before_rename();
  const std::string target_name(name);
  if (overwrite == Overwrite::forbidden) {
    // linkat(2) fails if the name exists: the check and the write are one step.
    if (::linkat(dirfd, temp.name().c_str(), dirfd, target_name.c_str(), 0) != 0) {
      if (errno == EEXIST) {
        exists = true;
        Diagnostic d = make_diagnostic(
            codes::k_io_write,
            fmt::format("cannot write: {} appeared meanwhile; left as it is", target.string()));
        d.file = target;
        return unexpected(std::move(d));
      }
      return unexpected(write_error(target, "cannot link the file into place", errno));
    }
    ::unlinkat(dirfd, temp.name().c_str(), 0);
    temp.release_name();
  } else {
    if (::renameat(dirfd, temp.name().c_str(), dirfd, target_name.c_str()) != 0) {
      return unexpected(write_error(target, "cannot rename the file into place", errno));
    }
    temp.release_name();
  }
  // Makes the new name durable. File systems that cannot sync a directory (EINVAL) are accepted.
  if (durability == Durability::synced && ::fsync(dirfd) != 0 && errno != EINVAL) {
    return unexpected(write_error(target, "fsync of the directory failed", errno));
  }
  return target;
}

// The atomic write itself. `exists` is set when Overwrite::forbidden met an existing name.
Expected<std::filesystem::path> write_in(int dirfd, const std::filesystem::path& target,
                                         std::string_view name, std::string_view content,
                                         Overwrite overwrite, FileMode mode, bool& exists,
                                         Durability durability = Durability::synced) {
  exists = false;
  auto temp = begin_write(dirfd, target, mode);
  if (!temp) {
    return unexpected(std::move(temp.error()));
  }
  if (auto failed = append_to(**temp, target, content)) {
    return unexpected(std::move(*failed));
  }
  return finish_write(dirfd, **temp, target, name, overwrite, exists, durability);
}

// The directory `target` goes in, created when missing, and opened.
Expected<DirectoryHandle> open_target_directory(const std::filesystem::path& target) {
  std::error_code ec;
  const auto directory =
      target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::filesystem::create_directories(directory, ec);
  if (ec) {
    return unexpected(write_error(target, "cannot create the directory", ec.value()));
  }
  const int dirfd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    return unexpected(write_error(target, "cannot open the directory", errno));
  }
  return DirectoryHandle(dirfd, directory);
}

// write_file_atomically's error for a name that Overwrite::forbidden found taken.
Diagnostic already_exists(const std::filesystem::path& target) {
  Diagnostic d = make_diagnostic(codes::k_report_exists,
                                 fmt::format("report file already exists: {}", target.string()));
  d.file = target;
  return d;
}

Diagnostic unsafe_path(const std::filesystem::path& path, std::string_view what) {
  Diagnostic d = make_diagnostic(
      codes::k_io_unsafe_path,
      fmt::format("{} {}; nothing is read or written through it", path.string(), what));
  d.file = path;
  return d;
}

Diagnostic io_error(std::string_view code, const std::filesystem::path& path, std::string_view what,
                    int error) {
  Diagnostic d =
      make_diagnostic(code, fmt::format("{}: {}: {}", path.string(), what, std::strerror(error)));
  d.file = path;
  return d;
}

} // namespace

DirectoryHandle::~DirectoryHandle() {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

DirectoryHandle::DirectoryHandle(DirectoryHandle&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_path(std::move(other.m_path)) {}

DirectoryHandle& DirectoryHandle::operator=(DirectoryHandle&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = std::exchange(other.m_fd, -1);
    m_path = std::move(other.m_path);
  }
  return *this;
}

Expected<DirectoryHandle> open_directory(const std::filesystem::path& root) {
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) {
      Diagnostic d = make_diagnostic(codes::k_io_not_found,
                                     fmt::format("{}: no such directory", root.string()));
      d.file = root;
      return unexpected(std::move(d));
    }
    return unexpected(io_error(codes::k_io_read, root, "cannot open the directory", error));
  }
  return DirectoryHandle(fd, root);
}

namespace {

// Whether `name` is one path segment that openat(2) reads as written: not empty, not `.` or
// `..`, and free of `/` and NUL (which would end the C string early, so "..\0x" would open "..").
bool is_single_segment(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

} // namespace

Expected<std::optional<DirectoryHandle>>
open_subdirectory(const DirectoryHandle& parent, std::string_view name, CreateMissing create) {
  const std::string entry(name);
  const auto path = parent.path() / entry;
  if (!is_single_segment(name)) {
    return unexpected(unsafe_path(path, "is not a single path segment"));
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd =
        ::openat(parent.fd(), entry.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      return std::optional<DirectoryHandle>(DirectoryHandle(fd, path));
    }
    const int error = errno;
    if (error == ELOOP || error == ENOTDIR) {
      // With O_DIRECTORY, Linux reports a link as ENOTDIR: ask what the entry is.
      struct stat info {};
      const bool link = ::fstatat(parent.fd(), entry.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
                        S_ISLNK(info.st_mode);
      return unexpected(unsafe_path(path, link ? "is a symbolic link" : "is not a directory"));
    }
    if (error != ENOENT) {
      return unexpected(io_error(codes::k_io_read, path, "cannot open the directory", error));
    }
    if (create == CreateMissing::no) {
      return std::optional<DirectoryHandle>();
    }
    if (::mkdirat(parent.fd(), entry.c_str(), 0777) != 0 && errno != EEXIST) {
      return unexpected(io_error(codes::k_io_write, path, "cannot create the directory", errno));
    }
  }
  return unexpected(io_error(codes::k_io_write, path, "cannot create the directory", ENOENT));
}

Expected<bool> remove_file_in(const DirectoryHandle& directory, std::string_view name) {
  const std::string entry(name);
  const auto path = directory.path() / entry;
  if (!is_single_segment(name)) {
    return unexpected(unsafe_path(path, "is not a single path segment"));
  }
  struct stat info {};
  if (::fstatat(directory.fd(), entry.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    const int error = errno;
    if (error == ENOENT) {
      return false;
    }
    return unexpected(io_error(codes::k_io_write, path, "cannot look up", error));
  }
  if (S_ISLNK(info.st_mode)) {
    return unexpected(unsafe_path(path, "is a symbolic link"));
  }
  if (!S_ISREG(info.st_mode)) {
    return unexpected(unsafe_path(path, "is not a regular file"));
  }
  if (::unlinkat(directory.fd(), entry.c_str(), 0) != 0) {
    const int error = errno;
    if (error == ENOENT) {
      return false;
    }
    return unexpected(io_error(codes::k_io_write, path, "cannot remove", error));
  }
  ::fsync(directory.fd());
  return true;
}

FileMode file_mode_in(const DirectoryHandle& directory, std::string_view name) {
  const std::string entry(name);
  struct stat info {};
  if (::fstatat(directory.fd(), entry.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISREG(info.st_mode)) {
    return std::nullopt;
  }
  return static_cast<std::filesystem::perms>(info.st_mode & 0777); // never set-id bits
}

Expected<std::optional<std::string>> read_file_in(const DirectoryHandle& directory,
                                                  std::string_view name, std::uintmax_t max_bytes) {
  const std::string entry(name);
  const auto path = directory.path() / entry;
  const int fd =
      ::openat(directory.fd(), entry.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) {
      return std::optional<std::string>();
    }
    if (error == ELOOP) {
      return unexpected(unsafe_path(path, "is a symbolic link"));
    }
    return unexpected(io_error(codes::k_io_read, path, "cannot open", error));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return unexpected(unsafe_path(path, "is not a regular file"));
  }
  if (static_cast<std::uintmax_t>(info.st_size) > max_bytes) {
    ::close(fd);
    Diagnostic d = make_diagnostic(
        codes::k_io_too_large, fmt::format("{} is larger than {} bytes", path.string(), max_bytes));
    d.file = path;
    return unexpected(std::move(d));
  }
  std::string text;
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      const int error = errno;
      ::close(fd);
      return unexpected(io_error(codes::k_io_read, path, "read failed", error));
    }
    if (n == 0) {
      break;
    }
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      Diagnostic d =
          make_diagnostic(codes::k_io_too_large,
                          fmt::format("{} is larger than {} bytes", path.string(), max_bytes));
      d.file = path;
      return unexpected(std::move(d));
    }
  }
  ::close(fd);
  return std::optional<std::string>(std::move(text));
}

Expected<std::filesystem::path> write_file_atomically_in(const DirectoryHandle& directory,
                                                         std::string_view name,
                                                         std::string_view content,
                                                         Overwrite overwrite, FileMode mode,
                                                         Durability durability) {
  bool exists = false;
  return write_in(directory.fd(), directory.path() / std::string(name), name, content, overwrite,
                  mode, exists, durability);
}

Expected<DirectoryHandle> open_parent_directory_below(const std::filesystem::path& root,
                                                      const std::filesystem::path& relative,
                                                      CreateMissing create) {
  if (relative.is_absolute() || !relative.has_filename() ||
      std::any_of(relative.begin(), relative.end(),
                  [](const std::filesystem::path& part) { return part == ".."; })) {
    return unexpected(unsafe_path(root / relative, "is not a path below its root"));
  }
  FIB_TRY_ASSIGN(DirectoryHandle current, open_directory(root));
  for (const auto& part : relative.parent_path()) {
    if (part == ".") {
      continue;
    }
    auto next = open_subdirectory(current, part.string(), create);
    if (!next) {
      return unexpected(next.error());
    }
    if (!*next) {
      return unexpected(
          io_error(codes::k_io_write, current.path() / part, "cannot write below it", ENOENT));
    }
    current = std::move(**next);
  }
  return current;
}

Expected<std::filesystem::path> write_file_atomically_below(const std::filesystem::path& root,
                                                            const std::filesystem::path& relative,
                                                            std::string_view content,
                                                            Overwrite overwrite,
                                                            CreateMissing create) {
  FIB_TRY_ASSIGN(const DirectoryHandle directory,
                 open_parent_directory_below(root, relative, create));
  return write_file_atomically_in(directory, relative.filename().string(), content, overwrite);
}

Expected<std::filesystem::path> write_file_atomically(const std::filesystem::path& target,
                                                      std::string_view content, Overwrite overwrite,
                                                      FileMode mode) {
  auto handle = open_target_directory(target);
  if (!handle) {
    return unexpected(std::move(handle.error()));
  }
  bool exists = false;
  auto written =
      write_in(handle->fd(), target, target.filename().string(), content, overwrite, mode, exists);
  if (!written && exists) {
    return unexpected(already_exists(target));
  }
  return written;
}

// --- PendingFile ---

struct PendingFile::State {
  DirectoryHandle directory;
  std::filesystem::path target;
  Overwrite overwrite;
  std::unique_ptr<TempFile> temp;
  std::size_t appended = 0;
  std::size_t flushed = 0; // bytes handed to write-back so far
  bool sealed = false;     // synced and closed by link_as()
};

PendingFile::PendingFile(std::unique_ptr<State> state) : m_state(std::move(state)) {}
PendingFile::PendingFile(PendingFile&&) noexcept = default;
PendingFile& PendingFile::operator=(PendingFile&&) noexcept = default;
PendingFile::~PendingFile() = default;

Expected<PendingFile> PendingFile::create(const std::filesystem::path& target, Overwrite overwrite,
                                          FileMode mode) {
  auto handle = open_target_directory(target);
  if (!handle) {
    return unexpected(std::move(handle.error()));
  }
  auto temp = begin_write(handle->fd(), target, mode);
  if (!temp) {
    return unexpected(std::move(temp.error()));
  }
  auto state = std::make_unique<State>(
      State{std::move(*handle), target, overwrite, std::move(*temp), 0, 0, false});
  return PendingFile(std::move(state));
}

std::optional<Diagnostic> PendingFile::append(std::string_view bytes) {
  if (!m_state || !m_state->temp) {
    return make_diagnostic(codes::k_io_write, "internal: append to a finished pending file");
  }
  if (auto failed = append_to(*m_state->temp, m_state->target, bytes)) {
    m_state->temp.reset(); // the temporary goes; commit() reports the write as failed
    return failed;
  }
  m_state->appended += bytes.size();
  // Write-back of what is there starts now (without waiting), so that the final fsync finds most
  // of the file on its way to the disk already.
  constexpr std::size_t k_write_back_step = std::size_t{1} << 20;
  if (m_state->appended - m_state->flushed >= k_write_back_step) {
    ::sync_file_range(m_state->temp->fd(), static_cast<off_t>(m_state->flushed),
                      static_cast<off_t>(m_state->appended - m_state->flushed),
                      SYNC_FILE_RANGE_WRITE);
    m_state->flushed = m_state->appended;
  }
  return std::nullopt;
}

Expected<std::filesystem::path> PendingFile::commit() {
  if (!m_state || !m_state->temp) {
    return unexpected(make_diagnostic(codes::k_io_write, "internal: commit of a failed or "
                                                         "finished pending file"));
  }
  State& state = *m_state;
  if (state.sealed) {
    return unexpected(make_diagnostic(codes::k_io_write, "internal: commit of a linked file"));
  }
  bool exists = false;
  auto written =
      finish_write(state.directory.fd(), *state.temp, state.target,
                   state.target.filename().string(), state.overwrite, exists, Durability::synced);
  state.temp.reset();
  if (!written && exists) {
    return unexpected(already_exists(state.target));
  }
  return written;
}

Expected<PendingFile::LinkOutcome> PendingFile::link_as(const std::filesystem::path& target) {
  if (!m_state || !m_state->temp) {
    return unexpected(make_diagnostic(codes::k_io_write, "internal: link of a failed or "
                                                         "finished pending file"));
  }
  State& state = *m_state;
  if (!state.sealed) {
    if (::fsync(state.temp->fd()) != 0) {
      const int error = errno;
      state.temp.reset();
      return unexpected(write_error(target, "fsync failed", error));
    }
    if (!state.temp->close()) {
      const int error = errno;
      state.temp.reset();
      return unexpected(write_error(target, "close failed", error));
    }
    state.sealed = true;
  }
  detail::inject_fault_before_rename();
  const int dirfd = state.directory.fd();
  const std::string name = target.filename().string();
  if (::linkat(dirfd, state.temp->name().c_str(), dirfd, name.c_str(), 0) != 0) {
    if (errno == EEXIST) {
      return LinkOutcome::name_taken;
    }
    return unexpected(write_error(target, "cannot link the file into place", errno));
  }
  return LinkOutcome::linked;
}

void PendingFile::unlink_linked(const std::filesystem::path& target) {
  if (m_state) {
    ::unlinkat(m_state->directory.fd(), target.filename().string().c_str(), 0);
  }
}

std::optional<Diagnostic> PendingFile::commit_linked() {
  if (!m_state || !m_state->temp || !m_state->sealed) {
    return make_diagnostic(codes::k_io_write, "internal: commit of a pending file never linked");
  }
  m_state->temp.reset(); // removes the temporary's own name; the linked names stay
  // Makes the new names durable. File systems that cannot sync a directory (EINVAL) are accepted.
  if (::fsync(m_state->directory.fd()) != 0 && errno != EINVAL) {
    return write_error(m_state->target, "fsync of the directory failed", errno);
  }
  return std::nullopt;
}

} // namespace fib
