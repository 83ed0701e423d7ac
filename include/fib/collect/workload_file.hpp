#pragma once
// Writing collected workloads into a dataset: `workloads/<op_type>/<name>.jsonl` lines and their
// `blob/workloads/<op_type>/<name>/<name>_<uuid>.safetensors` files, so that no kill at any moment
// leaves a partial line, a partial blob, a line without its blob or (after the next run) a blob
// without its line (docs/collect.md, "Writing").

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/collect/candidate.hpp>
#include <fib/collect/selection.hpp>
#include <fib/model/definition.hpp>
#include <fib/util/atomic_file.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

// Whether the new workloads join the definition's existing ones or take their place.
enum class ReplaceMode { append, replace };

// Makes the uuid of each new workload (a random version-4 uuid by default; tests pass a seeded
// one).
using UuidSource = std::function<std::string()>;

// A random version-4 uuid, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx" (from std::random_device).
std::string random_uuid();

// The blob a workload line's `path` names, below `root`, in either form found in datasets: the
// nested `blob/workloads/<op>/<name>/<file>` that fib writes, or the flat
// `blob/workloads/<op>/<file>`, with or without a leading "./" (a path of one form whose file is
// only in the other form's place is found there too). nullopt when neither exists as a regular
// file, or the path is absolute, holds `..` or leaves `blob/`.
std::optional<std::filesystem::path> resolve_workload_blob(const std::filesystem::path& root,
                                                           const Definition& definition,
                                                           std::string_view path);

struct WorkloadWriteOptions {
  ReplaceMode replace = ReplaceMode::append;
  DryRun dry_run = DryRun::no;
  SelectionPolicy policy;
  UuidSource uuid = random_uuid;
  std::chrono::milliseconds lock_timeout{30'000};
};

struct WorkloadWriteResult {
  std::size_t existing = 0;       // lines the file had
  std::size_t removed = 0;        // of those, replaced (ReplaceMode::replace with a selection)
  Selection selection;            // over the candidates given
  std::vector<std::string> uuids; // of the workloads written, in the order written
  std::size_t blobs_written = 0;
  std::size_t blobs_removed = 0; // blobs of replaced lines that no new line names
  std::filesystem::path file;    // the workloads file
};

// Selects among `candidates` (select_workloads, against the file's existing workloads unless they
// are replaced) and writes the selection for `definition` below `root`, under the lock of the
// file's directory (fib/util/file_lock.hpp), so concurrent runs never lose each other's lines:
// 0. the temporaries a killed write left in the file's directory and the definition's blob
//    directory are removed (`sweeper`, one per run: fib/util/atomic_file.hpp);
// 1. blobs an earlier, interrupted run wrote but no line names are removed first (it leaves a
//    journal, `.fib-collect-pending.json` in the definition's blob directory; `collect.recovered`
//    in `notes`);
// 2. each selected workload's blob (its blob inputs, keyed by input name) is written, never over
//    an existing file;
// 3. the file is rewritten in one atomic step: its existing lines as they were (none with
//    ReplaceMode::replace), then one line per new workload
//    {"definition", "solution": null, "workload": {"uuid", "axes", "inputs"}, "evaluation": null};
// 4. with ReplaceMode::replace, the blobs the old lines named that no new line names are removed,
//    when they are the definition's own (in its nested blob directory, or flat and named
//    `<name>_…`): a blob elsewhere may be shared, and stays.
// Nothing is written or removed when nothing is selected: in particular ReplaceMode::replace
// never empties a definition's workloads. With DryRun::yes nothing is written at all (the result
// says what would be). Errors: `io.unsafe-path` for an op_type or name that is not a safe path
// segment or a symbolic link on the way; `io.lock-timeout`; `io.read` / `io.write` /
// `io.too-large`; `collect.tensor-file` when a selected call's tensor changed since it was read.
Expected<WorkloadWriteResult>
write_workloads(const std::filesystem::path& root, const Definition& definition,
                const std::vector<Candidate>& candidates, const WorkloadWriteOptions& options,
                StaleTemporarySweeper& sweeper, std::vector<Diagnostic>& notes);

} // namespace fib
