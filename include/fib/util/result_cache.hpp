#pragma once
// A persistent cache of per-file results, kept between fib runs: values (opaque bytes) stored under
// SHA-256 keys the caller computes. Storage, integrity checks, the size bound and how several fib
// processes share one cache: docs/cache.md, "Storage".
//
// In short: the cache lives in `<directory>/v1` as immutable pack files, each written whole and
// atomically by one commit(); find() binary-searches the packs' sorted indexes in read-only
// memory maps (nothing is read into memory up front) and checks each value's checksum before
// handing it out. Anything damaged or unexpected in the directory is never trusted: a damaged
// pack is ignored (and deleted when possible), a damaged value reads as absent. The cache can
// only ever cost a recomputation, never a wrong or failed run: every problem is at most one note.

#include <fib/base/diagnostic.hpp>
#include <fib/util/sha256.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fib {

namespace detail {
struct ResultCacheState; // the open cache's maps and pending entries (result_cache.cpp)
} // namespace detail

// --- Interface ---

struct ResultCacheOptions {
  // The cache root; fib keeps its files in `directory / "v1"`. Created when missing (links on the
  // way are followed: a root that is a link to a directory is the user's choice).
  std::filesystem::path directory;
  // The bound on the packs' total size. A run's new entries that alone would exceed it are not
  // kept; after each commit the least recently used packs are deleted until the packs fit.
  std::uintmax_t max_bytes = std::uintmax_t{256} << 20;
};

class ResultCache {
public:
  // A disabled cache: finds nothing, keeps nothing, commit does nothing.
  ResultCache();
  // Opens the cache (creating `directory/v1` if needed) and maps the packs there. Never fails: a
  // directory that cannot be created or read gives ONE note `cache.unavailable` (the path, the OS
  // reason, and that the run goes on without the cache) and a disabled cache. Damaged packs are
  // deleted (when the directory allows it); packs that are not regular files, have another
  // format version or cannot be opened are left alone and not used.
  static ResultCache open(const ResultCacheOptions& options, DiagnosticSink& notes);

  ~ResultCache(); // does not commit
  ResultCache(ResultCache&& other) noexcept;
  ResultCache& operator=(ResultCache&& other) noexcept;
  ResultCache(const ResultCache&) = delete;
  ResultCache& operator=(const ResultCache&) = delete;

  bool enabled() const;
  // Whether open() mapped any pack, i.e. whether find() can find anything at all. False for a
  // disabled cache and for a new or emptied one: a caller may then skip the work that only serves
  // a look-up (a stat() for a memo key, say).
  bool holds_entries() const;
  // The cache directory (`directory/v1`); empty for a disabled cache.
  const std::filesystem::path& directory() const;

  // The value stored under `key` in the packs mapped by open(), its checksum verified before it is
  // returned; nullopt when absent or when the record is damaged (then the entry is treated as
  // absent: the caller recomputes it and put() rewrites it). When several packs hold `key`, the
  // newest pack's record decides. Entries put() by this object are not found (they are in no pack
  // until commit, and only a later open() maps that pack). The view stays valid for the life of
  // this object (moves included). Thread-safe: may be called from many threads at once, and in a
  // child process after fork() (the maps are inherited read-only).
  std::optional<std::string_view> find(const Sha256Digest& key) const;

  // Keeps a new entry for commit(). Thread-safe. A later put of the same key replaces the earlier
  // one. Does nothing on a disabled cache.
  void put(const Sha256Digest& key, std::string value);

  // Like put() for each of `entries` in order, but written at once into the unnamed file that the
  // next commit() completes as its pack (with the put() entries, which win for a key given to
  // both), instead of being copied and kept in memory: for a caller that passes on many large
  // values it holds only briefly. The views need to stay valid only during the call. Where no
  // unnamed file can be made (no O_TMPFILE, or no directory) the entries are put(). Not
  // thread-safe: one thread of the process that opened the cache calls it, never beside commit().
  void put_through(std::span<const std::pair<Sha256Digest, std::string_view>> entries);

  // Writes the entries put since open() (or since the last commit) as ONE new pack, atomically,
  // then refreshes the packs find() used in this process (the least-recently-used order) and,
  // when no other process is doing it at the same moment, deletes the least recently used packs
  // above max_bytes and merges more than 16 packs into one. A cache that cannot be written
  // (read-only, full, its directory gone) gives ONE note `cache.unwritable` and loses only the
  // new entries. Never throws. Call it in the process that called open(): a child after fork()
  // may commit its own puts, but does not refresh the parent's packs.
  void commit(DiagnosticSink& notes);

  // Hand-over from a child process made by fork() to the parent, which alone commits: the child
  // takes its new entries out (those put() since open() or the last take, in key order) and the
  // packs its finds used (indexes into the packs open() mapped, the same in every process that
  // inherited this object); the parent put()s the entries and mark_used()s the packs. Indexes out
  // of range are ignored. The entries come as the map that held them (no copy, no new memory).
  std::map<Sha256Digest, std::string> take_pending();
  std::vector<std::size_t> used_packs() const;
  void mark_used(const std::vector<std::size_t>& packs);

  // In a child just made by fork(): drops the entries put() before the fork (they stay the
  // parent's to commit) without writing to the memory that holds them. They are set aside until
  // the process exits, never freed, so the child copies none of the pages it shares with the
  // parent (bench/README.md, "Fresh memory"); take_pending() then returns only the child's own.
  void disown_inherited_pending();

private:
  explicit ResultCache(std::unique_ptr<detail::ResultCacheState> state);
  std::unique_ptr<detail::ResultCacheState> m_state; // null: disabled
};

} // namespace fib
