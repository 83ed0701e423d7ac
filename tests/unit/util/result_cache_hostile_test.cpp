// The result cache against damaged and hostile directory contents: packs with bad bounds,
// truncated or flipped bytes, garbage named like packs, links, directories and FIFOs named like
// packs, another format version, and cache directories that cannot be used or written. Nothing
// there may be trusted, followed, hang the run or fail it: the outcome is at most one note.

#include "result_cache_fixture.hpp"
#include "test_support.hpp"
#include "util/cache_pack.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/result_cache.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace fib {
namespace {

namespace fs = std::filesystem;
using namespace result_cache_testing;

// A pack of keys [first, last), encoded as commit() would (entries sorted by key).
std::string pack_of(int first, int last, std::uint64_t stamp = 1) {
  std::vector<std::string> values;
  std::vector<detail::PackEntry> entries;
  for (int n = first; n < last; ++n) {
    values.push_back(value_of(n));
  }
  for (int n = first; n < last; ++n) {
    entries.push_back({key_of(n), values[static_cast<std::size_t>(n - first)]});
  }
  std::sort(entries.begin(), entries.end(),
            [](const detail::PackEntry& a, const detail::PackEntry& b) { return a.key < b.key; });
  return detail::encode_pack(stamp, entries);
}

std::uint64_t u64_at(const std::string& bytes, std::size_t offset) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) {
    value = (value << 8) | static_cast<unsigned char>(bytes[offset + static_cast<std::size_t>(i)]);
  }
  return value;
}

void set_u64(std::string& bytes, std::size_t offset, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    bytes[offset + static_cast<std::size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xff);
  }
}

std::size_t index_offset_of(const std::string& pack) {
  return u64_at(pack, pack.size() - detail::k_pack_trailer_size);
}

class HostileCache : public ::testing::Test {
protected:
  HostileCache() {
    // A sound pack written by the cache itself, beside whatever a test plants: it must go on
    // working whatever else is in the directory.
    EXPECT_TRUE(commit_range(options_for(m_dir.path()), 1000, 1010).empty());
    m_sound = pack_names(m_dir.path()).at(0);
  }
  fs::path v1() const { return m_dir.path() / "v1"; }
  // Writes a fresh file (removed first: rewriting a file in place makes ext4 flush it to disk).
  void plant(const std::string& name, const std::string& bytes) const {
    fs::remove(v1() / name);
    std::ofstream(v1() / name, std::ios::binary) << bytes;
  }
  // Opens the cache; expects no note and the sound pack to work.
  ResultCache open_quietly() const {
    DiagnosticList notes;
    ResultCache cache = ResultCache::open(options_for(m_dir.path()), notes);
    EXPECT_TRUE(notes.items().empty()) << testing::describe(notes);
    EXPECT_EQ(found_count(cache, 1000, 1010), 10);
    return cache;
  }
  bool exists(const std::string& name) const {
    return fs::symlink_status(v1() / name).type() != fs::file_type::not_found;
  }

  TempDir m_dir;
  std::string m_sound;
};

TEST_F(HostileCache, ASoundPlantedPackIsUsed) {
  plant("pack-planted.bin", pack_of(0, 20));
  const ResultCache cache = open_quietly();
  EXPECT_EQ(found_count(cache, 0, 20), 20);
  EXPECT_TRUE(exists("pack-planted.bin"));
}

TEST_F(HostileCache, AnIndexPointingOutsideThePackIsDamage) {
  const std::string sound = pack_of(0, 20);
  const std::size_t index = index_offset_of(sound);
  const std::size_t trailer = sound.size() - detail::k_pack_trailer_size;
  // Each edit is resealed (the trailer's checksum recomputed), so only the bounds checks see it.
  const std::vector<std::function<void(std::string&)>> edits = {
      [&](std::string& p) { set_u64(p, index + 32, std::uint64_t{1} << 40); }, // record offset
      [&](std::string& p) { set_u64(p, index + 32, 3); },                      // inside header
      [&](std::string& p) { set_u64(p, index + 40, p.size()); },               // value length
      [&](std::string& p) { set_u64(p, index + 40, ~std::uint64_t{0}); },      // overflows
      [&](std::string& p) { set_u64(p, trailer, p.size() + 100); },            // index offset
      [&](std::string& p) { set_u64(p, trailer + 8, 1000); },                  // record count
      [&](std::string& p) { set_u64(p, trailer + 8, std::uint64_t{1} << 60); },
      [&](std::string& p) { std::memcpy(&p[index], &p[index + 48], 32); }, // keys not ascending
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    SCOPED_TRACE(i);
    std::string damaged = sound;
    edits[i](damaged);
    detail::reseal_pack(damaged);
    plant("pack-edited.bin", damaged);
    const ResultCache cache = open_quietly();
    EXPECT_EQ(found_count(cache, 0, 20), 0);
    EXPECT_FALSE(exists("pack-edited.bin")) << "a damaged pack is deleted";
  }
}

TEST_F(HostileCache, ATruncatedPackIsDeleted) {
  const std::string sound = pack_of(0, 20);
  for (const std::size_t size : {sound.size() - 1, sound.size() - 32, sound.size() / 2,
                                 std::size_t{55}, std::size_t{10}, std::size_t{0}}) {
    SCOPED_TRACE(size);
    plant("pack-cut.bin", sound.substr(0, size));
    const ResultCache cache = open_quietly();
    EXPECT_EQ(found_count(cache, 0, 20), 0);
    EXPECT_FALSE(exists("pack-cut.bin"));
  }
}

TEST_F(HostileCache, AFlippedByteInAValueMakesThatEntryAbsent) {
  std::string pack = pack_of(0, 20);
  const std::size_t index = index_offset_of(pack);
  const std::size_t record = u64_at(pack, index + 32); // the first entry of the index
  pack[record + detail::k_pack_record_header_size + 5] ^= 0x10;
  Sha256Digest damaged_key{};
  std::memcpy(damaged_key.data(), &pack[index], 32);
  plant("pack-flipped.bin", pack);
  {
    ResultCache cache = open_quietly();
    EXPECT_FALSE(cache.find(damaged_key));
    EXPECT_EQ(found_count(cache, 0, 20), 19);
    EXPECT_TRUE(exists("pack-flipped.bin")) << "the rest of the pack is still good";
    // The caller recomputes the entry and puts it: the new pack shadows the damaged record.
    cache.put(damaged_key, "recomputed");
    DiagnosticList notes;
    cache.commit(notes);
    EXPECT_TRUE(notes.items().empty());
  }
  const ResultCache cache = open_quietly();
  ASSERT_TRUE(cache.find(damaged_key));
  EXPECT_EQ(*cache.find(damaged_key), "recomputed");
}

TEST_F(HostileCache, AFlippedByteInTheIndexOrHeaderLosesThePack) {
  const std::string sound = pack_of(0, 20);
  const std::size_t index = index_offset_of(sound);
  for (const std::size_t offset : {index + 3, index + 40, index + 48 * 19 + 47, std::size_t{17},
                                   std::size_t{12}, sound.size() - 20, sound.size() - 1}) {
    SCOPED_TRACE(offset);
    std::string damaged = sound;
    damaged[offset] ^= 0x01;
    plant("pack-flipped.bin", damaged);
    const ResultCache cache = open_quietly();
    EXPECT_EQ(found_count(cache, 0, 20), 0);
    EXPECT_FALSE(exists("pack-flipped.bin"));
  }
}

TEST_F(HostileCache, GarbageNamedLikePacksIsDeletedAndOtherNamesAreLeftAlone) {
  plant("pack-garbage.bin", std::string(5000, 'x'));
  plant("pack-short.bin", "fibcache");
  plant("pack-empty.bin", "");
  std::string random_bytes;
  for (int i = 0; i < 4096; ++i) {
    random_bytes += static_cast<char>((i * 2654435761u) >> 13);
  }
  plant("pack-random.bin", random_bytes);
  const std::vector<std::string> others = {"notes.txt",   "pack-1.tmp",   "pack-.bin",
                                           "xpack-1.bin", "pack-a b.bin", "lock"};
  for (const std::string& name : others) {
    plant(name, std::string(5000, 'x'));
  }
  const ResultCache cache = open_quietly();
  for (const char* name :
       {"pack-garbage.bin", "pack-short.bin", "pack-empty.bin", "pack-random.bin"}) {
    EXPECT_FALSE(exists(name)) << name;
  }
  for (const std::string& name : others) {
    EXPECT_TRUE(exists(name)) << name << " is not named like a pack";
  }
  EXPECT_TRUE(exists(m_sound));
}

TEST_F(HostileCache, LinksNamedLikePacksAreNeverFollowed) {
  // A sound pack outside the cache, reached through a link: following it would find its keys.
  const fs::path outside = m_dir.write("outside/pack-real.bin", pack_of(0, 20));
  fs::create_symlink(outside, v1() / "pack-x.bin");
  fs::create_symlink("/etc/passwd", v1() / "pack-passwd.bin");
  const std::string passwd = testing::read_file("/etc/passwd");
  const ResultCache cache = open_quietly();
  EXPECT_EQ(found_count(cache, 0, 20), 0);
  EXPECT_TRUE(fs::is_symlink(v1() / "pack-x.bin")) << "a link is not ours to delete";
  EXPECT_TRUE(fs::is_symlink(v1() / "pack-passwd.bin"));
  EXPECT_EQ(testing::read_file(outside), pack_of(0, 20));
  EXPECT_EQ(testing::read_file("/etc/passwd"), passwd);
  // Upkeep (here: a compaction with 17 packs) does not follow them either.
  for (int round = 0; round < 17; ++round) {
    ASSERT_TRUE(commit_range(options_for(m_dir.path()), round, round + 1).empty());
  }
  EXPECT_TRUE(fs::is_symlink(v1() / "pack-x.bin"));
  EXPECT_EQ(testing::read_file(outside), pack_of(0, 20));
}

TEST_F(HostileCache, DirectoriesAndFifosNamedLikePacksAreLeftAlone) {
  fs::create_directories(v1() / "pack-y.bin" / "inside");
  ASSERT_EQ(::mkfifo((v1() / "pack-z.bin").c_str(), 0644), 0);
  { const ResultCache cache = open_quietly(); } // returns: a FIFO is never read from
  EXPECT_TRUE(fs::is_directory(v1() / "pack-y.bin" / "inside"));
  EXPECT_TRUE(fs::is_fifo(v1() / "pack-z.bin"));
  EXPECT_TRUE(commit_range(options_for(m_dir.path()), 0, 5).empty());
  EXPECT_TRUE(fs::is_fifo(v1() / "pack-z.bin"));
  const ResultCache cache = open_quietly();
  EXPECT_EQ(found_count(cache, 0, 5), 5);
}

TEST_F(HostileCache, AnotherFormatVersionIsIgnoredAndKept) {
  std::string future = pack_of(0, 20);
  future[8] = 2; // the format version
  detail::reseal_pack(future);
  plant("pack-future.bin", future);
  const ResultCache cache = open_quietly();
  EXPECT_EQ(found_count(cache, 0, 20), 0);
  EXPECT_TRUE(exists("pack-future.bin")) << "not damaged: written by another fib";
}

TEST_F(HostileCache, APackAboveTheBoundIsDeleted) {
  plant("pack-giant.bin", pack_of(0, 20));
  fs::resize_file(v1() / "pack-giant.bin", (std::uintmax_t{256} << 20) + 1); // sparse
  const ResultCache cache = open_quietly();
  EXPECT_FALSE(exists("pack-giant.bin"));
}

TEST_F(HostileCache, APackThatVanishedSinceTheListingIsSkipped) {
  const int directory = ::open(v1().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(directory, 0);
  const auto opening = detail::MappedPack::open(directory, "pack-gone.bin", 1 << 20);
  ::close(directory);
  EXPECT_EQ(opening.status, detail::PackOpenStatus::vanished);
  EXPECT_EQ(opening.pack.record_count(), 0u);
}

// Random damage, resealed or not: opening never crashes, and whatever is read is either absent
// or exactly the value that was stored under that key.
TEST_F(HostileCache, RandomDamageNeverYieldsAWrongValue) {
  const std::string sound = pack_of(0, 8);
  const int directory = ::open(v1().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(directory, 0);
  std::mt19937 random(17);
  int opened = 0;
  for (int round = 0; round < 1500; ++round) {
    std::string damaged = sound;
    const int flips = 1 + static_cast<int>(random() % 3);
    for (int i = 0; i < flips; ++i) {
      damaged[random() % damaged.size()] ^= static_cast<char>(1 + random() % 255);
    }
    if (random() % 4 == 0) {
      damaged.resize(random() % damaged.size());
    }
    if (random() % 2 == 0) {
      detail::reseal_pack(damaged);
    }
    plant("pack-random.bin", damaged);
    const auto opening = detail::MappedPack::open(directory, "pack-random.bin", 1 << 20);
    if (opening.status != detail::PackOpenStatus::valid) {
      continue;
    }
    ++opened;
    const detail::MappedPack& pack = opening.pack;
    for (int n = 0; n < 8; ++n) {
      const auto position = pack.index_of(key_of(n));
      const auto value = position ? pack.value_at(*position) : std::nullopt;
      ASSERT_TRUE(!value || *value == value_of(n)) << "round " << round << ", key " << n;
    }
    for (std::size_t i = 0; i < pack.record_count(); ++i) {
      (void)pack.value_at(i); // in bounds whatever the index says
    }
  }
  ::close(directory);
  EXPECT_GT(opened, 0) << "some damage (in values, resealed) leaves the structure sound";
}

// A pack's pieces (what commit() writes with writev, the values not copied) are the pack: their
// sizes add up to the encoded size, the record pieces are the values themselves, and a cache
// written from more pieces than one writev takes (IOV_MAX), empty values among them, reads back.
TEST(ResultCachePack, PiecesAreThePackAndAManyPieceCommitReadsBack) {
  std::vector<std::string> values;
  for (int n = 0; n < 3000; ++n) {
    values.push_back(n % 5 == 0 ? std::string() : value_of(n, static_cast<std::size_t>(n % 300)));
  }
  std::vector<detail::PackEntry> entries;
  std::uintmax_t value_bytes = 0;
  for (int n = 0; n < 3000; ++n) {
    entries.push_back({key_of(n), values[static_cast<std::size_t>(n)]});
    value_bytes += values[static_cast<std::size_t>(n)].size();
  }
  std::sort(entries.begin(), entries.end(),
            [](const detail::PackEntry& a, const detail::PackEntry& b) { return a.key < b.key; });
  const detail::PackPieces pack = detail::encode_pack_pieces(7, entries);
  EXPECT_EQ(pack.size, detail::encoded_pack_size(entries.size(), value_bytes));
  ASSERT_EQ(pack.pieces.size(), 2 * entries.size() + 2);
  std::uintmax_t total = 0;
  for (const std::string_view piece : pack.pieces) {
    total += piece.size();
  }
  EXPECT_EQ(total, pack.size);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(pack.pieces[2 * i + 2].data(), entries[i].value.data()) << "values are not copied";
  }
  EXPECT_EQ(detail::encode_pack(7, entries).size(), pack.size);

  TempDir dir;
  DiagnosticList notes;
  {
    ResultCache cache = ResultCache::open(options_for(dir.path()), notes);
    for (int n = 0; n < 3000; ++n) {
      cache.put(key_of(n), values[static_cast<std::size_t>(n)]);
    }
    cache.commit(notes);
  }
  ASSERT_EQ(pack_names(dir.path()).size(), 1u);
  const ResultCache cache = ResultCache::open(options_for(dir.path()), notes);
  for (int n = 0; n < 3000; ++n) {
    ASSERT_EQ(found(cache, n), values[static_cast<std::size_t>(n)]) << n;
  }
  EXPECT_TRUE(notes.items().empty()) << testing::describe(notes);
}

TEST(ResultCacheDirectory, AParentThatIsAFileMakesTheCacheUnavailable) {
  TempDir dir;
  const fs::path file = dir.write("file", "not a directory");
  DiagnosticList notes;
  ResultCache cache = ResultCache::open(options_for(file / "cache"), notes);
  EXPECT_FALSE(cache.enabled());
  ASSERT_EQ(codes_of(notes), std::vector<std::string>{std::string(codes::k_cache_unavailable)});
  const Diagnostic& note = notes.items()[0];
  EXPECT_EQ(note.severity, Severity::note);
  EXPECT_EQ(note.file, file / "cache" / "v1");
  EXPECT_NE(note.message.find((file / "cache" / "v1").string()), std::string::npos);
  EXPECT_NE(note.message.find("this run goes on without the cache"), std::string::npos);
  EXPECT_NE(note.message.find(std::strerror(ENOTDIR)), std::string::npos) << note.message;
  cache.put(key_of(1), "one");
  cache.commit(notes);
  EXPECT_EQ(notes.items().size(), 1u) << "a disabled cache says nothing more";
}

TEST(ResultCacheDirectory, AVersionDirectoryThatIsAFileMakesTheCacheUnavailable) {
  TempDir dir;
  dir.write("v1", "a file");
  DiagnosticList notes;
  const ResultCache cache = ResultCache::open(options_for(dir.path()), notes);
  EXPECT_FALSE(cache.enabled());
  EXPECT_EQ(codes_of(notes), std::vector<std::string>{std::string(codes::k_cache_unavailable)});
  EXPECT_EQ(testing::read_file(dir.path() / "v1"), "a file");
}

TEST(ResultCacheDirectory, AVersionDirectoryThatIsALinkIsRefused) {
  TempDir dir;
  fs::create_directories(dir.path() / "elsewhere");
  fs::create_directories(dir.path() / "root");
  fs::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "root" / "v1");
  DiagnosticList notes;
  const ResultCache cache = ResultCache::open(options_for(dir.path() / "root"), notes);
  EXPECT_FALSE(cache.enabled());
  EXPECT_EQ(codes_of(notes), std::vector<std::string>{std::string(codes::k_cache_unavailable)});
}

TEST(ResultCacheDirectory, ACacheThatBecameUnwritableLosesOnlyTheNewEntries) {
  TempDir dir;
  const auto options = options_for(dir.path());
  ASSERT_TRUE(commit_range(options, 0, 10).empty());
  DiagnosticList notes;
  ResultCache cache = ResultCache::open(options, notes);
  EXPECT_EQ(found_count(cache, 0, 10), 10);
  // The directory goes away and a file takes its name: nothing can be written there any more.
  fs::rename(dir.path() / "v1", dir.path() / "old-v1");
  dir.write("v1", "a file");
  cache.put(key_of(10), "ten");
  cache.commit(notes);
  ASSERT_EQ(codes_of(notes), std::vector<std::string>{std::string(codes::k_cache_unwritable)});
  EXPECT_EQ(notes.items()[0].severity, Severity::note);
  EXPECT_NE(notes.items()[0].message.find("this run's new results are not kept"),
            std::string::npos);
  EXPECT_EQ(found_count(cache, 0, 10), 10) << "the maps stay valid";
  EXPECT_EQ(testing::read_file(dir.path() / "v1"), "a file");
  // The old entries are intact where they are.
  fs::remove(dir.path() / "v1");
  fs::rename(dir.path() / "old-v1", dir.path() / "v1");
  const ResultCache reopened = ResultCache::open(options, notes);
  EXPECT_EQ(found_count(reopened, 0, 10), 10);
  EXPECT_FALSE(reopened.find(key_of(10)));
  EXPECT_EQ(notes.items().size(), 1u);
}

TEST(ResultCacheDirectory, AReadOnlyCacheIsReadButNotWritten) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root writes into read-only directories";
  }
  TempDir dir;
  const auto options = options_for(dir.path());
  ASSERT_TRUE(commit_range(options, 0, 10).empty());
  std::ofstream(dir.path() / "v1" / "pack-garbage.bin") << "garbage";
  fs::permissions(dir.path() / "v1", fs::perms::owner_read | fs::perms::owner_exec);
  DiagnosticList notes;
  {
    ResultCache cache = ResultCache::open(options, notes);
    EXPECT_TRUE(notes.items().empty());
    EXPECT_EQ(found_count(cache, 0, 10), 10);
    cache.put(key_of(10), "ten");
    cache.commit(notes);
  }
  fs::permissions(dir.path() / "v1", fs::perms::owner_all);
  EXPECT_EQ(codes_of(notes), std::vector<std::string>{std::string(codes::k_cache_unwritable)});
  EXPECT_TRUE(fs::exists(dir.path() / "v1" / "pack-garbage.bin")) << "could not be deleted";
}

TEST(ResultCacheDirectory, AnUnreadableCacheIsUnavailable) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root reads unreadable directories";
  }
  TempDir dir;
  fs::create_directories(dir.path() / "v1");
  fs::permissions(dir.path() / "v1", fs::perms::none);
  DiagnosticList notes;
  const ResultCache cache = ResultCache::open(options_for(dir.path()), notes);
  fs::permissions(dir.path() / "v1", fs::perms::owner_all);
  EXPECT_FALSE(cache.enabled());
  EXPECT_EQ(codes_of(notes), std::vector<std::string>{std::string(codes::k_cache_unavailable)});
}

} // namespace
} // namespace fib
