// dataset_layout: the dataset trees, their file patterns, and the scanner behind every reading of
// a dataset (the modes are documented in the header).

#include "fib/model/dataset_layout.hpp"

#include "util/file_walk.hpp"

#include <fib/util/atomic_file.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace fib {
namespace {

namespace fs = std::filesystem;

constexpr TreeLayout tree_layout(DatasetTree tree, std::string_view extension, std::size_t depth) {
  return {tree, enum_name(tree), extension, depth};
}

// Indexed by DatasetTree.
constexpr std::array<TreeLayout, 5> k_layouts = {
    tree_layout(DatasetTree::definitions, ".json", 2),
    tree_layout(DatasetTree::workloads, ".jsonl", 2),
    tree_layout(DatasetTree::solutions, ".json", 4),
    tree_layout(DatasetTree::traces, ".jsonl", 3),
    tree_layout(DatasetTree::blob, "", 0),
};

// Which entries a mode takes, by name and depth.
enum class NameRule {
  extension_suffix,     // the name ends with the extension (a bare extension too)
  extension_after_stem, // the name ends with the extension and is longer than it
  any,
};

enum class DepthRule { exact, any };

// Which types of entry match (checked after the name and the depth).
enum class TypeRule {
  any_entry,          // files, directories, links, dangling links
  regular_or_link_to, // a regular file, or a symbolic link to one
  regular_only,       // a regular file itself; links and special files are skipped entries
};

// What a directory that cannot be listed does to the scan. Either way it is a failure of that
// directory: none is skipped silently.
enum class FailureRule {
  report_each, // the scan goes on with the other directories
  end_tree,    // the tree ends there
};

enum class Unmatched { dropped, skipped_entry };

struct ModeRules {
  NameRule name;
  DepthRule depth;
  TypeRule type;
  FailureRule failures;
  Unmatched unmatched;
};

constexpr ModeRules rules_of(ScanMode mode) {
  switch (mode) {
  case ScanMode::validator:
    return {NameRule::extension_suffix, DepthRule::exact, TypeRule::any_entry,
            FailureRule::report_each, Unmatched::skipped_entry};
  case ScanMode::trace_set:
    return {NameRule::extension_suffix, DepthRule::any, TypeRule::any_entry,
            FailureRule::report_each, Unmatched::dropped};
  case ScanMode::strict:
    return {NameRule::extension_after_stem, DepthRule::exact, TypeRule::regular_or_link_to,
            FailureRule::report_each, Unmatched::dropped};
  case ScanMode::occupancy:
    return {NameRule::extension_after_stem, DepthRule::exact, TypeRule::any_entry,
            FailureRule::report_each, Unmatched::dropped};
  case ScanMode::copy:
    return {NameRule::any, DepthRule::any, TypeRule::regular_only, FailureRule::end_tree,
            Unmatched::dropped};
  }
  return {NameRule::any, DepthRule::any, TypeRule::any_entry, FailureRule::report_each,
          Unmatched::dropped};
}

bool name_matches(NameRule rule, std::string_view name, std::string_view extension) {
  switch (rule) {
  case NameRule::extension_suffix:
    return name.ends_with(extension);
  case NameRule::extension_after_stem:
    return name.ends_with(extension) && name.size() > extension.size();
  case NameRule::any:
    return true;
  }
  return false;
}

class TreeWalker {
public:
  TreeWalker(const TreeLayout& layout, ScanMode mode, DirectoryListings* listings, TreeScan& out)
      : m_layout(layout), m_rules(rules_of(mode)), m_listings(listings), m_out(out) {}

  void walk(const fs::path& tree_directory) {
    std::error_code ec;
    if (m_rules.type == TypeRule::regular_only) {
      // The tree directory must be a directory itself, not a link to one.
      const fs::file_status status = fs::symlink_status(tree_directory, ec);
      if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
        fail(tree_directory, ec);
        return;
      }
      if (!fs::exists(status)) {
        return;
      }
      if (!fs::is_directory(status)) {
        m_out.skipped.push_back({tree_directory, skip_reason_of(status)});
        return;
      }
    } else if (!fs::is_directory(tree_directory, ec)) {
      // Missing is an empty tree; a root that cannot be searched is a failure.
      if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
        fail(tree_directory, ec);
      }
      return;
    }
    std::vector<std::string> components;
    walk_directory(tree_directory, components);
  }

private:
  static SkipReason skip_reason_of(const fs::file_status& status) {
    return fs::is_symlink(status) ? SkipReason::symbolic_link : SkipReason::special_file;
  }

  // Records the failure of `directory`; false when the tree ends here.
  bool fail(const fs::path& directory, std::error_code ec) {
    m_out.failures.push_back({directory, ec});
    return m_rules.failures == FailureRule::report_each;
  }

  // Exact-depth modes that drop what does not match never look below the depth of a match.
  bool descends_below(std::size_t depth) const {
    return m_rules.depth == DepthRule::any || m_rules.unmatched == Unmatched::skipped_entry ||
           depth < m_layout.depth;
  }

  // Lists `directory` (`components` below the tree directory) and everything below it; false
  // when the tree ends.
  bool walk_directory(const fs::path& directory, std::vector<std::string>& components) {
    // The entries in byte order of their names: for siblings, that is the order of their paths
    // compared component-wise, without splitting every path at each comparison.
    const std::shared_ptr<const DirectoryListing> listed = listing_of(directory, m_listings);
    if (listed->error) {
      return fail(directory, listed->error);
    }
    for (const DirectoryListing::Entry& listed_entry : listed->entries) {
      const std::string& name = listed_entry.name;
      std::error_code status_ec;
      const fs::file_status status = detail::listed_status(directory, listed_entry, status_ec);
      if (status_ec == std::errc::no_such_file_or_directory) {
        // Gone since the listing (another process's atomic write renamed its temporary file
        // away): not part of the tree any more, and no failure to list it.
        continue;
      }
      if (status_ec) {
        if (!fail(directory, status_ec)) {
          return false;
        }
        continue;
      }
      if (fs::is_regular_file(status) && is_atomic_write_temporary(name)) {
        // A stray temporary of an atomic write (fib/util/atomic_file.hpp) is part of no tree:
        // never reported, copied or read.
        continue;
      }
      components.push_back(name);
      fs::path path = directory / name;
      bool go_on = true;
      if (fs::is_directory(status) && descends_below(components.size())) {
        consider(path, status, components);
        go_on = walk_directory(path, components);
      } else {
        consider(std::move(path), status, components);
      }
      components.pop_back();
      if (!go_on) {
        return false;
      }
    }
    return true;
  }

  // Records the entry at `path` (taken: an entry keeps it) as a match or as skipped, or drops it.
  void consider(fs::path path, const fs::file_status& status,
                const std::vector<std::string>& components) {
    const bool name_ok = name_matches(m_rules.name, components.back(), m_layout.extension);
    const bool depth_ok = m_rules.depth == DepthRule::any || components.size() == m_layout.depth;
    if (!name_ok || !depth_ok) {
      std::error_code ec;
      // Only a link needs a look at what it leads to.
      const bool is_directory =
          fs::is_directory(status) || (fs::is_symlink(status) && fs::is_directory(path, ec));
      if (m_rules.unmatched == Unmatched::skipped_entry && !is_directory) {
        m_out.skipped.push_back(
            {std::move(path), name_ok ? SkipReason::wrong_depth : SkipReason::wrong_extension});
      }
      return;
    }
    switch (m_rules.type) {
    case TypeRule::any_entry:
      break;
    case TypeRule::regular_or_link_to: {
      std::error_code ec;
      if (!fs::is_regular_file(status) &&
          !(fs::is_symlink(status) && fs::is_regular_file(path, ec))) {
        return;
      }
      break;
    }
    case TypeRule::regular_only:
      if (fs::is_directory(status)) {
        return;
      }
      if (!fs::is_regular_file(status)) {
        m_out.skipped.push_back({std::move(path), skip_reason_of(status)});
        return;
      }
      break;
    }
    std::string relative(m_layout.directory);
    for (const std::string& part : components) {
      relative += '/';
      relative += part;
    }
    m_out.entries.push_back({std::move(path), components, fs::path(std::move(relative))});
  }

  const TreeLayout& m_layout;
  ModeRules m_rules;
  DirectoryListings* m_listings;
  TreeScan& m_out;
};

// std::filesystem::path(file_name).stem() without building a path: "." and ".." are their own
// stems, and a name whose only dot is its first character has no extension.
std::string stem_of(const std::string& file_name) {
  if (file_name == "." || file_name == "..") {
    return file_name;
  }
  const std::size_t dot = file_name.rfind('.');
  return dot == std::string::npos || dot == 0 ? file_name : file_name.substr(0, dot);
}

} // namespace

const TreeLayout& layout_of(DatasetTree tree) {
  return k_layouts[static_cast<std::size_t>(tree)];
}

fs::path definition_path(std::string_view op_type, std::string_view name) {
  const TreeLayout& layout = layout_of(DatasetTree::definitions);
  return fs::path(layout.directory) / op_type / (std::string(name) + std::string(layout.extension));
}

LayoutKeys layout_keys(DatasetTree tree, const std::vector<std::string>& components) {
  LayoutKeys keys;
  if (components.size() != layout_of(tree).depth || components.empty()) {
    return keys;
  }
  switch (tree) {
  case DatasetTree::definitions:
  case DatasetTree::workloads:
    keys.op_type = components[0];
    break;
  case DatasetTree::solutions:
    keys.author = components[0];
    keys.op_type = components[1];
    keys.definition = components[2];
    break;
  case DatasetTree::traces:
    keys.author = components[0];
    keys.op_type = components[1];
    break;
  case DatasetTree::blob:
    break;
  }
  keys.name = stem_of(components.back());
  return keys;
}

std::optional<std::string> dataset_root_problem(const fs::path& root) {
  std::error_code ec;
  const fs::file_status status = fs::status(root, ec);
  if (fs::is_directory(status)) {
    return std::nullopt;
  }
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    return "cannot be looked up (" + ec.message() + ")";
  }
  return fs::exists(status) ? "is not a directory" : "does not exist";
}

TreeScan scan_tree(const fs::path& root, DatasetTree tree, ScanMode mode,
                   DirectoryListings* listings) {
  TreeScan out;
  const TreeLayout& layout = layout_of(tree);
  // Depth first, each directory's entries in sorted order, an entry before what is below it:
  // that is the sorted path order already (component-wise), for entries and skipped alike.
  TreeWalker(layout, mode, listings, out).walk(root / layout.directory);
  return out;
}

} // namespace fib
