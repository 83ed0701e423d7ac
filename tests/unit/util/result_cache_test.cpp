// The result cache's store: round trips, many entries over several packs, newest wins, the size
// bound with least-recently-used eviction, compaction, several processes sharing one cache, and a
// kill in the middle of a commit. The damaged and hostile directory contents are in
// result_cache_hostile_test.cpp.

#include "result_cache_fixture.hpp"
#include "test_support.hpp"

#include <fib/base/codes.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/util/cache_root.hpp>
#include <fib/util/file_lock.hpp>
#include <fib/util/result_cache.hpp>

#include <gtest/gtest.h>

#include <fstream>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fib {
namespace {

namespace fs = std::filesystem;
using namespace result_cache_testing;

// Sets the modification time of `path` to `seconds_ago` seconds before now.
void age(const fs::path& path, int seconds_ago) {
  const std::timespec times[2] = {{0, UTIME_OMIT}, {::time(nullptr) - seconds_ago, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
}

TEST(ResultCache, DisabledCacheFindsAndKeepsNothing) {
  ResultCache cache;
  EXPECT_FALSE(cache.enabled());
  EXPECT_TRUE(cache.directory().empty());
  cache.put(key_of(1), "one");
  EXPECT_FALSE(cache.find(key_of(1)));
  DiagnosticList notes;
  cache.commit(notes);
  EXPECT_TRUE(notes.items().empty());
}

TEST(ResultCache, RoundTrip) {
  TempDir dir;
  DiagnosticList notes;
  {
    ResultCache cache = ResultCache::open(options_for(dir.path()), notes);
    ASSERT_TRUE(cache.enabled());
    EXPECT_EQ(cache.directory(), dir.path() / "v1");
    cache.put(key_of(1), "one");
    cache.put(key_of(2), "");
    cache.put(key_of(3), std::string("\0binary\xff", 8));
    cache.put(key_of(1), "uno"); // a later put replaces the earlier one
    EXPECT_FALSE(cache.find(key_of(1))) << "entries are found only after a commit and a new open";
    cache.commit(notes);
  }
  EXPECT_TRUE(notes.items().empty()) << testing::describe(notes);
  ASSERT_EQ(pack_names(dir.path()).size(), 1u);
  const ResultCache cache = ResultCache::open(options_for(dir.path()), notes);
  EXPECT_EQ(found(cache, 1), "uno");
  EXPECT_EQ(found(cache, 2), "");
  EXPECT_EQ(found(cache, 3), std::string("\0binary\xff", 8));
  EXPECT_EQ(found(cache, 4), std::nullopt);
  EXPECT_TRUE(notes.items().empty()) << testing::describe(notes);
}

// holds_entries() says whether find() can find anything: only once a pack was committed and the
// cache opened again.
TEST(ResultCache, HoldsEntriesOnlyWhenAPackIsMapped) {
  EXPECT_FALSE(ResultCache().holds_entries());
  TempDir dir;
  DiagnosticList notes;
  {
    ResultCache cache = ResultCache::open(options_for(dir.path()), notes);
    ASSERT_TRUE(cache.enabled());
    EXPECT_FALSE(cache.holds_entries()) << "a new cache";
    cache.put(key_of(1), "one");
    EXPECT_FALSE(cache.holds_entries()) << "a put is in no pack before commit";
    cache.commit(notes);
  }
  const ResultCache cache = ResultCache::open(options_for(dir.path()), notes);
  EXPECT_TRUE(cache.holds_entries());
  EXPECT_EQ(found(cache, 1), "one");
  for (const std::string& name : pack_names(dir.path())) {
    fs::remove(dir.path() / "v1" / name);
  }
  EXPECT_FALSE(ResultCache::open(options_for(dir.path()), notes).holds_entries())
      << "an emptied cache";
  EXPECT_TRUE(notes.items().empty()) << testing::describe(notes);
}

TEST(ResultCache, CreatesMissingParentsAndAcceptsALinkedRoot) {
  TempDir dir;
  const fs::path real = dir.path() / "real";
  fs::create_directories(real);
  fs::create_directory_symlink(real, dir.path() / "link");
  EXPECT_TRUE(commit_range(options_for(dir.path() / "link"), 0, 10).empty());
  EXPECT_EQ(pack_names(real).size(), 1u) << "the link to a directory is the user's choice";
  DiagnosticList notes;
  const ResultCache cache = ResultCache::open(options_for(dir.path() / "link"), notes);
  EXPECT_EQ(found(cache, 3), value_of(3));
  EXPECT_TRUE(commit_range(options_for(dir.path() / "a" / "b" / "c"), 0, 1).empty());
  EXPECT_EQ(pack_names(dir.path() / "a" / "b" / "c").size(), 1u);
}

TEST(ResultCache, ManyEntriesInSeveralPacks) {
  TempDir dir;
  const auto options = options_for(dir.path());
  for (int pack = 0; pack < 5; ++pack) {
    ASSERT_TRUE(commit_range(options, pack * 1000, pack * 1000 + 1000, 200).empty());
  }
  EXPECT_EQ(pack_names(dir.path()).size(), 5u);
  DiagnosticList notes;
  const ResultCache cache = ResultCache::open(options, notes);
  for (int n = 0; n < 5000; n += 7) {
    ASSERT_EQ(found(cache, n), value_of(n, 200)) << n;
  }
  for (int n = 5000; n < 5500; ++n) {
    ASSERT_EQ(found(cache, n), std::nullopt) << n;
  }
  EXPECT_TRUE(notes.items().empty());
}

// The search starts where an evenly spread key would stand: keys that are not spread evenly (all
// crowded at the low end, a few at the very top, the lowest and highest possible) are still each
// found (the lowest possible key is crowded(0, 0)), and keys between them are not.
TEST(ResultCache, KeysCrowdedAtOneEndAreFound) {
  TempDir dir;
  const auto options = options_for(dir.path());
  const auto crowded = [](int n, std::uint8_t top) {
    Sha256Digest key{};
    key[0] = top;
    key[30] = static_cast<std::uint8_t>(n / 256);
    key[31] = static_cast<std::uint8_t>(n % 256);
    return key;
  };
  std::vector<Sha256Digest> keys;
  for (int n = 0; n < 3000; n += 2) {
    keys.push_back(crowded(n, 0x00));
  }
  for (int n = 0; n < 5; ++n) {
    keys.push_back(crowded(n * 2, 0xff));
  }
  Sha256Digest highest{};
  highest.fill(0xff);
  keys.push_back(highest);
  {
    DiagnosticList notes;
    ResultCache cache = ResultCache::open(options, notes);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      cache.put(keys[i], std::to_string(i).append(" value"));
    }
    cache.commit(notes);
    ASSERT_TRUE(notes.items().empty());
  }
  DiagnosticList notes;
  const ResultCache cache = ResultCache::open(options, notes);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto value = cache.find(keys[i]);
    ASSERT_TRUE(value) << i;
    EXPECT_EQ(*value, std::to_string(i).append(" value")) << i;
  }
  for (int n = 1; n < 3000; n += 2) {
    ASSERT_FALSE(cache.find(crowded(n, 0x00))) << n;
  }
  EXPECT_FALSE(cache.find(crowded(1, 0xff)));
  EXPECT_FALSE(cache.find(crowded(0, 0x80)));
  Sha256Digest below_highest = highest;
  below_highest[31] = 0xfe;
  EXPECT_FALSE(cache.find(below_highest));
}

TEST(ResultCache, NewestPackWins) {
  TempDir dir;
  const auto options = options_for(dir.path());
  ASSERT_TRUE(commit_range(options, 0, 10, 64, 1).empty());
  ASSERT_TRUE(commit_range(options, 5, 15, 64, 2).empty());
  ASSERT_TRUE(commit_range(options, 8, 9, 64, 3).empty());
  DiagnosticList notes;
  {
    const ResultCache cache = ResultCache::open(options, notes);
    EXPECT_EQ(found(cache, 2), value_of(2, 64, 1));
    EXPECT_EQ(found(cache, 5), value_of(5, 64, 2));
    EXPECT_EQ(found(cache, 8), value_of(8, 64, 3));
    EXPECT_EQ(found(cache, 14), value_of(14, 64, 2));
  }
  // Reading the oldest pack refreshes its modification time (least recently used order) but
  // not its place in the newest-wins order.
  for (const std::string& name : pack_names(dir.path())) {
    age(dir.path() / "v1" / name, 100);
  }
  {
    ResultCache cache = ResultCache::open(options, notes);
    EXPECT_EQ(found(cache, 2), value_of(2, 64, 1));
    cache.commit(notes);
  }
  const ResultCache cache = ResultCache::open(options, notes);
  EXPECT_EQ(found(cache, 5), value_of(5, 64, 2));
  EXPECT_EQ(found(cache, 8), value_of(8, 64, 3));
  EXPECT_TRUE(notes.items().empty());
}

TEST(ResultCache, CommitRefreshesThePacksThatWereUsed) {
  TempDir dir;
  const auto options = options_for(dir.path());
  ASSERT_TRUE(commit_range(options, 0, 10).empty());
  ASSERT_TRUE(commit_range(options, 10, 20).empty());
  const auto names = pack_names(dir.path());
  ASSERT_EQ(names.size(), 2u);
  for (const std::string& name : names) {
    age(dir.path() / "v1" / name, 1000);
  }
  const auto aged = fs::last_write_time(dir.path() / "v1" / names[0]);
  DiagnosticList notes;
  ResultCache cache = ResultCache::open(options, notes);
  ASSERT_TRUE(found(cache, 3));
  ASSERT_TRUE(found(cache, 4));
  ASSERT_FALSE(found(cache, 30));
  for (const std::string& name : names) {
    EXPECT_EQ(fs::last_write_time(dir.path() / "v1" / name), aged) << "find() writes nothing";
  }
  cache.commit(notes);
  std::set<std::string> refreshed;
  for (const std::string& name : names) {
    if (fs::last_write_time(dir.path() / "v1" / name) > aged + std::chrono::seconds(500)) {
      refreshed.insert(name);
    }
  }
  EXPECT_EQ(refreshed.size(), 1u) << "only the pack that held keys 3 and 4";
  const ResultCache reopened = ResultCache::open(options, notes);
  EXPECT_EQ(found(reopened, 3), value_of(3));
  EXPECT_TRUE(notes.items().empty());
}

TEST(ResultCache, ChildAfterForkFindsButDoesNotRefresh) {
  TempDir dir;
  const auto options = options_for(dir.path());
  ASSERT_TRUE(commit_range(options, 0, 100).empty());
  const auto pack = dir.path() / "v1" / pack_names(dir.path()).at(0);
  age(pack, 1000);
  const auto aged = fs::last_write_time(pack);
  DiagnosticList notes;
  ResultCache cache = ResultCache::open(options, notes);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const bool all = found_count(cache, 0, 100) == 100;
    DiagnosticList child_notes;
    cache.commit(child_notes); // nothing put: would only refresh, which a child does not do
    ::_exit(all && !cache.find(key_of(100)) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child found every value through the inherited maps";
  EXPECT_EQ(fs::last_write_time(pack), aged);
}

// put_through() writes entries into the next pack at once (their views may die after the call);
// the commit completes that pack with the put() entries: put() wins for a key given to both, and
// of a key given twice to put_through() the later value wins.
TEST(ResultCache, EntriesWrittenThroughJoinThePutOnesInOnePack) {
  TempDir dir;
  DiagnosticList notes;
  {
    ResultCache cache = ResultCache::open(options_for(dir.path()), notes);
    for (int batch = 0; batch < 3; ++batch) {
      std::vector<std::string> values; // gone after each call
      std::vector<std::pair<Sha256Digest, std::string_view>> entries;
      for (int n = batch * 100; n < batch * 100 + 100; ++n) {
        values.push_back(value_of(n, static_cast<std::size_t>(n % 7 == 0 ? 0 : 40 + n % 90)));
      }
      for (int n = batch * 100; n < batch * 100 + 100; ++n) {
        entries.emplace_back(key_of(n), values[static_cast<std::size_t>(n - batch * 100)]);
      }
      cache.put_through(entries);
    }
    const std::string again = "written through again";
    const std::vector<std::pair<Sha256Digest, std::string_view>> later = {{key_of(5), again}};
    cache.put_through(later);
    cache.put(key_of(7), "put wins");
    cache.put(key_of(1000), "only put");
    EXPECT_TRUE(pack_names(dir.path()).empty()) << "nothing is linked before the commit";
    cache.commit(notes);
  }
  ASSERT_EQ(pack_names(dir.path()).size(), 1u);
  const ResultCache cache = ResultCache::open(options_for(dir.path()), notes);
  for (int n = 0; n < 300; ++n) {
    if (n == 5 || n == 7) {
      continue;
    }
    ASSERT_EQ(found(cache, n), value_of(n, static_cast<std::size_t>(n % 7 == 0 ? 0 : 40 + n % 90)))
        << n;
  }
  EXPECT_EQ(found(cache, 5), "written through again");
  EXPECT_EQ(found(cache, 7), "put wins");
  EXPECT_EQ(found(cache, 1000), "only put");
  EXPECT_EQ(found(cache, 300), std::nullopt);
  EXPECT_TRUE(notes.items().empty()) << testing::describe(notes);
}

// What put_through() wrote is in an unnamed file: a process that dies before its commit leaves
// nothing in the directory, and a child made by fork() that commits does not link its parent's
// file (the parent's commit does).
TEST(ResultCache, EntriesWrittenThroughLeaveNothingBehindAKillOrAChildsCommit) {
  TempDir dir;
  const auto options = options_for(dir.path());
  const std::string value(4096, 'v');
  const std::vector<std::pair<Sha256Digest, std::string_view>> entries = {{key_of(1), value},
                                                                          {key_of(2), value}};
  const pid_t killed = ::fork();
  ASSERT_GE(killed, 0);
  if (killed == 0) {
    DiagnosticList child_notes;
    ResultCache cache = ResultCache::open(options, child_notes);
    cache.put_through(entries);
    ::_exit(0); // no commit
  }
  int status = 0;
  ASSERT_EQ(::waitpid(killed, &status, 0), killed);
  ASSERT_TRUE(WIFEXITED(status));
  std::size_t left = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path() / "v1")) {
    ++left;
  }
  EXPECT_EQ(left, 0u) << "no pack and no temporary";

  DiagnosticList notes;
  ResultCache cache = ResultCache::open(options, notes);
  cache.put_through(entries);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child's own entries are kept as put() keeps them (its parent's file is not its to
    // write), and its commit links nothing of the parent's.
    const std::string own = "the child's";
    const std::vector<std::pair<Sha256Digest, std::string_view>> child_entries = {{key_of(3), own}};
    cache.put_through(child_entries);
    const auto pending = cache.take_pending();
    const bool kept = pending.size() == 1 && pending.begin()->second == own;
    DiagnosticList child_notes;
    cache.commit(child_notes);
    ::_exit(kept && child_notes.items().empty() ? 0 : 1);
  }
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(pack_names(dir.path()).empty()) << "the child linked nothing";
  cache.commit(notes);
  EXPECT_EQ(pack_names(dir.path()).size(), 1u);
  const ResultCache reopened = ResultCache::open(options, notes);
  EXPECT_EQ(found(reopened, 1), value);
  EXPECT_EQ(found(reopened, 2), value);
  EXPECT_EQ(found(reopened, 3), std::nullopt) << "the child's entry was its own";
  EXPECT_TRUE(notes.items().empty()) << testing::describe(notes);
}

// A pack written through that would exceed the size bound is not linked, like any such pack.
TEST(ResultCache, EntriesWrittenThroughAboveTheBoundAreNotKept) {
  TempDir dir;
  const auto options = options_for(dir.path(), 64 << 10);
  DiagnosticList notes;
  ResultCache cache = ResultCache::open(options, notes);
  const std::string value(40 << 10, 'x');
  const std::vector<std::pair<Sha256Digest, std::string_view>> entries = {{key_of(1), value},
                                                                          {key_of(2), value}};
  cache.put_through(entries);
  cache.commit(notes);
  EXPECT_TRUE(pack_names(dir.path()).empty());
  EXPECT_TRUE(notes.items().empty()) << testing::describe(notes);
}

TEST(ResultCache, ThreadsFindAndPutAtOnce) {
  TempDir dir;
  const auto options = options_for(dir.path());
  ASSERT_TRUE(commit_range(options, 0, 500).empty());
  DiagnosticList notes;
  ResultCache cache = ResultCache::open(options, notes);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, &wrong, t] {
      for (int n = 0; n < 500; ++n) {
        const auto value = cache.find(key_of(n));
        if (!value || *value != value_of(n)) {
          ++wrong;
        }
        cache.put(key_of(1000 + t * 500 + n), value_of(1000 + t * 500 + n));
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(wrong.load(), 0);
  cache.commit(notes);
  const ResultCache reopened = ResultCache::open(options, notes);
  for (int n = 1000; n < 3000; ++n) {
    ASSERT_EQ(found(reopened, n), value_of(n)) << n;
  }
  EXPECT_TRUE(notes.items().empty());
}

TEST(ResultCache, SizeBoundEvictsTheLeastRecentlyUsedPacks) {
  TempDir dir;
  // Each commit writes 10 entries of 1000 bytes: a pack of about 11 KB; four fit in 48 KB.
  const std::uintmax_t bound = 48 * 1024;
  const auto options = options_for(dir.path(), bound);
  for (int round = 0; round < 10; ++round) {
    const auto before = pack_names(dir.path());
    ASSERT_TRUE(commit_range(options, round * 10, round * 10 + 10, 1000).empty());
    EXPECT_LE(pack_bytes(dir.path()), bound) << "round " << round;
    for (const std::string& name : pack_names(dir.path())) {
      if (std::find(before.begin(), before.end(), name) == before.end()) {
        age(dir.path() / "v1" / name, 1000 - round); // later rounds are more recent
      }
    }
  }
  EXPECT_EQ(pack_names(dir.path()).size(), 4u);
  DiagnosticList notes;
  {
    ResultCache cache = ResultCache::open(options, notes);
    EXPECT_EQ(found(cache, 95), value_of(95, 1000)) << "the newest packs are kept";
    EXPECT_EQ(found(cache, 55), std::nullopt) << "the oldest packs are gone";
    // Using the oldest pack left (entries 60..69) makes it the most recently used.
    EXPECT_EQ(found(cache, 61), value_of(61, 1000));
    for (int n = 100; n < 110; ++n) {
      cache.put(key_of(n), value_of(n, 1000));
    }
    cache.commit(notes);
  }
  EXPECT_LE(pack_bytes(dir.path()), bound);
  EXPECT_EQ(pack_names(dir.path()).size(), 4u);
  const ResultCache cache = ResultCache::open(options, notes);
  EXPECT_EQ(found(cache, 61), value_of(61, 1000)) << "used, so kept";
  EXPECT_EQ(found(cache, 75), std::nullopt) << "the least recently used now";
  EXPECT_EQ(found(cache, 85), value_of(85, 1000));
  EXPECT_EQ(found(cache, 105), value_of(105, 1000)) << "just written, so kept";
  EXPECT_TRUE(notes.items().empty());
}

TEST(ResultCache, EntriesLargerThanTheBoundAreNotKept) {
  TempDir dir;
  const auto options = options_for(dir.path(), 4096);
  EXPECT_TRUE(commit_range(options, 0, 1, 100).empty());
  EXPECT_TRUE(commit_range(options, 1, 2, 10000).empty());
  DiagnosticList notes;
  const ResultCache cache = ResultCache::open(options, notes);
  EXPECT_EQ(found(cache, 0), value_of(0, 100));
  EXPECT_EQ(found(cache, 1), std::nullopt);
  EXPECT_EQ(pack_names(dir.path()).size(), 1u);
}

TEST(ResultCache, MoreThanSixteenPacksAreMergedIntoOne) {
  TempDir dir;
  const auto options = options_for(dir.path());
  for (int round = 0; round < 16; ++round) {
    ASSERT_TRUE(commit_range(options, round * 20, round * 20 + 25, 100, round).empty());
  }
  EXPECT_EQ(pack_names(dir.path()).size(), 16u);
  ASSERT_TRUE(commit_range(options, 16 * 20, 16 * 20 + 25, 100, 16).empty());
  ASSERT_EQ(pack_names(dir.path()).size(), 1u) << "17 packs became one";
  DiagnosticList notes;
  const ResultCache cache = ResultCache::open(options, notes);
  for (int n = 0; n < 17 * 20 + 5; ++n) {
    // Keys 20r..20r+4 were written in rounds r-1 and r: the later round wins.
    ASSERT_EQ(found(cache, n), value_of(n, 100, n / 20 > 16 ? 16 : n / 20)) << n;
  }
  ASSERT_TRUE(commit_range(options, 1000, 1001).empty());
  EXPECT_EQ(pack_names(dir.path()).size(), 2u);
  EXPECT_TRUE(notes.items().empty());
}

TEST(ResultCache, UpkeepIsSkippedWhileAnotherHoldsTheLock) {
  TempDir dir;
  const auto options = options_for(dir.path());
  ASSERT_TRUE(commit_range(options, 0, 1).empty());
  auto lock = lock_directory(dir.path() / "v1", std::chrono::milliseconds{0});
  ASSERT_TRUE(lock);
  for (int round = 1; round < 20; ++round) {
    ASSERT_TRUE(commit_range(options, round, round + 1).empty());
  }
  EXPECT_EQ(pack_names(dir.path()).size(), 20u) << "no compaction while the lock is held";
  lock = DirectoryLock();
  ASSERT_TRUE(commit_range(options, 20, 21).empty());
  EXPECT_EQ(pack_names(dir.path()).size(), 1u);
  DiagnosticList notes;
  const ResultCache cache = ResultCache::open(options, notes);
  for (int n = 0; n < 21; ++n) {
    EXPECT_EQ(found(cache, n), value_of(n)) << n;
  }
}

TEST(ResultCache, MappedPacksOutliveTheirDeletion) {
  TempDir dir;
  const auto options = options_for(dir.path());
  for (int round = 0; round < 16; ++round) {
    ASSERT_TRUE(commit_range(options, round * 10, round * 10 + 10).empty());
  }
  DiagnosticList notes;
  const ResultCache reader = ResultCache::open(options, notes);
  const auto mapped = pack_names(dir.path());
  ASSERT_EQ(mapped.size(), 16u);
  // Another writer's commit compacts: every pack the reader mapped is deleted.
  ASSERT_TRUE(commit_range(options, 160, 170).empty());
  for (const std::string& name : mapped) {
    EXPECT_FALSE(fs::exists(dir.path() / "v1" / name));
  }
  for (int n = 0; n < 160; ++n) {
    ASSERT_EQ(found(reader, n), value_of(n)) << n;
  }
  EXPECT_TRUE(notes.items().empty());
}

// N processes put and commit distinct keys into one cache at the same time, for several rounds
// (enough commits for compactions to run while others write).
TEST(ResultCache, ConcurrentProcessesNeverCorruptTheCache) {
  TempDir dir;
  const auto options = options_for(dir.path());
  constexpr int k_processes = 6;
  constexpr int k_rounds = 6;
  constexpr int k_keys = 40;
  std::vector<pid_t> children;
  for (int p = 0; p < k_processes; ++p) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      DiagnosticList notes;
      for (int round = 0; round < k_rounds; ++round) {
        const int first = (p * k_rounds + round) * k_keys;
        ResultCache cache = ResultCache::open(options, notes);
        for (int n = first; n < first + k_keys; ++n) {
          cache.put(key_of(n), value_of(n, 300));
        }
        cache.commit(notes);
      }
      if (!notes.items().empty()) {
        std::fprintf(stderr, "writer %d: %s\n", p, testing::describe(notes).c_str());
      }
      ::_exit(notes.items().empty() ? 0 : 1);
    }
    children.push_back(child);
  }
  for (const pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a writer got a note";
  }
  const auto names_before = pack_names(dir.path());
  EXPECT_FALSE(names_before.empty());
  DiagnosticList notes;
  const ResultCache cache = ResultCache::open(options, notes);
  EXPECT_EQ(pack_names(dir.path()), names_before) << "a fresh open deleted a damaged pack";
  for (int n = 0; n < k_processes * k_rounds * k_keys; ++n) {
    ASSERT_EQ(found(cache, n), value_of(n, 300)) << n;
  }
  EXPECT_TRUE(testing::temporaries_below(dir.path()).empty());
  EXPECT_TRUE(notes.items().empty());
}

TEST(ResultCache, AKillDuringCommitLosesOnlyTheNewEntries) {
  TempDir dir;
  const auto options = options_for(dir.path());
  ASSERT_TRUE(commit_range(options, 0, 50).empty());
  const auto names_before = pack_names(dir.path());
  EXPECT_TRUE(testing::dies_in_an_atomic_write([&] { commit_range(options, 50, 100); }));
  EXPECT_EQ(pack_names(dir.path()), names_before);
  DiagnosticList notes;
  {
    const ResultCache cache = ResultCache::open(options, notes);
    EXPECT_EQ(found(cache, 10), value_of(10));
    EXPECT_EQ(found(cache, 60), std::nullopt);
  }
  // The pack is written through an unnamed temporary: the dead commit left no file at all.
  EXPECT_TRUE(testing::temporaries_below(dir.path()).empty());
  // A named temporary (from a file system without unnamed ones) is removed by a later commit
  // once it is an hour old.
  { std::ofstream(dir.path() / "v1" / ".fib-AbC123") << "partial"; }
  const auto temporaries = testing::temporaries_below(dir.path());
  ASSERT_EQ(temporaries.size(), 1u);
  ASSERT_TRUE(commit_range(options, 50, 60).empty());
  EXPECT_EQ(testing::temporaries_below(dir.path()), temporaries) << "too young to be sure";
  age(dir.path() / temporaries[0], 3601);
  ASSERT_TRUE(commit_range(options, 60, 100).empty());
  EXPECT_TRUE(testing::temporaries_below(dir.path()).empty());
  EXPECT_TRUE(notes.items().empty());
}

TEST(ResultCache, DefaultDirectoryFollowsTheEnvironment) {
  testing::ScopedVariable fib("FIB_CACHE_DIR", "/tmp/fib-cache");
  testing::ScopedVariable old_tool("FIB_CACHE_PATH", "/tmp/old-tool-cache");
  testing::ScopedVariable xdg("XDG_CACHE_HOME", "/xdg");
  testing::ScopedVariable home("HOME", "/home/someone");
  EXPECT_EQ(default_cache_directory(), fs::path("/tmp/fib-cache"));
  ::setenv("FIB_CACHE_DIR", "", 1); // the old tool's name for it comes next
  EXPECT_EQ(default_cache_directory(), fs::path("/tmp/old-tool-cache"));
  // The solutions' builds live under the same root.
  EXPECT_EQ(default_build_cache(), fs::path("/tmp/old-tool-cache"));
  ::unsetenv("FIB_CACHE_PATH");
  EXPECT_EQ(default_cache_directory(), fs::path("/xdg/fib"));
  ::setenv("XDG_CACHE_HOME", "relative/xdg", 1);
  EXPECT_EQ(default_cache_directory(), fs::path("/home/someone/.cache/fib"));
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(default_cache_directory(), fs::path("/home/someone/.cache/fib"));
  EXPECT_EQ(default_build_cache(), fs::path("/home/someone/.cache/fib"));
  ::unsetenv("HOME");
  EXPECT_EQ(default_cache_directory(), std::nullopt);
  EXPECT_EQ(default_build_cache(), fs::path("/tmp/.cache/fib"));
}

} // namespace
} // namespace fib
