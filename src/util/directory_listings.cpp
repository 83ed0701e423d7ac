#include "fib/util/directory_listings.hpp"

#include <algorithm>
#include <exception>
#include <utility>

namespace fib {

DirectoryListing list_directory_sorted(const std::filesystem::path& directory) {
  DirectoryListing listing;
  std::filesystem::directory_iterator it(directory, listing.error);
  for (; !listing.error && it != std::filesystem::directory_iterator();
       it.increment(listing.error)) {
    listing.entries.push_back({it->path().filename().native(), *it});
  }
  std::sort(listing.entries.begin(), listing.entries.end(),
            [](const DirectoryListing::Entry& a, const DirectoryListing::Entry& b) {
              return a.name < b.name;
            });
  return listing;
}

DirectoryListings::DirectoryListings()
    : m_out_of_memory([] {
        auto listing = std::make_shared<DirectoryListing>();
        listing->error = std::make_error_code(std::errc::not_enough_memory);
        return listing;
      }()) {}

std::shared_ptr<const DirectoryListing>
DirectoryListings::of(const std::filesystem::path& directory) {
  std::shared_ptr<Slot> slot;
  bool lists = false;
  {
    const std::lock_guard lock(m_mutex);
    if (const auto it = m_slots.find(directory.native()); it != m_slots.end()) {
      slot = it->second;
    } else {
      slot = std::make_shared<Slot>();
      m_slots.emplace(directory.native(), slot); // a throw here leaves no slot behind
      lists = true;
    }
  }
  if (!lists) {
    std::unique_lock lock(slot->mutex);
    slot->ready.wait(lock, [&] { return slot->listing != nullptr; });
    return slot->listing;
  }
  std::shared_ptr<const DirectoryListing> listing;
  std::exception_ptr failure;
  try {
    listing = std::make_shared<const DirectoryListing>(list_directory_sorted(directory));
  } catch (...) {
    // Out of memory: the callers waiting for this listing must not wait forever. They get an
    // empty one that says so; this caller gets the exception.
    failure = std::current_exception();
    listing = m_out_of_memory;
  }
  {
    const std::lock_guard lock(slot->mutex);
    slot->listing = listing;
  }
  slot->ready.notify_all();
  if (failure) {
    std::rethrow_exception(failure);
  }
  return listing;
}

std::shared_ptr<const DirectoryListing> listing_of(const std::filesystem::path& directory,
                                                   DirectoryListings* listings) {
  if (listings != nullptr) {
    return listings->of(directory);
  }
  return std::make_shared<const DirectoryListing>(list_directory_sorted(directory));
}

} // namespace fib
