#include "util/cache_pack.hpp"

#include "util/xxh64.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <utility>

namespace fib::detail {
namespace {

constexpr std::string_view k_header_magic = "fibcache";
constexpr std::string_view k_trailer_magic = "fibindex";
constexpr std::size_t k_key_size = std::tuple_size_v<Sha256Digest>;

void append_u32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) {
    out += static_cast<char>((value >> (8 * i)) & 0xff);
  }
}

void append_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    out += static_cast<char>((value >> (8 * i)) & 0xff);
  }
}

void append_key(std::string& out, const Sha256Digest& key) {
  out.append(reinterpret_cast<const char*>(key.data()), key.size());
}

std::uint32_t read_u32(const unsigned char* p) {
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) {
    value = (value << 8) | p[i];
  }
  return value;
}

std::uint64_t read_u64(const unsigned char* p) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) {
    value = (value << 8) | p[i];
  }
  return value;
}

std::string_view bytes_of(const unsigned char* p, std::size_t size) {
  return {reinterpret_cast<const char*>(p), size};
}

// The trailer's checksum: header, then index, then the trailer's index offset and record count.
std::uint64_t structure_checksum(std::string_view header, std::string_view index,
                                 std::string_view trailer_fields) {
  return xxh64(trailer_fields, xxh64(index, xxh64(header, 0)));
}

// The trailer's fields of a pack of `size` bytes at `base`.
struct Trailer {
  std::uint64_t index_offset = 0;
  std::uint64_t count = 0;
  std::uint64_t checksum = 0;
};

Trailer trailer_of(const unsigned char* base, std::size_t size) {
  const unsigned char* trailer = base + size - k_pack_trailer_size;
  return {read_u64(trailer), read_u64(trailer + 8), read_u64(trailer + 16)};
}

// Whether the trailer describes an index that lies between the header and the trailer.
bool index_in_bounds(const Trailer& trailer, std::size_t size) {
  const std::size_t index_end = size - k_pack_trailer_size;
  if (trailer.index_offset < k_pack_header_size || trailer.index_offset > index_end) {
    return false;
  }
  const std::uint64_t index_bytes = index_end - trailer.index_offset;
  return index_bytes % k_pack_index_entry_size == 0 &&
         index_bytes / k_pack_index_entry_size == trailer.count;
}

// Every index entry's record lies between the header and the index, and the keys ascend strictly.
bool entries_sound(const unsigned char* index, std::size_t count, std::uint64_t index_offset) {
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned char* entry = index + i * k_pack_index_entry_size;
    const std::uint64_t offset = read_u64(entry + k_key_size);
    const std::uint64_t length = read_u64(entry + k_key_size + 8);
    if (offset < k_pack_header_size || offset > index_offset ||
        index_offset - offset < k_pack_record_header_size ||
        index_offset - offset - k_pack_record_header_size < length) {
      return false;
    }
    if (i > 0 && std::memcmp(entry - k_pack_index_entry_size, entry, k_key_size) >= 0) {
      return false;
    }
  }
  return true;
}

// The structural checks of a mapped file, header magic and size already checked.
bool structure_sound(const unsigned char* base, std::size_t size) {
  if (read_u32(base + 12) != 0 ||
      bytes_of(base + size - k_trailer_magic.size(), k_trailer_magic.size()) != k_trailer_magic) {
    return false;
  }
  const Trailer trailer = trailer_of(base, size);
  if (!index_in_bounds(trailer, size)) {
    return false;
  }
  const std::size_t index_size = trailer.count * k_pack_index_entry_size;
  const std::uint64_t checksum = structure_checksum(
      bytes_of(base, k_pack_header_size), bytes_of(base + trailer.index_offset, index_size),
      bytes_of(base + size - k_pack_trailer_size, 16));
  return checksum == trailer.checksum &&
         entries_sound(base + trailer.index_offset, trailer.count, trailer.index_offset);
}

MappedPack::Opening failed(PackOpenStatus status, int error = 0) {
  MappedPack::Opening opening;
  opening.status = status;
  opening.error = error;
  return opening;
}

} // namespace

std::uintmax_t encoded_pack_size(std::size_t count, std::uintmax_t value_bytes) {
  return k_pack_header_size +
         count * std::uintmax_t{k_pack_record_header_size + k_pack_index_entry_size} + value_bytes +
         k_pack_trailer_size;
}

std::string pack_header(std::uint64_t stamp) {
  std::string header(k_header_magic);
  append_u32(header, k_pack_format_version);
  append_u32(header, 0);
  append_u64(header, stamp);
  return header;
}

void append_record_header(std::string& out, const Sha256Digest& key, std::string_view value) {
  append_key(out, key);
  append_u64(out, value.size());
  append_u64(out, xxh64(value));
}

std::string pack_index_and_trailer(std::string_view header, std::span<const PackIndexEntry> index,
                                   std::uint64_t index_offset) {
  std::string out;
  out.reserve(index.size() * k_pack_index_entry_size + k_pack_trailer_size);
  for (const PackIndexEntry& entry : index) {
    append_key(out, entry.key);
    append_u64(out, entry.offset);
    append_u64(out, entry.size);
  }
  const std::size_t index_bytes = out.size();
  append_u64(out, index_offset);
  append_u64(out, index.size());
  const std::string_view all(out);
  const std::uint64_t checksum =
      structure_checksum(header, all.substr(0, index_bytes), all.substr(index_bytes, 16));
  append_u64(out, checksum);
  out += k_trailer_magic;
  return out;
}

PackPieces encode_pack_pieces(std::uint64_t stamp, std::span<const PackEntry> entries) {
  PackPieces pack;
  std::string& framing = pack.framing;
  framing = pack_header(stamp);
  framing.reserve(k_pack_header_size + entries.size() * k_pack_record_header_size +
                  entries.size() * k_pack_index_entry_size + k_pack_trailer_size);
  // Each record's header goes to `framing`, its value stays where it is; the index (with the
  // records' offsets in the file) follows the last record.
  std::vector<PackIndexEntry> index;
  index.reserve(entries.size());
  std::uint64_t offset = k_pack_header_size;
  for (const PackEntry& entry : entries) {
    index.push_back({entry.key, offset, entry.value.size()});
    append_record_header(framing, entry.key, entry.value);
    offset += k_pack_record_header_size + entry.value.size();
  }
  const std::size_t index_at = framing.size();
  framing += pack_index_and_trailer(std::string_view(framing).substr(0, k_pack_header_size), index,
                                    offset);
  // The views, now that `framing` no longer grows.
  const std::string_view all(framing);
  pack.pieces.reserve(2 * entries.size() + 2);
  pack.pieces.push_back(all.substr(0, k_pack_header_size));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    pack.pieces.push_back(
        all.substr(k_pack_header_size + i * k_pack_record_header_size, k_pack_record_header_size));
    pack.pieces.push_back(entries[i].value);
  }
  pack.pieces.push_back(all.substr(index_at));
  pack.size = offset + (framing.size() - index_at);
  return pack;
}

bool write_pieces(int fd, std::span<const std::string_view> pieces) {
  std::vector<iovec> vectors;
  vectors.reserve(std::min<std::size_t>(pieces.size(), IOV_MAX));
  std::size_t next = 0; // the first piece not yet handed to writev
  while (next < pieces.size() || !vectors.empty()) {
    while (next < pieces.size() && vectors.size() < static_cast<std::size_t>(IOV_MAX)) {
      const std::string_view piece = pieces[next++];
      if (!piece.empty()) {
        vectors.push_back(iovec{const_cast<char*>(piece.data()), piece.size()});
      }
    }
    if (vectors.empty()) {
      break;
    }
    const ssize_t n = ::writev(fd, vectors.data(), static_cast<int>(vectors.size()));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      if (n == 0) {
        errno = EIO; // nothing written and no error said: not a stale errno
      }
      return false;
    }
    // Drop what was written: whole vectors, then the front of a partly written one.
    auto left = static_cast<std::size_t>(n);
    std::size_t done = 0;
    while (done < vectors.size() && left >= vectors[done].iov_len) {
      left -= vectors[done].iov_len;
      ++done;
    }
    vectors.erase(vectors.begin(), vectors.begin() + static_cast<std::ptrdiff_t>(done));
    if (left > 0) {
      vectors.front().iov_base = static_cast<char*>(vectors.front().iov_base) + left;
      vectors.front().iov_len -= left;
    }
  }
  return true;
}

std::string encode_pack(std::uint64_t stamp, std::span<const PackEntry> entries) {
  const PackPieces pack = encode_pack_pieces(stamp, entries);
  std::string out;
  out.reserve(static_cast<std::size_t>(pack.size));
  for (const std::string_view piece : pack.pieces) {
    out += piece;
  }
  return out;
}

void reseal_pack(std::string& pack) {
  if (pack.size() < k_pack_header_size + k_pack_trailer_size) {
    return;
  }
  const auto* base = reinterpret_cast<const unsigned char*>(pack.data());
  const Trailer trailer = trailer_of(base, pack.size());
  if (!index_in_bounds(trailer, pack.size())) {
    return;
  }
  const std::string_view text(pack);
  const std::uint64_t checksum =
      structure_checksum(text.substr(0, k_pack_header_size),
                         text.substr(trailer.index_offset, trailer.count * k_pack_index_entry_size),
                         text.substr(pack.size() - k_pack_trailer_size, 16));
  std::string encoded;
  append_u64(encoded, checksum);
  pack.replace(pack.size() - k_pack_trailer_size + 16, 8, encoded);
}

bool is_pack_name(std::string_view name) {
  constexpr std::string_view prefix = "pack-";
  constexpr std::string_view suffix = ".bin";
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
      !name.ends_with(suffix)) {
    return false;
  }
  const std::string_view unique = name.substr(prefix.size(), name.size() - 9);
  return std::all_of(unique.begin(), unique.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

MappedPack::~MappedPack() {
  if (m_base != nullptr) {
    ::munmap(const_cast<unsigned char*>(m_base), m_size);
  }
}

MappedPack::MappedPack(MappedPack&& other) noexcept
    : m_base(std::exchange(other.m_base, nullptr)), m_size(std::exchange(other.m_size, 0)),
      m_index_offset(other.m_index_offset), m_count(std::exchange(other.m_count, 0)),
      m_stamp(other.m_stamp), m_name(std::move(other.m_name)), m_device(other.m_device),
      m_inode(other.m_inode) {}

MappedPack& MappedPack::operator=(MappedPack&& other) noexcept {
  if (this != &other) {
    MappedPack old(std::move(*this));
    m_base = std::exchange(other.m_base, nullptr);
    m_size = std::exchange(other.m_size, 0);
    m_index_offset = other.m_index_offset;
    m_count = std::exchange(other.m_count, 0);
    m_stamp = other.m_stamp;
    m_name = std::move(other.m_name);
    m_device = other.m_device;
    m_inode = other.m_inode;
  }
  return *this;
}

MappedPack::Opening MappedPack::open(int directory_fd, std::string_view name,
                                     std::uintmax_t max_bytes) {
  const std::string entry(name);
  const int fd =
      ::openat(directory_fd, entry.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) {
      return failed(PackOpenStatus::vanished);
    }
    return failed(error == ELOOP ? PackOpenStatus::not_regular_file : PackOpenStatus::unreadable,
                  error);
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    return failed(PackOpenStatus::unreadable, error);
  }
  Opening opening = failed(PackOpenStatus::damaged);
  opening.device = info.st_dev;
  opening.inode = info.st_ino;
  const auto size = static_cast<std::uintmax_t>(info.st_size);
  if (!S_ISREG(info.st_mode)) {
    opening.status = PackOpenStatus::not_regular_file;
  } else if (size > max_bytes) {
    opening.status = PackOpenStatus::too_large;
  } else if (size >= k_pack_header_size + k_pack_trailer_size) {
    void* base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) {
      opening.status = PackOpenStatus::unreadable;
      opening.error = errno;
    } else {
      MappedPack& pack = opening.pack;
      pack.m_base = static_cast<const unsigned char*>(base);
      pack.m_size = size;
      pack.m_name = entry;
      pack.m_device = info.st_dev;
      pack.m_inode = info.st_ino;
      opening.status = pack.check_structure();
    }
  }
  ::close(fd); // a mapping outlives its descriptor
  if (opening.status != PackOpenStatus::valid) {
    opening.pack = MappedPack();
  }
  return opening;
}

PackOpenStatus MappedPack::check_structure() {
  if (bytes_of(m_base, k_header_magic.size()) != k_header_magic) {
    return PackOpenStatus::damaged;
  }
  if (read_u32(m_base + 8) != k_pack_format_version) {
    return PackOpenStatus::foreign_version;
  }
  if (!structure_sound(m_base, m_size)) {
    return PackOpenStatus::damaged;
  }
  const Trailer trailer = trailer_of(m_base, m_size);
  m_index_offset = trailer.index_offset;
  m_count = trailer.count;
  m_stamp = read_u64(m_base + 16);
  return PackOpenStatus::valid;
}

const unsigned char* MappedPack::index_entry(std::size_t index) const {
  return m_base + m_index_offset + index * k_pack_index_entry_size;
}

Sha256Digest MappedPack::key_at(std::size_t index) const {
  Sha256Digest key{};
  std::memcpy(key.data(), index_entry(index), k_key_size);
  return key;
}

std::optional<std::size_t> MappedPack::index_of(const Sha256Digest& key) const {
  const auto order_at = [&](std::size_t position) {
    return std::memcmp(index_entry(position), key.data(), k_key_size);
  };
  // The key, if the index holds it, is at a position in [low, high).
  std::size_t low = 0;
  std::size_t high = m_count;
  if (m_count > 0 && m_count <= std::numeric_limits<std::uint32_t>::max()) {
    // Keys are SHA-256 digests, spread evenly: a key's first four bytes, as a fraction of 2^32,
    // say about where it stands. The search starts there and gallops (steps doubling) until it
    // brackets the key: a few reads of the index close together instead of log2(count) reads
    // across all of it. However the keys lie, the answer is the binary search's below.
    const std::uint64_t leading = (std::uint64_t{key[0]} << 24) | (std::uint64_t{key[1]} << 16) |
                                  (std::uint64_t{key[2]} << 8) | std::uint64_t{key[3]};
    const auto guess = static_cast<std::size_t>((leading * m_count) >> 32); // < m_count
    // Gallop away from the guess, doubling the step, until an entry lies on the key's other side.
    std::size_t step = 1;
    if (order_at(guess) < 0) {
      low = guess + 1;
      while (guess + step < m_count && order_at(guess + step) < 0) {
        low = guess + step + 1;
        step *= 2;
      }
      high = std::min(m_count, guess + step + 1);
    } else {
      high = guess + 1;
      while (step <= guess && order_at(guess - step) > 0) {
        high = guess - step;
        step *= 2;
      }
      low = step <= guess ? guess - step : 0;
    }
  }
  while (low < high) {
    const std::size_t middle = low + (high - low) / 2;
    const int order = order_at(middle);
    if (order == 0) {
      return middle;
    }
    if (order < 0) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return std::nullopt;
}

std::optional<std::string_view> MappedPack::value_at(std::size_t index) const {
  const unsigned char* entry = index_entry(index);
  const std::uint64_t offset = read_u64(entry + k_key_size);
  const std::uint64_t length = read_u64(entry + k_key_size + 8);
  const unsigned char* record = m_base + offset; // in bounds: checked when the pack was opened
  if (std::memcmp(record, entry, k_key_size) != 0 || read_u64(record + k_key_size) != length) {
    return std::nullopt;
  }
  const std::string_view value = bytes_of(record + k_pack_record_header_size, length);
  if (xxh64(value) != read_u64(record + k_key_size + 8)) {
    return std::nullopt;
  }
  return value;
}

bool delete_pack_file(int directory_fd, std::string_view name, dev_t device, ino_t inode) {
  const std::string entry(name);
  struct stat info {};
  if (::fstatat(directory_fd, entry.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
      info.st_dev != device || info.st_ino != inode || !S_ISREG(info.st_mode)) {
    return false;
  }
  return ::unlinkat(directory_fd, entry.c_str(), 0) == 0;
}

} // namespace fib::detail
