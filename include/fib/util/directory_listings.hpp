#pragma once
// DirectoryListings: the sorted listings of directories, each made once and shared by every walk
// of one run. `fib validate --dataset` walks the same tree twice at the same time (the dataset
// scan, and the old-schema look at every file below the root); with one DirectoryListings they
// list each directory once between them, and both see the same snapshot of it.

#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace fib {

// --- Interface ---

// One directory's entries ("." and ".." left out), sorted by name (byte order), as far as they
// could be listed: on a failure part way, `error` is set and `entries` holds what came before it.
// Each entry is its name and the type the listing gave (readdir's d_type, not following a link),
// so asking its type costs no system call where the file system gave one; `file_type::unknown`
// where it gave none. An entry holds no path: a run lists thousands of them, and a path per entry
// cost more than the listing's own system calls (bench/README.md).
struct DirectoryListing {
  struct Entry {
    std::string name;
    std::filesystem::file_type type = std::filesystem::file_type::unknown;
  };
  std::vector<Entry> entries;
  std::error_code error;
};

// Lists `directory` (never throws but for allocation failure).
DirectoryListing list_directory_sorted(const std::filesystem::path& directory);

// A thread-safe memo of listings, keyed by the directory's path as given (the same directory
// named two ways is listed twice). The first caller for a path lists it; callers meanwhile wait
// for that listing, later ones take it at once. Listings are kept until the memo is destroyed:
// use one for one pass over a tree, never across changes the pass must see.
class DirectoryListings {
public:
  DirectoryListings();
  // Throws only what allocation throws (its waiting callers then get a listing whose error is
  // not_enough_memory, never a wait without end).
  std::shared_ptr<const DirectoryListing> of(const std::filesystem::path& directory);

private:
  struct Slot {
    std::mutex mutex;
    std::condition_variable ready;
    std::shared_ptr<const DirectoryListing> listing; // null until listed
  };
  std::mutex m_mutex;
  std::unordered_map<std::string, std::shared_ptr<Slot>> m_slots;
  std::shared_ptr<const DirectoryListing> m_out_of_memory; // made up front: needs no allocation
};

// `listings->of(directory)` with a memo, else a listing of its own.
std::shared_ptr<const DirectoryListing> listing_of(const std::filesystem::path& directory,
                                                   DirectoryListings* listings);

} // namespace fib
