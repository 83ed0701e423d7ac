#include "fib/util/directory_listings.hpp"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <string_view>
#include <utility>

namespace fib {

namespace {

// The type readdir gave, without following a link; unknown where the file system gave none.
std::filesystem::file_type listed_type(unsigned char d_type) {
  using std::filesystem::file_type;
  switch (d_type) {
  case DT_REG:
    return file_type::regular;
  case DT_DIR:
    return file_type::directory;
  case DT_LNK:
    return file_type::symlink;
  case DT_FIFO:
    return file_type::fifo;
  case DT_SOCK:
    return file_type::socket;
  case DT_CHR:
    return file_type::character;
  case DT_BLK:
    return file_type::block;
  default:
    return file_type::unknown;
  }
}

// Closes the directory stream on every way out.
struct DirectoryStream {
  explicit DirectoryStream(DIR* opened) : dir(opened) {}
  DIR* dir = nullptr;
  DirectoryStream(const DirectoryStream&) = delete;
  DirectoryStream& operator=(const DirectoryStream&) = delete;
  ~DirectoryStream() {
    if (dir != nullptr) {
      ::closedir(dir);
    }
  }
};

} // namespace

DirectoryListing list_directory_sorted(const std::filesystem::path& directory) {
  DirectoryListing listing;
  const DirectoryStream stream(::opendir(directory.c_str()));
  if (stream.dir == nullptr) {
    listing.error = std::error_code(errno, std::generic_category());
    return listing;
  }
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(stream.dir);
    if (entry == nullptr) {
      if (errno != 0) {
        listing.error = std::error_code(errno, std::generic_category());
      }
      break;
    }
    const std::string_view name(entry->d_name);
    if (name == "." || name == "..") {
      continue;
    }
    listing.entries.push_back({std::string(name), listed_type(entry->d_type)});
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
