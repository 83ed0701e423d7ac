#pragma once
// The pack file format of the result cache (include/fib/util/result_cache.hpp; the layout is
// documented in docs/cache.md, "Storage"): encoding a pack, and reading one through a read-only
// memory map after checking its whole structure. All integers are little-endian.
//
//   header   "fibcache"  u32 format version (1)  u32 zero  u64 stamp
//   records  key[32]  u64 value length  u64 XXH64(value)  value bytes      (one per entry)
//   index    key[32]  u64 record offset  u64 value length                  (sorted by key)
//   trailer  u64 index offset  u64 record count  u64 checksum  "fibindex"
//
// The trailer's checksum covers the header, the index and the trailer's first two fields, so
// any damaged byte outside the values makes the whole pack fail to open; each value has its own
// checksum, checked when it is read. The stamp (nanoseconds since the epoch when the pack was
// written; for a merged pack, the newest stamp among the merged ones) orders the packs for
// "newest wins".

#include <fib/util/sha256.hpp>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fib::detail {

// --- Interface ---

inline constexpr std::uint32_t k_pack_format_version = 1;
inline constexpr std::size_t k_pack_header_size = 24;
inline constexpr std::size_t k_pack_record_header_size = 48;
inline constexpr std::size_t k_pack_index_entry_size = 48;
inline constexpr std::size_t k_pack_trailer_size = 32;

struct PackEntry {
  Sha256Digest key{};
  std::string_view value;
};

// The size of the pack encode_pack would produce for `value_bytes` bytes of values in `count`
// entries.
std::uintmax_t encoded_pack_size(std::size_t count, std::uintmax_t value_bytes);

// One entry of a pack's index: a record's key, offset in the pack and value length.
struct PackIndexEntry {
  Sha256Digest key{};
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// The parts of a pack, for a writer that makes it piece by piece: the header (k_pack_header_size
// bytes), a record's header (k_pack_record_header_size bytes, its value follows it), and the index
// and trailer that end a pack whose records end at `index_offset`. `index` must be sorted by key
// without repeats; the trailer's checksum covers `header`, so it must be the pack's.
std::string pack_header(std::uint64_t stamp);
void append_record_header(std::string& out, const Sha256Digest& key, std::string_view value);
std::string pack_index_and_trailer(std::string_view header, std::span<const PackIndexEntry> index,
                                   std::uint64_t index_offset);

// A pack as the pieces of its bytes, in file order, without a copy of the values: views into
// `framing` (the header, each record's header, the index and the trailer, back to back) and into
// the entries' values. Valid while `entries`' values are.
struct PackPieces {
  std::string framing;
  std::vector<std::string_view> pieces;
  std::uintmax_t size = 0; // the pieces' total size
};

// Encodes a pack. `entries` must be sorted by key, without repeats.
PackPieces encode_pack_pieces(std::uint64_t stamp, std::span<const PackEntry> entries);
// Writes all of `pieces` to `fd` at its offset, in as few writev() calls as can be (IOV_MAX
// pieces each, partial writes resumed); false when one fails (errno says why).
bool write_pieces(int fd, std::span<const std::string_view> pieces);

// The same pack as one string (encode_pack_pieces' pieces joined).
std::string encode_pack(std::uint64_t stamp, std::span<const PackEntry> entries);

// Recomputes the trailer's checksum of an encoded (and then edited) pack. For tests, which use it
// to make damage that only the structure's bounds checks can catch.
void reseal_pack(std::string& pack);

// True for the names of pack files: `pack-` + letters, digits, `-` or `_` + `.bin`.
bool is_pack_name(std::string_view name);

// How opening a pack went.
enum class PackOpenStatus {
  valid,            // mapped and structurally sound
  vanished,         // no such entry (another process deleted it after it was listed)
  not_regular_file, // a link, a directory, a FIFO, ...: never opened for reading, never deleted
  unreadable,       // open, stat or mmap failed (permissions, ...): left alone
  foreign_version,  // a sound header with another format version: left alone
  too_large,        // larger than the cache's size bound: deleted like a damaged pack
  damaged,          // any structural check failed (empty or truncated files included)
};

// One pack, mapped read-only. Move-only; unmapped when destroyed. The mapping stays valid after
// the file is deleted (POSIX) and is inherited by a child process after fork().
class MappedPack {
public:
  MappedPack() = default;
  ~MappedPack();
  MappedPack(MappedPack&& other) noexcept;
  MappedPack& operator=(MappedPack&& other) noexcept;
  MappedPack(const MappedPack&) = delete;
  MappedPack& operator=(const MappedPack&) = delete;

  struct Opening;
  // Opens `name` in the directory `directory_fd` (O_NOFOLLOW|O_NONBLOCK, then fstat: a link, a
  // FIFO or a device is never read from), maps it and checks its structure: size, magic, version,
  // trailer, index bounds, index checksum, strictly ascending keys. Files larger than `max_bytes`
  // are not mapped.
  static Opening open(int directory_fd, std::string_view name, std::uintmax_t max_bytes);

  const std::string& name() const { return m_name; }
  std::uint64_t stamp() const { return m_stamp; }
  std::uintmax_t size() const { return m_size; }
  // The file's identity when it was opened, so that a deletion by name removes that file only.
  dev_t device() const { return m_device; }
  ino_t inode() const { return m_inode; }

  std::size_t record_count() const { return m_count; }
  Sha256Digest key_at(std::size_t index) const;
  // The position of `key` in the index: a search that starts where an evenly spread key would
  // stand, then halves (keys are SHA-256 digests).
  std::optional<std::size_t> index_of(const Sha256Digest& key) const;
  // The value of the record at `index`, or nullopt when the record is damaged (its key or length
  // disagrees with the index, or its checksum with its bytes).
  std::optional<std::string_view> value_at(std::size_t index) const;

private:
  // The checks after the header magic, on a fresh mapping; records the trailer's fields.
  PackOpenStatus check_structure();
  const unsigned char* index_entry(std::size_t index) const;

  const unsigned char* m_base = nullptr;
  std::size_t m_size = 0;
  std::size_t m_index_offset = 0;
  std::size_t m_count = 0;
  std::uint64_t m_stamp = 0;
  std::string m_name;
  dev_t m_device = 0;
  ino_t m_inode = 0;
};

struct MappedPack::Opening {
  PackOpenStatus status = PackOpenStatus::damaged;
  int error = 0;    // errno for `unreadable`
  dev_t device = 0; // the file's identity, once fstat succeeded
  ino_t inode = 0;
  MappedPack pack; // mapped when `valid`
};

// Deletes `name` in `directory_fd` when it is still the file (device, inode) that was opened;
// best effort (a read-only directory keeps it). True when it was deleted.
bool delete_pack_file(int directory_fd, std::string_view name, dev_t device, ino_t inode);

} // namespace fib::detail
