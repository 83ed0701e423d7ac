#include "util/file_walk.hpp"

#include <fib/base/codes.hpp>
#include <fib/util/atomic_file.hpp>

#include <fmt/format.h>

#include <fnmatch.h>

#include <algorithm>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace fib::detail {
namespace {

namespace fs = std::filesystem;

class FileLister {
public:
  FileLister(std::initializer_list<std::string_view> extensions, DirectoryListings* listings,
             WalkOrder order, FilesBelow& out)
      : m_extensions(extensions), m_listings(listings), m_order(order), m_out(out) {}

  // Lists `directory` and, recursively, every subdirectory that is not a symbolic link. Each
  // directory's entries are taken in byte order of their names, a subdirectory's files where it
  // stands: depth first, that is the sorted path order (component-wise) of the files. In
  // WalkOrder::names_descending everything is taken in the opposite order (a directory's error
  // after its entries), so that reversing what was found gives the same order.
  void list(const fs::path& directory) {
    const std::shared_ptr<const DirectoryListing> listing = listing_of(directory, m_listings);
    // As the entries' own parent_path() names it (a trailing slash of `directory` aside).
    const bool in_reports = (directory / "x").parent_path().filename() == "reports";
    if (m_order == WalkOrder::names_ascending) {
      report_error(directory, *listing);
      for (const DirectoryListing::Entry& entry : listing->entries) {
        take(directory, entry, in_reports);
      }
    } else {
      for (auto entry = listing->entries.rbegin(); entry != listing->entries.rend(); ++entry) {
        take(directory, *entry, in_reports);
      }
      report_error(directory, *listing);
    }
  }

private:
  void report_error(const fs::path& directory, const DirectoryListing& listing) {
    if (listing.error) {
      Diagnostic d = make_diagnostic(
          codes::k_io_read, fmt::format("cannot list the directory: {}", listing.error.message()));
      d.file = directory;
      m_out.errors.push_back(std::move(d));
    }
  }

  // One entry of `directory`'s listing: a subdirectory is listed, a wanted file kept.
  void take(const fs::path& directory, const DirectoryListing::Entry& entry, bool in_reports) {
    std::error_code type_ec;
    const fs::file_status status = listed_status(directory, entry, type_ec);
    if (type_ec) {
      return; // gone since the listing
    }
    if (fs::is_directory(status)) {
      list(directory / entry.name);
    } else if (wanted(entry.name, in_reports)) {
      fs::path path = directory / entry.name;
      if (fs::is_regular_file(status) ||
          (fs::is_symlink(status) && fs::is_regular_file(path, type_ec))) { // a link to one
        m_out.files.push_back(std::move(path));
      }
    }
  }

  // Whether the file `name` (in a directory named "reports" when `in_reports`) is listed.
  bool wanted(std::string_view name, bool in_reports) const {
    const bool is_report = in_reports && name.starts_with("report-");
    // A stray temporary of an atomic write is no input, whatever its extension looks like.
    const bool is_temporary = is_atomic_write_temporary(name);
    return !is_report && !is_temporary &&
           std::find(m_extensions.begin(), m_extensions.end(), extension_of(name)) !=
               m_extensions.end();
  }

  // std::filesystem::path(name).extension() of a file name, without building a path: "" for "."
  // and "..", and for a name whose only dot is its first character.
  static std::string_view extension_of(std::string_view name) {
    if (name == "." || name == "..") {
      return {};
    }
    const std::size_t dot = name.rfind('.');
    return dot == std::string_view::npos || dot == 0 ? std::string_view{} : name.substr(dot);
  }

  std::initializer_list<std::string_view> m_extensions;
  DirectoryListings* m_listings;
  WalkOrder m_order;
  FilesBelow& m_out;
};

} // namespace

fs::file_status listed_status(const fs::path& directory, const DirectoryListing::Entry& entry,
                              std::error_code& ec) {
  ec.clear();
  if (entry.type != fs::file_type::unknown) {
    return fs::file_status(entry.type);
  }
  return fs::symlink_status(directory / entry.name, ec);
}

FilesBelow list_files_below(const std::filesystem::path& directory,
                            std::initializer_list<std::string_view> extensions,
                            DirectoryListings* listings, WalkOrder order) {
  FilesBelow result;
  FileLister(extensions, listings, order, result).list(directory);
  if (order == WalkOrder::names_descending) { // found in the opposite of sorted path order
    std::reverse(result.files.begin(), result.files.end());
    std::reverse(result.errors.begin(), result.errors.end());
  }
  return result;
}

bool matches_any_glob(const std::vector<std::string>& globs, const std::filesystem::path& file,
                      const std::filesystem::path& directory) {
  if (globs.empty()) {
    return false;
  }
  const std::string name = file.filename().string();
  const std::string relative = file.lexically_relative(directory).generic_string();
  const std::string as_found = file.generic_string();
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& glob) {
    return ::fnmatch(glob.c_str(), name.c_str(), 0) == 0 ||
           ::fnmatch(glob.c_str(), relative.c_str(), 0) == 0 ||
           ::fnmatch(glob.c_str(), as_found.c_str(), 0) == 0;
  });
}

} // namespace fib::detail
