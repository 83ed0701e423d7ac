// Reading whole files, and splitting JSON Lines text the way Python's str.splitlines() does.

#include "fib/io/file_fingerprint.hpp"
#include "fib/io/json_io.hpp"

#include "io/byte_scan.hpp"

#include <fib/base/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <optional>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fib {
namespace {

constexpr std::size_t k_read_chunk = std::size_t{1} << 16;

// Length of the line break at `pos` per str.splitlines(), or 0.
std::size_t line_break_length(std::string_view text, std::size_t pos) {
  const auto c = static_cast<unsigned char>(text[pos]);
  if (c == '\r') {
    return pos + 1 < text.size() && text[pos + 1] == '\n' ? 2 : 1;
  }
  if (c == '\n' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E) {
    return 1;
  }
  if (c == 0xC2 && pos + 1 < text.size() && static_cast<unsigned char>(text[pos + 1]) == 0x85) {
    return 2;
  }
  if (c == 0xE2 && pos + 2 < text.size() && static_cast<unsigned char>(text[pos + 1]) == 0x80 &&
      (static_cast<unsigned char>(text[pos + 2]) == 0xA8 ||
       static_cast<unsigned char>(text[pos + 2]) == 0xA9)) {
    return 3;
  }
  return 0;
}

// Python's str.strip() for the ASCII whitespace and U+00A0 seen in real files.
std::string_view strip(std::string_view s) {
  const auto is_space = [](unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0B || c == 0x0C ||
           (c >= 0x1C && c <= 0x1F);
  };
  while (!s.empty() && is_space(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && is_space(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

FileStatus file_status_of(const struct stat& info) {
  const auto ns = [](const timespec& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  };
  return FileStatus{static_cast<std::uint64_t>(info.st_dev),
                    static_cast<std::uint64_t>(info.st_ino),
                    static_cast<std::uint32_t>(info.st_mode),
                    static_cast<std::int64_t>(info.st_size),
                    ns(info.st_mtim),
                    ns(info.st_ctim)};
}

// The content of `file` when it is a readable regular file of at most `max_bytes`, read with one
// open, one fstat and as few reads as can be; nullopt otherwise (the file is then looked at again
// by read_text_file, which says what is wrong). O_NONBLOCK: opening a FIFO must not wait for a
// writer (it is refused after the fstat).
// `status`, when given, receives what that fstat said (before any byte was read).
std::optional<std::string> read_plain_file(const std::filesystem::path& file,
                                           std::uintmax_t max_bytes,
                                           std::optional<FileStatus>* status = nullptr) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return std::nullopt;
  }
  std::optional<std::string> content;
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
      static_cast<std::uintmax_t>(info.st_size) <= max_bytes) {
    if (status != nullptr) {
      *status = file_status_of(info);
    }
    content.emplace();
    // One byte more than the size, so that reaching the end is seen without growing the string.
    content->resize(static_cast<std::size_t>(info.st_size) + 1);
    std::size_t filled = 0;
    while (true) {
      if (filled == content->size()) {
        // The file grew since the fstat: read on, within the limit.
        if (content->size() > max_bytes) {
          content.reset();
          break;
        }
        content->resize(content->size() + k_read_chunk);
      }
      const ssize_t got = ::read(fd, content->data() + filled, content->size() - filled);
      if (got < 0 && errno == EINTR) {
        continue;
      }
      if (got < 0) {
        content.reset();
        break;
      }
      if (got == 0) {
        content->resize(filled);
        break;
      }
      filled += static_cast<std::size_t>(got);
    }
    if (content && content->size() > max_bytes) {
      content.reset();
    }
  }
  ::close(fd);
  return content;
}

} // namespace

std::vector<JsonlLine> split_jsonl_lines(std::string_view text) {
  std::vector<JsonlLine> lines;
  int number = 1;
  std::size_t start = 0;
  std::size_t pos = 0;
  while (true) {
    // Every line break starts with a control character or a non-ASCII byte: skip to the next.
    pos = detail::find_control_or_non_ascii(text, pos);
    if (pos >= text.size()) {
      break;
    }
    const std::size_t brk = line_break_length(text, pos);
    if (brk == 0) {
      ++pos;
      continue;
    }
    if (auto stripped = strip(text.substr(start, pos - start)); !stripped.empty()) {
      lines.push_back({number, stripped});
    }
    pos += brk;
    start = pos;
    ++number;
  }
  if (auto stripped = strip(text.substr(start)); !stripped.empty()) {
    lines.push_back({number, stripped});
  }
  return lines;
}

std::optional<FileStatus> file_status(const std::filesystem::path& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) {
    return std::nullopt;
  }
  return file_status_of(info);
}

std::string stat_fingerprint(const FileStatus& status) {
  return fmt::format("{} {} {} {} {} {}", status.device, status.inode, status.mode, status.size,
                     status.modified_ns, status.changed_ns);
}

TextFile read_text_file_with_status(const std::filesystem::path& file, std::uintmax_t max_bytes) {
  std::optional<FileStatus> status;
  if (std::optional<std::string> content = read_plain_file(file, max_bytes, &status)) {
    return TextFile{std::move(*content), status};
  }
  return TextFile{read_text_file(file, max_bytes), std::nullopt};
}

Expected<std::string> read_text_file(const std::filesystem::path& file, std::uintmax_t max_bytes) {
  if (std::optional<std::string> content = read_plain_file(file, max_bytes)) {
    return std::move(*content);
  }
  // Something is off (missing, not a plain file, too big, unreadable): the careful path below
  // looks again and says what.
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    // A symlink loop, a permission problem on a parent directory, …
    Diagnostic d = make_diagnostic(codes::k_io_read, fmt::format("cannot read: {}", ec.message()));
    d.file = file;
    return unexpected(std::move(d));
  }
  if (ec || !std::filesystem::exists(status)) {
    Diagnostic d = make_diagnostic(codes::k_io_not_found, "no such file");
    d.file = file;
    return unexpected(std::move(d));
  }
  if (std::filesystem::is_directory(status)) {
    Diagnostic d = make_diagnostic(codes::k_io_read, "cannot read: is a directory");
    d.file = file;
    return unexpected(std::move(d));
  }
  if (!std::filesystem::is_regular_file(status)) {
    // FIFOs block, devices never end: only plain files are read.
    Diagnostic d = make_diagnostic(codes::k_io_read,
                                   "cannot read: not a regular file (a FIFO, socket or device)");
    d.file = file;
    return unexpected(std::move(d));
  }
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (!ec && size > max_bytes) {
    Diagnostic d = make_diagnostic(
        codes::k_io_too_large,
        fmt::format("file is {} bytes, more than the limit of {} bytes", size, max_bytes));
    d.file = file;
    return unexpected(std::move(d));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    Diagnostic d = make_diagnostic(codes::k_io_read, "cannot open the file for reading");
    d.file = file;
    return unexpected(std::move(d));
  }
  // Read straight into the result, sized for the whole file (and one byte more, so a file read
  // to its end is seen to end without growing the string); a file that grew meanwhile is read on.
  std::string content;
  content.reserve(ec ? k_read_chunk : static_cast<std::size_t>(size) + 1);
  while (true) {
    const std::size_t before = content.size();
    const std::size_t wanted = std::max(content.capacity() - before, k_read_chunk);
    content.resize(before + wanted);
    in.read(content.data() + before, static_cast<std::streamsize>(wanted));
    const auto got = static_cast<std::size_t>(in.gcount());
    content.resize(before + got);
    if (content.size() > max_bytes) {
      Diagnostic d = make_diagnostic(
          codes::k_io_too_large, fmt::format("file is more than the limit of {} bytes", max_bytes));
      d.file = file;
      return unexpected(std::move(d));
    }
    if (got < wanted) {
      break;
    }
  }
  if (in.bad()) {
    Diagnostic d = make_diagnostic(codes::k_io_read, "read error");
    d.file = file;
    return unexpected(std::move(d));
  }
  return content;
}

} // namespace fib
