#pragma once
// What the dataset-validation driver (dataset.cpp), its loaders (dataset_load.cpp) and the
// category checks (categories/*.cpp) share: the parsed files of one target definition (a
// DefinitionJob), what the worker phases left for it, and the context every category reads.
// Private to src/validate.

#include "util/keyed_memo.hpp"

#include <fib/base/diagnostic.hpp>
#include <fib/exec/worker_client.hpp>
#include <fib/io/json_io.hpp>
#include <fib/io/safetensors.hpp>
#include <fib/model/definition.hpp>
#include <fib/model/solution.hpp>
#include <fib/model/trace.hpp>
#include <fib/util/sha256.hpp>
#include <fib/validate/dataset.hpp>
#include <fib/validate/report.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fib::dataset_checks {

// --- Interface ---

// The state of a blob file a definition's checks read, as the result cache compares it: the full
// path and a fingerprint of what stat() says (or of why it failed).
struct BlobFingerprint {
  std::string path;
  std::string fingerprint;
  bool operator==(const BlobFingerprint&) const = default;
};

// A definition file, read and parsed.
struct LoadedDefinition {
  const DefinitionFile* entry = nullptr;
  std::optional<JsonDocument> document;
  Definition definition;
  std::vector<Diagnostic> errors; // legacy errors: the definition "failed to load"
  DiagnosticList findings;        // everything parse/lint reported
  bool loaded() const { return errors.empty() && !entry->duplicate_error; }
  // The Definition parsed. A duplicate stem keeps the later file's parsed Definition (as the old
  // tool does), so its workloads are still checked.
  bool parsed() const { return errors.empty(); }
};

// Why a workload, solution or trace file did not parse: the old tool's text and the code of the
// first problem behind it (io.read, json.parse, schema.required, …).
struct LoadError {
  std::string code;
  std::string text;
  int line = 0;        // the file line of the first problem (0 when unknown)
  std::string pointer; // its pointer (within the line for JSON Lines)
};

// A workload or trace file (JSON Lines), read and parsed.
struct LoadedTraceFile {
  const ScannedFile* file = nullptr;
  bool parsed = false;
  std::vector<TraceLine> lines;
  LoadError error; // "{text} (line N)" when not parsed
};

// A solution file, read and parsed.
struct LoadedSolution {
  const ScannedFile* file = nullptr;
  bool parsed = false;
  Solution solution;
  LoadError error;
};

// What the old-schema look takes a listed .json file for: a definition when its last
// `definitions` directory is deeper than its last `solutions` one, else a solution.
enum class OldSchemaRole : std::uint8_t { definition, solution };

// The look's answer for one file, given by whoever had its bytes at hand.
struct SignedFile {
  OldSchemaRole role = OldSchemaRole::definition;
  bool sign = false; // `type` without `op_type` (a definition), a capitalised language (solution)
};

// Answers by path (std::filesystem::path::native()); an answer is used only for a file the look
// takes in the same role.
using SignedFiles = std::unordered_map<std::string, SignedFile>;

// Everything validate needs about one target definition. The pointers go into the chunk that
// holds the loaded files.
struct DefinitionJob {
  std::string name;
  LoadedDefinition* definition = nullptr;
  LoadedTraceFile* workload = nullptr;
  std::vector<LoadedSolution*> solutions;
  std::vector<LoadedTraceFile*> traces;
  // From the Python phase: fib-origin errors of the Python-exact checks (definition.run.arity).
  std::vector<Diagnostic> python_errors;
  // From the reference phase: the build check (and smoke run), in the definition category;
  // nullopt when the worker could not be used.
  std::optional<std::vector<CheckMessage>> reference_messages;
  // From the same phase: the builds of the baseline solutions, and the benchmark category.
  std::optional<std::vector<CheckMessage>> baseline_build_messages;
  std::optional<CheckResult> benchmark;
  DefinitionReport report;
  // Set when the result cache had the whole report (nothing was parsed or checked then).
  bool from_cache = false;
  // Whether the definition file parsed (before the Python checks), from loading or the cache.
  bool definition_parsed = false;
  // The cache key of the report (made from the files' bytes) and the blobs its checks looked at,
  // when the run caches reports.
  std::optional<Sha256Digest> cache_key;
  std::vector<BlobFingerprint> blobs;
  // The old-schema look's answers for the definition and solution files read for this job.
  std::vector<std::pair<std::string, SignedFile>> signed_files;
};

// Whether blob files exist, looked up at most once per path in a run: the inputs of a workload
// often share one file, and the layout and workload categories both ask. The run judges each
// blob as it was when first looked at. Thread-safe.
class BlobPresence {
public:
  // Whether stat() of the path `full` succeeds, as std::filesystem::exists answers (false when it
  // cannot be looked up).
  bool exists(const std::string& full);

private:
  detail::KeyedMemo<bool> m_known;
};

// What every category check reads besides its job.
struct CategoryContext {
  std::filesystem::path root; // the dataset root, as normalize_root gives it
  GpuChecks gpu = GpuChecks::enabled;
  std::shared_ptr<BlobPresence> blobs = std::make_shared<BlobPresence>(); // the run's
};

// The one signature of a category check: its result, or nullopt when the category did not run
// ("None (skipped)" in the report).
using CategoryCheck = std::optional<CheckResult> (*)(const DefinitionJob&, const CategoryContext&);

std::optional<CheckResult> check_layout(const DefinitionJob& job, const CategoryContext& context);
std::optional<CheckResult> check_definition(const DefinitionJob& job,
                                            const CategoryContext& context);
std::optional<CheckResult> check_workload(const DefinitionJob& job, const CategoryContext& context);

// Which lines workload_line_errors reads: a workload file's (workload-only lines, unique uuids)
// or a trace file's (each line also names a solution and an evaluation; a uuid may repeat).
enum class WorkloadLines { workload_file, trace_file };

// The errors the workload category gives each line of `file` (parsed) against `definition`, one
// vector per line in file order (empty for a line without errors).
std::vector<std::vector<CheckMessage>> workload_line_errors(const Definition& definition,
                                                            const std::filesystem::path& root,
                                                            const LoadedTraceFile& file,
                                                            WorkloadLines lines);
std::optional<CheckResult> check_solution(const DefinitionJob& job, const CategoryContext& context);
std::optional<CheckResult> check_trace(const DefinitionJob& job, const CategoryContext& context);
std::optional<CheckResult> check_baseline(const DefinitionJob& job, const CategoryContext& context);
// The result the benchmark phase left (nullopt when it did not run).
std::optional<CheckResult> check_benchmark(const DefinitionJob& job,
                                           const CategoryContext& context);

// fib's dataset-level section: files no definition's report covers (orphans, shadowed, misplaced
// and unread files).
CheckResult check_dataset_level(const DatasetScan& scan, const std::filesystem::path& root);

// --- Loading (dataset_load.cpp) ---

// Reads and parses the file of `out.entry` into `out`.
void load_definition(LoadedDefinition& out);
// Reads and parses a JSON Lines file; one bad line fails the whole file, as in the old tool.
void load_trace_file(LoadedTraceFile& out);
void load_solution(LoadedSolution& out);
// The same, from the file's text as read_text_file gave it (or its read error).
void load_definition(LoadedDefinition& out, const Expected<std::string>& text);
void load_trace_file(LoadedTraceFile& out, const Expected<std::string>& text);
void load_solution(LoadedSolution& out, const Expected<std::string>& text);

// True when `d` is an error of a check the old tool has (origin legacy in the codes table).
bool is_legacy_error(const Diagnostic& d);

// The old tool's str(ValidationError) of `errors` for `model`: a count line, then a dotted
// location and a message per field-level error, "Value error, <message>" without a location per
// model-level one (ErrorScope::model in the codes table).
std::string validation_error_text(std::string_view model, const std::vector<Diagnostic>& errors);

// The dumper's `init` source of a definition ("" when it has none).
std::string init_source(const LoadedDefinition& definition);

// --- Worker phases (one thread: one worker for the whole run) ---

// The reference build (and smoke run) of a loaded definition, into job.reference_messages. The
// first time the worker cannot be used with `requested` (--exec/--smoke), that diagnostic goes to
// `environment` and `unavailable_reported` is set.
void run_reference_phase(DefinitionJob& job, ReferenceChecks checks, ReferenceRunner& runner,
                         bool requested, bool& unavailable_reported, DiagnosticSink& environment);
// Builds the parsed baseline solutions, into job.baseline_build_messages.
void run_baseline_builds(DefinitionJob& job, ReferenceRunner& runner,
                         const std::filesystem::path& cache, const std::filesystem::path& root);
// The benchmark category, into job.benchmark: every parsed baseline solution and the reference
// (as a pseudo-solution) on every workload.
void run_benchmark_phase(DefinitionJob& job, ReferenceRunner& runner,
                         const EvaluateOptions& evaluate);

// --- Shared helpers (dataset_job.cpp) ---

// "[fib] " + text: the mark of fib's own messages.
std::string fib_message(std::string_view text);

// User text echoed in fib's messages, cut to 80 bytes like fib::json_excerpt (77 and "..."),
// never inside a UTF-8 sequence.
std::string excerpt(std::string_view text);

// True when a blob path names a file outside the dataset root: absolute, or with a ".." part.
bool points_outside(const std::string& blob_path);

// Where a message about `file` points: its path below `root` ('/'-separated), then `line` (0 when
// unknown) and `pointer`.
MessageLocation location_in(const ScannedFile& file, const std::filesystem::path& root,
                            int line = 0, std::string pointer = {});

// Gives every message of `result` that names no file `file` (the category's own file).
void locate_unplaced(CheckResult& result, const ScannedFile& file,
                     const std::filesystem::path& root);

// True for the diagnostics that say the reference worker cannot be used at all.
bool is_worker_unusable(const Diagnostic& d);

// Each blob's header, read at most once per definition (the workload checks and the constraint
// environment both need it). Keyed by the full path the blob is read from.
using HeaderCache = std::map<std::filesystem::path, Expected<SafetensorsHeader>>;
const Expected<SafetensorsHeader>& cached_header(HeaderCache& cache,
                                                 const std::filesystem::path& full);

// The uuids of the job's workload file (empty when it is absent or did not parse).
std::set<std::string> workload_uuids(const DefinitionJob& job);

// The file stems of the job's solutions that parsed.
std::set<std::string> parsed_solution_names(const DefinitionJob& job);

// The job's solutions by the `baseline` author (parsed or not), in path order.
std::vector<const LoadedSolution*> baseline_solutions(const DefinitionJob& job);

} // namespace fib::dataset_checks
