#pragma once
// `fib collect`: workloads for a dataset's definitions from FlashInfer Level-10 dumps. Reads the
// dumps, matches each call to the definitions whose `fi_api:` tag names its API, binds and checks
// it, selects among the candidates and writes them (docs/collect.md).

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/collect/api_target.hpp>
#include <fib/collect/candidate.hpp>
#include <fib/collect/level10.hpp>
#include <fib/collect/workload_file.hpp>

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

struct CollectOptions {
  std::vector<std::filesystem::path> dumps; // dump roots (read_level10_dump)
  std::filesystem::path dataset;
  std::vector<std::string> definitions; // only these names (exact); none: every definition
  std::vector<std::string> op_types;    // only these op_types; none: every op_type
  CandidateOptions candidates;
  WorkloadWriteOptions write;
};

// What happened for one definition.
struct DefinitionCollection {
  std::string name;
  std::string op_type;
  std::size_t calls = 0;                       // dumped calls of its API (plans not counted)
  std::size_t accepted = 0;                    // calls that made a candidate
  std::map<std::string, std::size_t> rejected; // refusal code → calls
  WorkloadWriteResult written;                 // selection and writes
  std::size_t notes = 0;                       // warnings on accepted calls (blob-too-large)
};

struct CollectReport {
  std::vector<DefinitionCollection> definitions; // those with calls, or selected by name/op_type
  std::size_t calls_read = 0;                    // readable calls in all dumps (plans included)
  std::size_t calls_rejected = 0;                // calls the dump reader left out (debris)
  std::size_t calls_unmatched = 0;           // readable non-plan calls no selected definition takes
  std::size_t definitions_without_calls = 0; // unselected-by-name definitions with no call
};

// Collects workloads as CollectOptions says. Every problem goes to `sink`: the reader's rejected
// calls, each refused call (with the definition in the message; at most a few per definition and
// code, then one line with the count), write notes. A definition selected by name or op_type, or
// one with calls, that ends with no accepted call is `collect.no-workloads` (an error); a selected
// definition without a usable `fi_api:` tag is `collect.no-api`. Errors that stop the run:
// `collect.not-a-dump` for a dump root that cannot be read, `io.*` for a dataset whose
// definitions cannot be listed or a write that fails, `filter.unmatched` for a --definitions or
// --op-types value that matches no definition.
Expected<CollectReport> collect_workloads(const CollectOptions& options, DiagnosticSink& sink);

// The APIs the `fi_api:` tags of `dataset`'s definitions name (only those of `definitions` when it
// is not empty), for dump_include_patterns: a dump of a later pass then holds only the calls
// those definitions can use. Unreadable definitions are reported to `sink` as collect_workloads
// reports them and left out. Errors: as collect_workloads's for a dataset that cannot be listed.
Expected<std::vector<ApiTarget>> dataset_api_targets(const std::filesystem::path& dataset,
                                                     const std::vector<std::string>& definitions,
                                                     DiagnosticSink& sink);

// The report as JSON: {"calls_read", "calls_rejected", "calls_unmatched",
// "definitions_without_calls", "definitions": [{"name", "op_type", "calls", "accepted",
// "rejected": {code: n}, "duplicates", "axes_capped", "not_selected", "selected", "existing",
// "removed", "written", "blobs_written", "blobs_removed", "uuids", "file"}]}.
Json collect_report_json(const CollectReport& report);

} // namespace fib
