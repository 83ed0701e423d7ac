#include "fib/util/result_cache.hpp"

#include "util/cache_pack.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/atomic_file.hpp>
#include <fib/util/file_lock.hpp>

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

namespace fib {
namespace detail {

// The records of a pack being written as entries arrive: an unnamed temporary file (O_TMPFILE)
// in `v1` that holds room for the header, then the records, and their index entries (with the
// order they were written in, so that the last of a repeated key wins).
struct WrittenRecords {
  DirectoryHandle directory;
  int fd = -1;
  std::uint64_t end = k_pack_header_size;                      // where the next record goes
  std::vector<std::pair<PackIndexEntry, std::uint64_t>> index; // entry, order written
  std::string failure; // why a write failed (the file is then given up); empty while all is well
  bool over_bound = false; // the pack would exceed the size bound: it is not kept

  WrittenRecords() = default;
  WrittenRecords(const WrittenRecords&) = delete;
  WrittenRecords& operator=(const WrittenRecords&) = delete;
  ~WrittenRecords() {
    if (fd >= 0) {
      ::close(fd);
    }
  }
};

struct ResultCacheState {
  std::filesystem::path root;      // the options' directory
  std::filesystem::path directory; // root / "v1"
  std::uintmax_t max_bytes = 0;
  pid_t opener = 0; // the process that opened the cache: the only one that refreshes packs
  std::vector<MappedPack> packs; // newest first
  // Per pack: find() handed out one of its values in this process (commit refreshes its mtime).
  std::unique_ptr<std::atomic<bool>[]> used;
  std::mutex pending_mutex;
  std::map<Sha256Digest, std::string> pending;
  // The records put_through() wrote so far, in the unnamed file of the next pack; null before the
  // first put_through() and after each commit.
  std::unique_ptr<WrittenRecords> written;
  bool cannot_write_through = false; // the unnamed file could not be made: put() instead
};

} // namespace detail

namespace {

namespace fs = std::filesystem;
using detail::MappedPack;
using detail::PackEntry;
using detail::PackIndexEntry;
using detail::PackOpenStatus;
using detail::ResultCacheState;
using detail::WrittenRecords;

constexpr std::string_view k_version_directory = "v1";
// More packs than this are merged into one at commit.
constexpr std::size_t k_most_packs = 16;
// The age after which an unlocked temporary in the cache directory is a dead commit's.
constexpr std::chrono::seconds k_abandoned_after{3600};

// A note of `code` (cache.unavailable or cache.unwritable) about `path`: what failed and why.
Diagnostic cache_note(std::string_view code, const fs::path& path, std::string_view what,
                      std::string_view reason) {
  const bool unavailable = code == codes::k_cache_unavailable;
  Diagnostic d =
      make_diagnostic(code, fmt::format("{}: {} the result cache: {}: {}; {}", path.string(),
                                        unavailable ? "cannot use" : "cannot write", what, reason,
                                        unavailable ? "this run goes on without the cache"
                                                    : "this run's new results are not kept"));
  d.file = path;
  d.hint = "set FIB_CACHE_DIR to a writable directory";
  return d;
}

// Opens `root / v1`, creating what is missing (links on the way to `root` are followed, `v1`
// itself must be a directory). Failures are notes of `code`.
Expected<DirectoryHandle> open_cache_directory(const fs::path& root, std::string_view code) {
  const fs::path path = root / k_version_directory;
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) {
    return unexpected(
        cache_note(code, path, fmt::format("cannot create {}", root.string()), ec.message()));
  }
  const int root_fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) {
    return unexpected(cache_note(code, path, "cannot open the directory", std::strerror(errno)));
  }
  const DirectoryHandle root_handle(root_fd, root);
  const std::string name(k_version_directory);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = ::openat(root_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      return DirectoryHandle(fd, path);
    }
    const int error = errno;
    if (error == ENOTDIR || error == ELOOP) {
      return unexpected(
          cache_note(code, path, "cannot open the directory", "it is a link or not a directory"));
    }
    if (error != ENOENT) {
      return unexpected(cache_note(code, path, "cannot open the directory", std::strerror(error)));
    }
    if (::mkdirat(root_fd, name.c_str(), 0777) != 0 && errno != EEXIST) {
      return unexpected(
          cache_note(code, path, "cannot create the directory", std::strerror(errno)));
    }
  }
  return unexpected(cache_note(code, path, "cannot open the directory", std::strerror(ENOENT)));
}

struct Listing {
  std::vector<std::string> names; // the entries whose name passed the filter, sorted
  int error = 0;                  // errno when the directory could not be listed
};

Listing list_names(int directory_fd, bool (*wanted)(std::string_view name)) {
  Listing listing;
  const int fd = ::openat(directory_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* directory = fd < 0 ? nullptr : ::fdopendir(fd);
  if (directory == nullptr) {
    listing.error = errno;
    if (fd >= 0) {
      ::close(fd);
    }
    return listing;
  }
  while (true) {
    errno = 0;
    const dirent* entry = ::readdir(directory);
    if (entry == nullptr) {
      listing.error = errno;
      break;
    }
    if (wanted(entry->d_name)) {
      listing.names.emplace_back(entry->d_name);
    }
  }
  ::closedir(directory);
  std::sort(listing.names.begin(), listing.names.end());
  return listing;
}

Listing list_pack_names(int directory_fd) {
  return list_names(directory_fd, &detail::is_pack_name);
}

// Maps the packs `names` of the directory, newest first (by stamp, then name). Damaged and
// too-large packs are deleted (best effort); the rest of what cannot be used is left alone.
std::vector<MappedPack> map_packs(int directory_fd, const std::vector<std::string>& names,
                                  std::uintmax_t max_bytes) {
  std::vector<MappedPack> packs;
  for (const std::string& name : names) {
    MappedPack::Opening opening = MappedPack::open(directory_fd, name, max_bytes);
    switch (opening.status) {
    case PackOpenStatus::valid:
      packs.push_back(std::move(opening.pack));
      break;
    case PackOpenStatus::damaged:
    case PackOpenStatus::too_large:
      detail::delete_pack_file(directory_fd, name, opening.device, opening.inode);
      break;
    case PackOpenStatus::vanished:
    case PackOpenStatus::not_regular_file:
    case PackOpenStatus::unreadable:
    case PackOpenStatus::foreign_version:
      break;
    }
  }
  std::sort(packs.begin(), packs.end(), [](const MappedPack& a, const MappedPack& b) {
    return a.stamp() != b.stamp() ? a.stamp() > b.stamp() : a.name() > b.name();
  });
  return packs;
}

std::uint64_t stamp_now() {
  std::timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(now.tv_nsec);
}

// `pack-<pid>-<time>-<random>.bin`: unique across processes (pid), commits of one process
// (time) and hosts sharing the directory (64 random bits). Fixed-width hex digits, so that one
// process's names sort in the order they were made.
std::string unique_pack_name() {
  std::random_device random;
  const std::uint64_t noise = (std::uint64_t{random()} << 32) ^ random();
  return fmt::format("pack-{:08x}-{:016x}-{:016x}.bin", static_cast<std::uint32_t>(::getpid()),
                     stamp_now(), noise);
}

// An unnamed temporary file (O_TMPFILE) in `directory`, open for writing; -1 when the file system
// cannot make one.
int open_unnamed(const DirectoryHandle& directory) {
#if defined(O_TMPFILE)
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return ::openat(directory.fd(), ".", O_TMPFILE | O_WRONLY | O_CLOEXEC,
                  static_cast<mode_t>(0644 & ~mask));
#else
  (void)directory;
  return -1;
#endif
}

// Gives the complete unnamed file `fd` the name `name` in `directory` (through /proc/self/fd).
bool link_unnamed(int fd, const DirectoryHandle& directory, const std::string& name) {
  detail::inject_fault_before_rename();
  const std::string self = fmt::format("/proc/self/fd/{}", fd);
  return ::linkat(AT_FDCWD, self.c_str(), directory.fd(), name.c_str(), AT_SYMLINK_FOLLOW) == 0;
}

// Writes `pieces` as a new file `name` in `directory`: an unnamed temporary linked into place when
// whole, so that a kill at any moment leaves either nothing or the whole pack, never a named
// temporary. False when the file system cannot do that (the caller then takes the
// named-temporary path) or the write failed before anything was named.
bool write_unnamed_then_link(const DirectoryHandle& directory, const std::string& name,
                             std::span<const std::string_view> pieces) {
  const int fd = open_unnamed(directory);
  if (fd < 0) {
    return false;
  }
  const bool ok = detail::write_pieces(fd, pieces) && link_unnamed(fd, directory, name);
  ::close(fd);
  return ok;
}

// The unnamed file of a pack written record by record (put_through), with room for its header;
// null when the file system cannot make one or the directory cannot be opened (put() is used
// then, and commit() says what is wrong with the directory).
std::unique_ptr<WrittenRecords> start_written_records(const fs::path& root) {
  // The file is linked at the commit through /proc/self/fd: without it, put() is the way.
  if (::access("/proc/self/fd", X_OK) != 0) {
    return nullptr;
  }
  auto directory = open_cache_directory(root, codes::k_cache_unwritable);
  if (!directory) {
    return nullptr;
  }
  auto records = std::make_unique<WrittenRecords>();
  records->fd = open_unnamed(*directory);
  if (records->fd < 0) {
    return nullptr;
  }
  records->directory = std::move(*directory);
  if (::lseek(records->fd, static_cast<off_t>(detail::k_pack_header_size), SEEK_SET) < 0) {
    records->failure = std::strerror(errno);
  }
  return records;
}

using EntryView = std::pair<Sha256Digest, std::string_view>;

// Appends `entries` as records to `records`' file (nothing once a write failed there, or once the
// records alone would make a pack above `max_bytes`: such a pack is not kept, so nothing more is
// written for it).
void write_records(WrittenRecords& records, std::span<const EntryView> entries,
                   std::uintmax_t max_bytes) {
  if (!records.failure.empty() || records.over_bound || entries.empty()) {
    return;
  }
  std::uintmax_t adding = 0;
  for (const auto& [key, value] : entries) {
    adding += detail::k_pack_record_header_size + value.size();
  }
  if (records.end + adding + detail::k_pack_trailer_size > max_bytes) {
    records.over_bound = true;
    return;
  }
  std::string framing;
  framing.reserve(entries.size() * detail::k_pack_record_header_size);
  for (const auto& [key, value] : entries) {
    detail::append_record_header(framing, key, value);
  }
  std::vector<std::string_view> pieces;
  pieces.reserve(2 * entries.size());
  const std::string_view headers(framing);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    pieces.push_back(
        headers.substr(i * detail::k_pack_record_header_size, detail::k_pack_record_header_size));
    pieces.push_back(entries[i].second);
  }
  if (!detail::write_pieces(records.fd, pieces)) {
    records.failure = std::strerror(errno);
    return;
  }
  for (const auto& [key, value] : entries) {
    records.index.push_back({{key, records.end, value.size()}, records.index.size()});
    records.end += detail::k_pack_record_header_size + value.size();
  }
}

// Ends the pack of `records` with the `pending` entries (written after the others, so that for a
// key given to both put() wins): the index of the last record of each key, the trailer, then the
// header, and links the file under a new name. nullopt: nothing was linked because the pack
// would exceed `max_bytes`.
Expected<std::optional<std::string>>
finish_written_records(WrittenRecords& records, const std::map<Sha256Digest, std::string>& pending,
                       std::uintmax_t max_bytes) {
  std::vector<EntryView> rest;
  rest.reserve(pending.size());
  for (const auto& [key, value] : pending) {
    rest.emplace_back(key, value);
  }
  write_records(records, rest, max_bytes);
  const auto failed = [](std::string_view what) {
    return unexpected(make_diagnostic(codes::k_io_write, std::string(what)));
  };
  if (!records.failure.empty()) {
    return failed(records.failure);
  }
  if (records.over_bound) {
    return std::optional<std::string>();
  }
  std::sort(records.index.begin(), records.index.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.key, a.second) < std::tie(b.first.key, b.second);
  });
  std::vector<detail::PackIndexEntry> index;
  index.reserve(records.index.size());
  for (std::size_t i = 0; i < records.index.size(); ++i) {
    const bool last_of_key = i + 1 == records.index.size() ||
                             records.index[i + 1].first.key != records.index[i].first.key;
    if (last_of_key) {
      index.push_back(records.index[i].first);
    }
  }
  const std::uintmax_t size =
      records.end + index.size() * detail::k_pack_index_entry_size + detail::k_pack_trailer_size;
  if (size > max_bytes) {
    return std::optional<std::string>();
  }
  const std::string header = detail::pack_header(stamp_now());
  const std::string tail = detail::pack_index_and_trailer(header, index, records.end);
  const std::string_view tail_piece(tail);
  if (!detail::write_pieces(records.fd, std::span(&tail_piece, 1))) {
    return failed(std::strerror(errno));
  }
  for (std::size_t written = 0; written < header.size();) {
    const ssize_t n = ::pwrite(records.fd, header.data() + written, header.size() - written,
                               static_cast<off_t>(written));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return failed(n == 0 ? "nothing written" : std::strerror(errno));
    }
    written += static_cast<std::size_t>(n);
  }
  std::string name = unique_pack_name();
  if (!link_unnamed(records.fd, records.directory, name)) {
    return failed(std::strerror(errno));
  }
  return std::optional<std::string>(std::move(name));
}

// Writes `entries` (sorted by key) as a new pack; its name, or the error. The values are written
// from where they are (no copy of the pack is made in memory).
Expected<std::string> write_pack(const DirectoryHandle& directory, std::uint64_t stamp,
                                 std::span<const PackEntry> entries) {
  const detail::PackPieces pack = detail::encode_pack_pieces(stamp, entries);
  std::string name = unique_pack_name();
  if (write_unnamed_then_link(directory, name, pack.pieces)) {
    return name;
  }
  std::string content;
  content.reserve(static_cast<std::size_t>(pack.size));
  for (const std::string_view piece : pack.pieces) {
    content += piece;
  }
  // Not synced: a pack torn by a power loss fails its checks and is deleted, like any damage.
  FIB_TRY(write_file_atomically_in(directory, name, content, Overwrite::forbidden, std::nullopt,
                                   Durability::unsynced));
  return name;
}

struct PackFile {
  std::string name;
  std::uintmax_t size = 0;
  std::timespec mtime{};
};

// The regular files named like packs, least recently used (oldest mtime, then name) first.
std::vector<PackFile> pack_files_by_use(int directory_fd) {
  std::vector<PackFile> files;
  for (std::string& name : list_pack_names(directory_fd).names) {
    struct stat info {};
    if (::fstatat(directory_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(info.st_mode)) {
      files.push_back({std::move(name), static_cast<std::uintmax_t>(info.st_size), info.st_mtim});
    }
  }
  std::sort(files.begin(), files.end(), [](const PackFile& a, const PackFile& b) {
    return std::tie(a.mtime.tv_sec, a.mtime.tv_nsec, a.name) <
           std::tie(b.mtime.tv_sec, b.mtime.tv_nsec, b.name);
  });
  return files;
}

// Removes the temporaries of commits that died before their pack took its name (atomic_file.hpp
// names them `.fib-XXXXXX`) once they are older than k_abandoned_after and unlocked. The lock
// test alone suffices for this build's writers (they lock a temporary before they use it,
// atomic_file.hpp), but the cache directory is shared by every fib build of the user, and an
// earlier build's writer left its fresh temporary unlocked for an instant; an hour-old temporary
// is certainly no live write's.
void remove_abandoned_temporaries(int directory_fd) {
  const std::time_t cutoff = std::time(nullptr) - k_abandoned_after.count();
  for (const std::string& name : list_names(directory_fd, &is_atomic_write_temporary).names) {
    struct stat named {};
    if (::fstatat(directory_fd, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(named.st_mode) || named.st_mtim.tv_sec >= cutoff) {
      continue;
    }
    const int fd = ::openat(directory_fd, name.c_str(),
                            O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
      continue;
    }
    struct stat opened {};
    if (::fstat(fd, &opened) == 0 && opened.st_dev == named.st_dev &&
        opened.st_ino == named.st_ino && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      ::unlinkat(directory_fd, name.c_str(), 0);
    }
    ::close(fd);
  }
}

// Deletes the least recently used packs, never `newest`, until the packs fit in `max_bytes`.
void evict_least_recently_used(int directory_fd, std::string_view newest,
                               std::uintmax_t max_bytes) {
  const std::vector<PackFile> files = pack_files_by_use(directory_fd);
  std::uintmax_t total = 0;
  for (const PackFile& file : files) {
    total += file.size;
  }
  for (const PackFile& file : files) {
    if (total <= max_bytes) {
      break;
    }
    if (file.name != newest) {
      ::unlinkat(directory_fd, file.name.c_str(), 0); // gone either way, unless read-only
      total -= file.size;
    }
  }
}

// When the directory holds more than k_most_packs packs, merges them into one (newest wins per
// key; a damaged newest record drops the key rather than bring back an older value), written
// atomically, then deletes the merged packs. Skipped when the merged pack would exceed the bound.
void compact(const DirectoryHandle& directory, std::uintmax_t max_bytes) {
  const std::vector<MappedPack> packs =
      map_packs(directory.fd(), list_pack_names(directory.fd()).names, max_bytes);
  if (packs.size() <= k_most_packs) {
    return;
  }
  std::map<Sha256Digest, std::optional<std::string_view>> merged;
  for (const MappedPack& pack : packs) {
    for (std::size_t i = 0; i < pack.record_count(); ++i) {
      const Sha256Digest key = pack.key_at(i);
      if (!merged.contains(key)) {
        merged.emplace(key, pack.value_at(i));
      }
    }
  }
  std::vector<PackEntry> entries;
  entries.reserve(merged.size());
  std::uintmax_t value_bytes = 0;
  for (const auto& [key, value] : merged) {
    if (value) {
      entries.push_back({key, *value});
      value_bytes += value->size();
    }
  }
  if (detail::encoded_pack_size(entries.size(), value_bytes) > max_bytes ||
      !write_pack(directory, packs.front().stamp(), entries)) {
    return;
  }
  for (const MappedPack& pack : packs) {
    detail::delete_pack_file(directory.fd(), pack.name(), pack.device(), pack.inode());
  }
}

// Refreshes the mtime of the packs find() used, in the process that opened the cache only.
void refresh_used_packs(ResultCacheState& state, int directory_fd) {
  if (::getpid() != state.opener) {
    return;
  }
  const std::timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}}; // atime kept, mtime now
  for (std::size_t i = 0; i < state.packs.size(); ++i) {
    if (state.used[i].exchange(false, std::memory_order_relaxed)) {
      ::utimensat(directory_fd, state.packs[i].name().c_str(), times, AT_SYMLINK_NOFOLLOW);
    }
  }
}

// The pending entries as a new pack in `directory`; nullopt when it would exceed `max_bytes`.
Expected<std::optional<std::string>>
write_pending(const DirectoryHandle& directory, const std::map<Sha256Digest, std::string>& pending,
              std::uintmax_t max_bytes) {
  std::vector<PackEntry> entries;
  entries.reserve(pending.size());
  std::uintmax_t value_bytes = 0;
  for (const auto& [key, value] : pending) {
    entries.push_back({key, value});
    value_bytes += value.size();
  }
  if (detail::encoded_pack_size(entries.size(), value_bytes) > max_bytes) {
    return std::optional<std::string>();
  }
  FIB_TRY_ASSIGN(std::string name, write_pack(directory, stamp_now(), entries));
  return std::optional<std::string>(std::move(name));
}

void commit_pending(ResultCacheState& state, DiagnosticSink& notes) {
  std::map<Sha256Digest, std::string> pending;
  {
    const std::lock_guard lock(state.pending_mutex);
    pending.swap(state.pending);
  }
  // The records put_through() wrote are this process's: a child made by fork() leaves its
  // parent's file alone (its copy of the descriptor is closed, nothing is linked).
  std::unique_ptr<WrittenRecords> written = std::move(state.written);
  if (written != nullptr && ::getpid() != state.opener) {
    written.reset();
  }
  auto directory = open_cache_directory(state.root, codes::k_cache_unwritable);
  if (!directory) {
    if (!pending.empty() || written != nullptr) {
      notes.report(std::move(directory).error());
    }
    return;
  }
  refresh_used_packs(state, directory->fd());
  if (pending.empty() && written == nullptr) {
    return;
  }
  if (written != nullptr && !written->failure.empty()) {
    // The records written through are lost; the put() entries still get a pack of their own.
    notes.report(cache_note(codes::k_cache_unwritable, state.directory, "cannot write a new pack",
                            written->failure));
    written.reset();
    if (pending.empty()) {
      return;
    }
  }
  const auto outcome = written != nullptr
                           ? finish_written_records(*written, pending, state.max_bytes)
                           : write_pending(*directory, pending, state.max_bytes);
  if (!outcome) {
    notes.report(cache_note(codes::k_cache_unwritable, state.directory, "cannot write a new pack",
                            outcome.error().message));
    return;
  }
  if (!*outcome) {
    return; // a pack above the bound would be deleted on the next open: not worth writing
  }
  const std::string& name = **outcome;
  written.reset();
  pending.clear();
  // Upkeep by one process at a time; when another holds the lock it is doing this very work.
  const auto lock = lock_directory(*directory, std::chrono::milliseconds{0});
  if (!lock) {
    return;
  }
  remove_abandoned_temporaries(directory->fd());
  evict_least_recently_used(directory->fd(), name, state.max_bytes);
  compact(*directory, state.max_bytes);
}

} // namespace

ResultCache::ResultCache() = default;
ResultCache::ResultCache(std::unique_ptr<detail::ResultCacheState> state)
    : m_state(std::move(state)) {}
ResultCache::~ResultCache() = default;
ResultCache::ResultCache(ResultCache&& other) noexcept = default;
ResultCache& ResultCache::operator=(ResultCache&& other) noexcept = default;

ResultCache ResultCache::open(const ResultCacheOptions& options, DiagnosticSink& notes) {
  auto directory = open_cache_directory(options.directory, codes::k_cache_unavailable);
  if (!directory) {
    notes.report(std::move(directory).error());
    return ResultCache();
  }
  const Listing listing = list_pack_names(directory->fd());
  if (listing.error != 0) {
    notes.report(cache_note(codes::k_cache_unavailable, directory->path(),
                            "cannot list the directory", std::strerror(listing.error)));
    return ResultCache();
  }
  auto state = std::make_unique<ResultCacheState>();
  state->root = options.directory;
  state->directory = directory->path();
  state->max_bytes = options.max_bytes;
  state->opener = ::getpid();
  state->packs = map_packs(directory->fd(), listing.names, options.max_bytes);
  state->used = std::make_unique<std::atomic<bool>[]>(state->packs.size());
  return ResultCache(std::move(state));
}

bool ResultCache::enabled() const {
  return m_state != nullptr;
}

bool ResultCache::holds_entries() const {
  return m_state != nullptr && !m_state->packs.empty();
}

const fs::path& ResultCache::directory() const {
  static const fs::path k_none;
  return m_state ? m_state->directory : k_none;
}

std::optional<std::string_view> ResultCache::find(const Sha256Digest& key) const {
  if (!m_state) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < m_state->packs.size(); ++i) {
    const MappedPack& pack = m_state->packs[i];
    const auto position = pack.index_of(key);
    if (!position) {
      continue;
    }
    const auto value = pack.value_at(*position);
    // Read before written: a hot pack's flag is written once, not on every hit.
    if (value && !m_state->used[i].load(std::memory_order_relaxed)) {
      m_state->used[i].store(true, std::memory_order_relaxed);
    }
    return value; // the newest pack holding the key decides, even when its record is damaged
  }
  return std::nullopt;
}

void ResultCache::put(const Sha256Digest& key, std::string value) {
  if (!m_state) {
    return;
  }
  const std::lock_guard lock(m_state->pending_mutex);
  m_state->pending.insert_or_assign(key, std::move(value));
}

void ResultCache::put_through(std::span<const std::pair<Sha256Digest, std::string_view>> entries) {
  if (!m_state || entries.empty()) {
    return;
  }
  ResultCacheState& state = *m_state;
  // Only the process that opened the cache writes through: a child made by fork() shares the
  // parent's file (and its offset) and keeps its entries as put() does.
  const bool opener = ::getpid() == state.opener;
  if (opener && state.written == nullptr && !state.cannot_write_through) {
    state.written = start_written_records(state.root);
    state.cannot_write_through = state.written == nullptr;
  }
  if (!opener || state.written == nullptr) {
    for (const auto& [key, value] : entries) {
      put(key, std::string(value));
    }
    return;
  }
  write_records(*state.written, entries, state.max_bytes);
}

std::map<Sha256Digest, std::string> ResultCache::take_pending() {
  std::map<Sha256Digest, std::string> out;
  if (!m_state) {
    return out;
  }
  const std::lock_guard lock(m_state->pending_mutex);
  out.swap(m_state->pending);
  return out;
}

void ResultCache::disown_inherited_pending() {
  if (!m_state) {
    return;
  }
  // Kept reachable from a static so that leak checkers do not count them. A swap re-points the
  // root node only: one page of the parent's is copied, not one per entry.
  using Entries = std::map<Sha256Digest, std::string>;
  static auto* const set_aside = new std::vector<std::unique_ptr<Entries>>();
  const std::lock_guard lock(m_state->pending_mutex);
  if (m_state->pending.empty()) {
    return;
  }
  auto inherited = std::make_unique<Entries>();
  inherited->swap(m_state->pending);
  set_aside->push_back(std::move(inherited));
}

std::vector<std::size_t> ResultCache::used_packs() const {
  std::vector<std::size_t> out;
  if (!m_state) {
    return out;
  }
  for (std::size_t i = 0; i < m_state->packs.size(); ++i) {
    if (m_state->used[i].load(std::memory_order_relaxed)) {
      out.push_back(i);
    }
  }
  return out;
}

void ResultCache::mark_used(const std::vector<std::size_t>& packs) {
  if (!m_state) {
    return;
  }
  for (const std::size_t i : packs) {
    if (i < m_state->packs.size()) {
      m_state->used[i].store(true, std::memory_order_relaxed);
    }
  }
}

void ResultCache::commit(DiagnosticSink& notes) {
  if (!m_state) {
    return;
  }
  try {
    commit_pending(*m_state, notes);
  } catch (const std::exception& error) { // out of memory building the pack
    notes.report(cache_note(codes::k_cache_unwritable, m_state->directory,
                            "cannot write a new pack", error.what()));
  }
}

} // namespace fib
