#pragma once
// The layout of a FlashInfer-Trace dataset, in one place: the trees below its root, where each
// kind of file sits in them, and the one scanner every command lists them with.
//
//   definitions/<op_type>/<name>.json
//   workloads/<op_type>/<name>.jsonl
//   solutions/<author>/<op_type>/<definition>/<name>.json
//   traces/<author>/<op_type>/<name>.jsonl
//   blob/...                                   (tensor files, any name at any depth)
//
// The old tool read datasets with two loaders that disagree on purpose (its validator checks every
// path component; its TraceSet loader takes files at any depth), and fib's own commands need
// stricter or looser readings still. Each reading is a named ScanMode below; the differences are
// part of the observable behaviour (what `fib validate` reports as ignored, what `fib report`
// loads, what `fib tag --dataset` selects), so callers pick the mode, never a set of flags.

#include <fib/base/enum_names.hpp>
#include <fib/util/directory_listings.hpp>

#include <array>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace fib {

// --- Interface ---

// The trees below a dataset root. The name of each is its directory name.
enum class DatasetTree { definitions, workloads, solutions, traces, blob };

template <> struct EnumNames<DatasetTree> {
  static constexpr std::array k_table = std::to_array<EnumName<DatasetTree>>({
      {DatasetTree::definitions, "definitions"},
      {DatasetTree::workloads, "workloads"},
      {DatasetTree::solutions, "solutions"},
      {DatasetTree::traces, "traces"},
      {DatasetTree::blob, "blob"},
  });
};

// Where the files of a tree sit: `depth` path components below the tree directory, the last one
// ending with `extension`. `blob` has no pattern (extension "", depth 0).
struct TreeLayout {
  DatasetTree tree;
  std::string_view directory; // enum_name(tree): "definitions", …
  std::string_view extension; // ".json" or ".jsonl"
  std::size_t depth;          // 2 for definitions and workloads, 4 for solutions, 3 for traces
};

const TreeLayout& layout_of(DatasetTree tree);

// The trees that hold documents, in the order the validator and the TraceSet loader read them.
inline constexpr std::array k_document_trees = {DatasetTree::definitions, DatasetTree::workloads,
                                                DatasetTree::solutions, DatasetTree::traces};

// `definitions/<op_type>/<name>.json`, relative to the dataset root.
std::filesystem::path definition_path(std::string_view op_type, std::string_view name);

// What a file's place in the layout says about it. Fields a tree does not encode are "".
struct LayoutKeys {
  std::string op_type;    // every document tree
  std::string name;       // the file stem (std::filesystem::path::stem of the last component)
  std::string author;     // solutions and traces
  std::string definition; // solutions: the <definition> directory
};

// The keys of a file of a document tree, from its components below the tree directory. The
// components must number the tree's depth (scan_tree guarantees it for exact-depth modes).
LayoutKeys layout_keys(DatasetTree tree, const std::vector<std::string>& components);

// How scan_tree reads a tree. Every mode lists entries in sorted path order (component-wise, by
// byte), never enters a symbolic link to a directory, and finds nothing when the tree directory
// is missing. No mode skips a directory silently: each one that cannot be listed (no permission
// included, and a tree directory that cannot even be looked up) is a ListingFailure of that
// directory. No mode sees a regular file named like an atomic write's temporary
// (is_atomic_write_temporary, fib/util/atomic_file.hpp): a stray `.fib-XXXXXX` is neither an
// entry nor skipped, so it is never reported, parsed or copied.
enum class ScanMode {
  // The old tool's validator scan (`fib validate --dataset`). An entry matches when its name ends
  // with the tree's extension (a bare `.json` too) and it lies exactly the tree's depth down; like
  // Python's rglob, a directory with such a name matches as well (reading it fails later, and is
  // reported then). Every other entry that is not a directory is returned as skipped, with the
  // reason (wrong extension, or wrong depth), because fib reports what the old tool silently
  // ignored. Each directory that cannot be listed is a failure of its own (the old tool's rglob
  // skipped those it may not open); the scan goes on with the others.
  validator,
  // The old tool's TraceSet loader (`fib report`). An entry matches when its name ends with the
  // tree's extension, at any depth: the loader links files by their JSON, not by their path.
  // Directories with such a name match too; nothing is returned as skipped. Listing failures as
  // in `validator`.
  trace_set,
  // fib's own reading of definitions (`fib tag --dataset`): exactly the tree's depth (nothing
  // deeper is even listed), the name more than the bare extension, and a regular file (a symbolic
  // link to one counts; writing through it is refused later). Each directory that cannot be
  // listed is a failure of its own and loses its entries; the scan goes on with the others, so
  // the caller can report every one.
  strict,
  // Which names are taken (`fib stage`): like `strict`, but an entry of any type occupies its name
  // (a directory or a dangling link called `x.json` still blocks staging `x` there). Listing
  // failures as in `strict`: the names in such a directory are unknown, which the caller reports.
  occupancy,
  // Every file to copy (`fib report merge`): any name at any depth, regular files only, links not
  // followed. Symbolic links and special files (the tree directory itself included) are returned
  // as skipped. The first directory that cannot be listed ends the tree, recorded as a failure
  // of that directory.
  copy,
};

// A matching entry.
struct LayoutEntry {
  std::filesystem::path path;          // root / tree directory / components
  std::vector<std::string> components; // below the tree directory, e.g. {"gemm", "gemm_n.json"}
  std::filesystem::path relative;      // tree directory / components, relative to the root
};

enum class SkipReason {
  wrong_extension, // validator: the name does not end with the tree's extension
  wrong_depth,     // validator: the right extension at another depth
  symbolic_link,   // copy: a symbolic link (not followed)
  special_file,    // copy: neither a regular file nor a directory
};

struct SkippedEntry {
  std::filesystem::path path; // as LayoutEntry::path
  SkipReason reason;
};

// A directory that could not be listed (completely).
struct ListingFailure {
  std::filesystem::path directory;
  std::error_code error;
};

struct TreeScan {
  std::vector<LayoutEntry> entries;     // sorted by path
  std::vector<SkippedEntry> skipped;    // sorted by path
  std::vector<ListingFailure> failures; // in the order they happened
};

// Why `root` cannot be read as a dataset root, for the message "dataset root PROBLEM: ROOT":
// "does not exist", "is not a directory" (a file, say), or "cannot be looked up (REASON)";
// nullopt when it is a directory (a symbolic link to one counts).
std::optional<std::string> dataset_root_problem(const std::filesystem::path& root);

// Scans `root / <tree directory>` the way `mode` says. The tree directory itself may be a
// symbolic link to a directory in every mode but `copy`. Directories are listed through
// `listings` when one is given (shared with another walk of the same tree). Never throws (but for
// allocation failure).
TreeScan scan_tree(const std::filesystem::path& root, DatasetTree tree, ScanMode mode,
                   DirectoryListings* listings = nullptr);

} // namespace fib
