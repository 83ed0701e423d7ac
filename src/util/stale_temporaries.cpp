// Removing the stale temporaries of atomic writes (the rule is in fib/util/atomic_file.hpp).

#include "fib/util/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace fib {
namespace {

constexpr std::string_view k_temporary_prefix = ".fib-";
constexpr std::size_t k_temporary_suffix_length = 6;

bool is_ascii_alphanumeric(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// The names in `dirfd` that have the temporaries' form; empty when it cannot be listed.
std::vector<std::string> temporary_names_in(int dirfd) {
  std::vector<std::string> names;
  const int listing_fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (listing_fd < 0) {
    return names;
  }
  DIR* listing = ::fdopendir(listing_fd);
  if (listing == nullptr) {
    ::close(listing_fd);
    return names;
  }
  while (const struct dirent* entry = ::readdir(listing)) {
    if (is_atomic_write_temporary(entry->d_name)) {
      names.emplace_back(entry->d_name);
    }
  }
  ::closedir(listing);
  return names;
}

// Removes the temporary `name` of `dirfd` if it is stale; true when it was removed.
bool remove_if_stale(int dirfd, const std::string& name) {
  struct stat before {};
  if (::fstatat(dirfd, name.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISREG(before.st_mode)) {
    return false;
  }
  const int fd =
      ::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  struct stat opened {};
  bool removed = false;
  // Still the same regular file, and no live writer holds its lock.
  if (::fstat(fd, &opened) == 0 && S_ISREG(opened.st_mode) && opened.st_dev == before.st_dev &&
      opened.st_ino == before.st_ino && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    struct stat named {};
    // The name still leads to that file (unlinkat never follows a link; this only keeps a
    // replacement under the same name from being removed instead).
    if (::fstatat(dirfd, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
        named.st_dev == opened.st_dev && named.st_ino == opened.st_ino) {
      removed = ::unlinkat(dirfd, name.c_str(), 0) == 0;
    }
  }
  ::close(fd);
  return removed;
}

} // namespace

bool is_atomic_write_temporary(std::string_view name) {
  if (name.size() != k_temporary_prefix.size() + k_temporary_suffix_length ||
      !name.starts_with(k_temporary_prefix)) {
    return false;
  }
  for (const char c : name.substr(k_temporary_prefix.size())) {
    if (!is_ascii_alphanumeric(c)) {
      return false;
    }
  }
  return true;
}

std::size_t StaleTemporarySweeper::remove_stale_in(const DirectoryHandle& directory) {
  struct stat info {};
  if (directory.fd() < 0 || ::fstat(directory.fd(), &info) != 0 ||
      !m_swept.emplace(info.st_dev, info.st_ino).second) {
    return 0;
  }
  std::size_t removed = 0;
  for (const std::string& name : temporary_names_in(directory.fd())) {
    removed += remove_if_stale(directory.fd(), name) ? 1 : 0;
  }
  m_removed += removed;
  return removed;
}

std::size_t StaleTemporarySweeper::remove_stale_beside(const std::filesystem::path& file) {
  const auto parent = file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
  const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return 0;
  }
  return remove_stale_in(DirectoryHandle(fd, parent));
}

std::size_t StaleTemporarySweeper::remove_stale_below(const std::filesystem::path& root,
                                                      const std::filesystem::path& relative) {
  auto directory = open_parent_directory_below(root, relative, CreateMissing::no);
  return directory ? remove_stale_in(*directory) : 0;
}

} // namespace fib
