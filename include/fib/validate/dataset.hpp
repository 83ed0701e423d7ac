#pragma once
// Dataset scanning and whole-dataset validation: `fib validate --dataset DIR`.

#include <fib/base/diagnostic.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/model/python_checks.hpp>
#include <fib/util/directory_listings.hpp>
#include <fib/util/result_cache.hpp>
#include <fib/validate/report.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fib {

// --- Interface ---

// A file the old tool's scan finds, with the keys derived from its path.
struct ScannedFile {
  std::filesystem::path path; // root / relative, as the old tool builds it
  std::string op_type;        // the op_type directory
  std::string name;           // the stem: definition name, or solution name for solutions
  std::string author;         // solutions and traces
  std::string definition;     // solutions: the <definition_name> directory
};

struct DefinitionFile {
  ScannedFile file;
  // "duplicate definition name: {earlier} and {later}" when an earlier file had the same stem.
  std::optional<std::string> duplicate_error;
};

// A file the old tool would silently skip, and why (fib reports these).
struct IgnoredFile {
  std::filesystem::path path;
  std::string reason;
};

struct DatasetScan {
  std::map<std::string, DefinitionFile> definitions; // by stem (last wins)
  std::map<std::string, ScannedFile> workloads;      // by stem (last wins)
  std::vector<ScannedFile> solutions;                // sorted by path, never de-duplicated
  std::map<std::pair<std::string, std::string>, ScannedFile> traces; // by (author, stem)
  std::vector<ScannedFile> shadowed; // workload and trace files replaced by a later duplicate
  std::vector<IgnoredFile> ignored;  // wrong depth, wrong extension
  // One `io.read` (file = the directory) per directory that could not be listed: what it holds
  // is missing from the scan, so validate_dataset reports these to its environment sink.
  std::vector<Diagnostic> unlisted;
};

// The old tool's root as str(Path(text)): "." components and trailing slashes dropped.
std::filesystem::path normalize_root(const std::filesystem::path& root);

// Scans definitions/, workloads/, solutions/ and traces/ as the old tool's validator does
// (scan_tree with ScanMode::validator: exact depth, sorted path order, component-wise by code
// point) and keys them the old tool's way: a definition or workload stem, or a trace's (author,
// stem), seen again replaces the earlier file (the last one wins; replaced workloads and traces go
// to `shadowed`, a replaced definition leaves its duplicate_error); solutions are all kept.
// Directories are listed through `listings` when one is given (shared with another walk).
DatasetScan scan_dataset(const std::filesystem::path& root, DirectoryListings* listings = nullptr);

enum class GpuChecks { enabled, disabled };
enum class UnmatchedFilters { refused, warned };

// 1-based shard K of N: a definition belongs to it when fnv1a64(name) % N == K - 1.
struct Shard {
  std::size_t index = 1;
  std::size_t count = 1;
};

// Which definition a shard owns (deterministic across machines and runs).
bool shard_owns(const Shard& shard, std::string_view definition_name);

struct ValidateDatasetOptions {
  std::filesystem::path root;
  // As given on the command line (order and duplicates kept for the report's config); empty means
  // the default set. Unknown names are a usage error, checked by resolve_checks.
  std::vector<std::string> checks;
  GpuChecks gpu = GpuChecks::enabled;
  std::vector<std::string> op_types;
  std::vector<std::string> definitions;
  // What a filter value that matches no definition of the dataset does: stops the run
  // (`refused`: the error, nothing validated) or is a warning and the run checks what the other
  // values match (`warned`: the old tool's silence made visible, for --exit-zero).
  UnmatchedFilters unmatched_filters = UnmatchedFilters::refused;
  // Nullopt checks the whole dataset; a shard checks its part and records it in the report
  // (DatasetReport::shard, for validate-merge).
  std::optional<Shard> shard;
  // Reference execution (the old tool's reference build, plus fib's smoke run) through `runner`,
  // for definitions that loaded; its messages go to the definition category. When the worker
  // cannot be used, the definition category says so (an info), and with
  // `reference_checks_requested` (--exec/--smoke given) the environment gets the error too.
  ReferenceChecks reference_checks = ReferenceChecks::none;
  ReferenceRunner* runner = nullptr;
  bool reference_checks_requested = false;
  // How many processes validate the definitions: 0 is one per core, 1 is this process only. More
  // than one runs the chunks in forked worker processes (one thread each), except when `runner`
  // is set: the reference worker's connection cannot be shared. Reports are the same either way.
  std::size_t processes = 0;
  // The persistent result cache (may be null): whole definition reports when nothing runs in the
  // reference worker, and the Python front-end's answers when it is a CachedPythonFrontend over
  // the same cache. The caller commits it. Never changes a report.
  ResultCache* cache = nullptr;
  // Called after each chunk of definitions is checked, with (done, total); may be empty.
  std::function<void(std::size_t, std::size_t)> progress;
  // Where the run's working structures go once it is done with them (the tree's scan, the target
  // list and its file lists, the old-schema listing: tens of thousands of allocations for a
  // dataset of thousands of definitions). Called once, on the calling thread, just before
  // validate_dataset returns (also when it stops on unmatched filters); not when it throws, and
  // what it throws propagates. Empty: they are destroyed there. A program that exits soon after
  // can keep them instead of freeing them one allocation at a time (`fib` does;
  // docs/architecture.md, "Dataset validation"). What it is given holds no file, lock or
  // process: destroying it only frees memory.
  std::function<void(std::shared_ptr<void>)> done_with;
};

// The checks to echo in the report: the default set when `requested` is empty (CPU set when GPU
// checks are disabled), `benchmark` dropped when they are disabled. Error: the old tool's message
// "unknown check '{c}', valid: [...]" (usage).
Expected<std::vector<std::string>> resolve_checks(const std::vector<std::string>& requested,
                                                  GpuChecks gpu);

// One `cli.filter-unmatched` diagnostic (an error of the usage class with a hint naming
// --exit-zero; a warning without it under UnmatchedFilters::warned) for each --op-types value that
// is the op_type of no definition of `scan` and each --definitions value that is the name of none,
// judged on the whole dataset (before sharding), in the order given, once per value: "--op-types:
// 'X' matches no op_type directory of definitions/ in ROOT" ("--definitions: 'X' matches no
// definition name in ROOT"), with "; did you mean 'Y'?" when a name is close (closest_match).
std::vector<Diagnostic> unmatched_filters(const ValidateDatasetOptions& options,
                                          const DatasetScan& scan,
                                          const std::filesystem::path& root);

// The names of the target definitions of `scan`, sorted: all of them, or those the filters select
// (a definition whose op_type is one of options.op_types or whose name is one of
// options.definitions); then, with options.shard, only those the shard owns (shard_owns).
std::vector<std::string> select_targets(const ValidateDatasetOptions& options,
                                        const DatasetScan& scan);

// Validates the dataset, 64 target definitions at a time (so peak memory does not grow with the
// dataset), and fills report.definition_files for every target. `python` runs the Python-exact
// definition checks (when it cannot start, they are skipped and one python.unavailable diagnostic
// is reported to `environment`). Problems that stop fib from judging (Python start-up, the
// worker when --exec/--smoke asked for it) go to `environment`; everything about the data is in
// the report, each message with its code. The caller counts both (count_findings) for the exit
// status. Filter values that match nothing (unmatched_filters) go to `environment`: as usage errors
// with UnmatchedFilters::refused, and then nothing is validated and the report holds no
// definition (the caller writes no report files when `environment` counted a usage error); as
// warnings with UnmatchedFilters::warned.
DatasetReport validate_dataset(const ValidateDatasetOptions& options, PythonFrontend& python,
                               DiagnosticSink& environment);

// The record of `shard` of the dataset `scan` found (before filters and sharding).
ShardRecord shard_record(const Shard& shard, const DatasetScan& scan);

enum class PartialMerge { refused, allowed };

// What is wrong with `reports` (read from `files`, in the same order) as the complete set of
// shards of one run, judged against the first report that has a shard record:
//   shard.foreign    a report with no record, or of another shard count, dataset (definitions
//                    and fingerprint), fib version or configuration (checks, --disable-gpu,
//                    filters); file = that report
//   shard.duplicate  a shard index seen twice; file = the later report
//   shard.missing    the indices of 1..N that no report has (one diagnostic)
// Errors (usage) with PartialMerge::refused, with a hint naming --allow-partial; warnings with
// PartialMerge::allowed. Empty for a sound set.
std::vector<Diagnostic> check_shard_set(const std::vector<DatasetReport>& reports,
                                        const std::vector<std::filesystem::path>& files,
                                        PartialMerge mode);

// Merges shard reports into one: definitions (and their definition_files) are united (a later
// report wins on a name clash), dataset-level messages de-duplicated, the config taken from the
// first report with its definitions filter united.
DatasetReport merge_reports(const std::vector<DatasetReport>& reports);

} // namespace fib
