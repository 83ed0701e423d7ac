#pragma once
// `fib dump`: runs a command with FlashInfer's trace dumper switched on, collects what it wrote,
// and, with a dataset to stage into, normalizes, stages, tags and validates the result in the
// same run (docs/dump.md).
//
// FlashInfer's dumper reads FLASHINFER_TRACE_DUMP and FLASHINFER_TRACE_DUMP_DIR at every traced
// call and has no default directory; the child gets both in its environment before it starts, so
// before any import. Its writes are plain (not atomic) and happen before the kernel runs, so a
// crash can leave a truncated file: every file is checked and a bad one is reported by name, never
// fatal.

#include <fib/base/diagnostic.hpp>
#include <fib/base/enum_names.hpp>
#include <fib/base/expected.hpp>
#include <fib/collect/collect.hpp>
#include <fib/model/python_checks.hpp>
#include <fib/normalize/normalize.hpp>
#include <fib/stage/stage.hpp>
#include <fib/tag/tags.hpp>
#include <fib/util/subprocess.hpp>
#include <fib/validate/report.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

inline constexpr std::string_view k_trace_dump_variable = "FLASHINFER_TRACE_DUMP";
inline constexpr std::string_view k_trace_dump_dir_variable = "FLASHINFER_TRACE_DUMP_DIR";

// What a file of the dump directory looked like, to tell new and rewritten dumps from old ones.
struct FileStamp {
  std::uintmax_t size = 0;
  std::filesystem::file_time_type modified;
  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};
using DumpSnapshot = std::map<std::string, FileStamp>; // file name → stamp (*.json only)

enum class ExistingDumps { keep, clean };

// The subdirectory of the dump directory that `fib dump --workloads` gives FlashInfer's Level-10
// logging (FLASHINFER_DUMP_DIR).
inline constexpr std::string_view k_level10_directory = "level10";

// Whether the dump directory also holds a Level-10 dump (k_level10_directory).
enum class Level10Directory { absent, beside };

// Creates `directory` when missing. ExistingDumps::clean removes its *.json files, but only when
// it holds nothing else (no other file, no subdirectory, no link): otherwise nothing is removed
// and the error is `dump.not-clean`, naming what is in the way. With Level10Directory::beside, a
// `level10/` subdirectory holding only Level-10 call directories and session.jsonl is not in the
// way, and a clean removes it whole. Returns the *.json files left (empty after a clean). Errors:
// `dump.not-clean`, `io.write` (cannot create or clean), `io.read`.
Expected<DumpSnapshot> prepare_dump_directory(const std::filesystem::path& directory,
                                              ExistingDumps existing,
                                              Level10Directory level10 = Level10Directory::absent);

// --- Workloads from the same pass (`fib dump --workloads`) ---

struct WorkloadDump {
  // FLASHINFER_DUMP_INCLUDE patterns (fnmatch on the logged name); empty: every API.
  std::vector<std::string> include;
  std::int64_t max_count = 50'000; // FLASHINFER_DUMP_MAX_COUNT, per process
  double max_size_gb = 30;         // FLASHINFER_DUMP_MAX_SIZE_GB, per process
  CollectOptions collect;          // selection and storage; dumps and dataset are filled in
};

// The environment that turns on FlashInfer's Level-10 tensor dumps into `directory` for a child:
// FLASHINFER_LOGLEVEL=10, FLASHINFER_DUMP_DIR, FLASHINFER_DUMP_SAFETENSORS=1,
// FLASHINFER_DUMP_INCLUDE (when patterns are given), FLASHINFER_DUMP_EXCLUDE=*.__init__ (wrapper
// constructors receive the workspace buffers), FLASHINFER_DUMP_MAX_COUNT and
// FLASHINFER_DUMP_MAX_SIZE_GB. FlashInfer reads them once, at import.
std::vector<std::pair<std::string, std::string>>
level10_environment(const std::filesystem::path& directory, const WorkloadDump& workloads);

enum class DumpFileState {
  created,   // not there before the run
  rewritten, // there before, written again (a later process re-dumps: no cross-process dedup)
  kept,      // there before and untouched by this run
};

template <> struct EnumNames<DumpFileState> {
  static constexpr std::array k_table = std::to_array<EnumName<DumpFileState>>({
      {DumpFileState::created, "new"},
      {DumpFileState::rewritten, "rewritten"},
      {DumpFileState::kept, "kept"},
  });
};

// "new", "rewritten", "kept".
inline std::string_view to_string(DumpFileState state) {
  return enum_name(state);
}

struct DumpedFile {
  std::filesystem::path file;
  DumpFileState state = DumpFileState::created;
  std::string name;    // from the JSON; "" when it could not be read
  std::string op_type; // from the JSON; "" when it could not be read
  // Why the file is unusable (`json.parse` for a truncated write, `stage.not-a-definition`, …).
  std::optional<Diagnostic> problem;
};

// The *.json files of `directory` (sorted), each compared with `before` and parsed.
std::vector<DumpedFile> collect_dump(const std::filesystem::path& directory,
                                     const DumpSnapshot& before);

// --- The SGLang harness: one short SGLang generation that dumps what it traces ---

// What one run of the harness serves. Each pass needs its own engine settings, so each is its own
// child run (spec'd in docs/dump.md, "Passes and page sizes").
enum class HarnessPass {
  // Fresh prompts, radix cache off, piecewise CUDA graphs off: prefill goes through the ragged
  // path, then decode; with workloads, batches of every size and the sampling passes.
  serve,
  // Requests that share a cached prefix, radix cache on, deterministic inference on (which turns
  // the ragged prefill path off): prefill goes through the paged KV cache.
  paged_prefill,
};

template <> struct EnumNames<HarnessPass> {
  static constexpr std::array k_table = std::to_array<EnumName<HarnessPass>>({
      {HarnessPass::serve, "serve"},
      {HarnessPass::paged_prefill, "paged-prefill"},
  });
};

// "serve", "paged-prefill".
inline std::string_view to_string(HarnessPass pass) {
  return enum_name(pass);
}

struct SglangHarness {
  std::string model;            // Hugging Face id or local path
  int tp = 1;                   // tp_size
  std::optional<int> ep;        // ep_size, when given
  std::optional<int> page_size; // page_size, when given
  HarnessPass pass = HarnessPass::serve;
  std::string prompt = "The capital of France is";
  int max_new_tokens = 4;
  double mem_fraction = 0.5;            // mem_fraction_static
  std::filesystem::path dump_directory; // absolute
  // `fib dump --workloads`: the pass also serves batches of every size in `batch_sizes` (greedy)
  // and sampling passes, with FlashInfer's sampling backend, so that the Level-10 dump holds calls
  // of many shapes and of the sampling kernels.
  bool workloads = false;
  std::vector<int> batch_sizes = {1, 4, 16, 64};
};

// A Python script that sets the dumper's variables (and SGLang's and FlashInfer's version-check
// and CUDA-norm switches, unless already set) before any import, starts an SGLang Engine with
// attention_backend "flashinfer" and CUDA graphs disabled, generates, and shuts the engine down.
// The engine arguments the installed SGLang does not take (not an init field of its ServerArgs)
// are left out with a line on stderr, rather than failing the run.
// - HarnessPass::serve: radix cache and piecewise CUDA graphs disabled; one greedy generate from
//   the prompt. With `workloads`, sampling_backend "flashinfer" too, a batch of distinct prompts
//   (different lengths) for each of `batch_sizes` (greedy), then three sampling passes
//   (temperature 0.7 with top_k 50 and top_p 0.9, top_k 50 alone, top_p 0.9 alone) so that the
//   top-k/top-p sampling kernels are called.
// - HarnessPass::paged_prefill: the radix cache on and enable_deterministic_inference (no ragged
//   prefill); a prefix made of the prompt repeated max(8, 2 * page_size) times is generated once,
//   then requests that extend it, one new token each. Without `workloads`, one round of 4
//   requests; with it, a round per batch size and per prefix length (that many repeats, and 4
//   times as many).
// Each pass prints `fib harness: pass <describe_run>` first ("serve, page size 16"). Every user
// value is written as a Python literal (strings through repr rules), so no value can break out of
// its literal.
std::string render_sglang_harness(const SglangHarness& harness);

// The option of the first of `harness`'s text values that is not valid UTF-8 ("--model",
// "--prompt", "--out" for dump_directory), which render_sglang_harness could only write with
// replacement characters; nullopt when all are valid.
std::optional<std::string_view> harness_value_not_utf8(const SglangHarness& harness);

// One child run of `fib dump --sglang`: the harness's pass at one page size (nullopt: the
// engine's default).
struct SglangRun {
  HarnessPass pass = HarnessPass::serve;
  std::optional<int> page_size;
  friend bool operator==(const SglangRun&, const SglangRun&) = default;
};

// Every page size (in the order given; none: the engine's default) crossed with every pass (in
// the order given), page size first: ps1 serve, ps1 paged-prefill, ps16 serve, … Duplicates are
// left out.
std::vector<SglangRun> plan_sglang_runs(const std::vector<HarnessPass>& passes,
                                        const std::vector<int>& page_sizes);

// "serve, page size 16", "paged-prefill, default page size".
std::string describe_run(const SglangRun& run);

// `model:<slug>` for a model id: the last path segment, lower-cased, with runs of characters
// other than [a-z0-9._-] turned into '-' ("meta-llama/Llama-3.2-3B-Instruct" →
// "llama-3.2-3b-instruct"); "" when nothing is left.
std::string model_slug(std::string_view model);

// --- The whole run ---

enum class DumpSource { command, sglang };

struct DumpOptions {
  std::filesystem::path out; // the dump directory (made absolute for the child)
  ExistingDumps existing = ExistingDumps::keep;
  std::optional<std::chrono::milliseconds> timeout;
  DumpSource source = DumpSource::command;
  std::vector<std::string> command; // DumpSource::command
  // DumpSource::sglang: the settings every run shares (dump_directory, pass and page_size are
  // filled in per run), and the runs, one child each, in order.
  SglangHarness sglang;
  std::vector<SglangRun> sglang_runs = {SglangRun{}};
  std::string python = "python3"; // runs the SGLang harness
  // Stage (and optionally normalize) what this run dumped into `dataset`, tag it, and validate
  // exactly those definitions. Empty: stop after the dump.
  std::filesystem::path dataset;
  StageNormalize normalize = StageNormalize::no;
  NormalizeOptions normalize_options;
  std::vector<std::string> tags; // checked with check_tag_operands by the caller
  // How staging treats conflicts, which dumped files it leaves out, and overwrites (StageOptions).
  OnConflict on_conflict = OnConflict::fail;
  std::vector<std::string> exclude;
  OverwriteBreaking overwrite_breaking = OverwriteBreaking::refuse;
  CuratedFields curated = CuratedFields::keep;
  // Also dump the API calls' tensors (Level-10) into out/level10 and, with a dataset, collect
  // workloads for the definitions this run staged. nullopt: definitions only.
  std::optional<WorkloadDump> workloads;
};

struct DumpRun {
  std::string label; // describe_run for --sglang; "" for a command
  ChildOutcome child;
};

// How the runs ended: "exit status 0" for one run; "serve, page size 1: exit status 0;
// paged-prefill, page size 1: exit status 1" for several.
std::string describe_runs(const std::vector<DumpRun>& runs);

struct DumpResult {
  std::filesystem::path out; // absolute
  // One per child run, in order (a command: one; --sglang: one per SglangRun, up to the first
  // that could not start or was interrupted).
  std::vector<DumpRun> runs;
  std::vector<DumpedFile> files;
  // Problems of the run itself: `dump.child-failed`, `dump.timeout`, `dump.nothing-dumped` (with
  // the likely causes in its hint), `dump.left-processes`, `child.launch-failed`, `dump.not-clean`,
  // I/O.
  std::vector<Diagnostic> diagnostics;
  // Staging, tagging and validation, when a dataset was given and something usable was dumped.
  std::optional<StageResult> staged;
  std::optional<TagSummary> tagged;
  std::vector<TaggedFile> tagged_files;
  std::optional<DatasetReport> validation;
  std::vector<Diagnostic> validation_environment;
  // With workloads: the collection (when a dataset was given and definitions were staged) and its
  // diagnostics (refused calls, debris of the dump).
  std::optional<CollectReport> collected;
  std::vector<Diagnostic> collect_diagnostics;
};

// Called as the run advances, for progress lines ("running: …", "staging 12 definitions").
using DumpProgress = std::function<void(std::string_view)>;

// Prepares the directory, runs the child (or the generated harness for each of `sglang_runs`, each
// written to a temporary file outside the dump directory and removed afterwards; `timeout` applies
// to each run; a run that fails is reported and the next one still runs, but one that cannot
// start, or that fib's own SIGINT/SIGTERM/SIGHUP interrupted, ends the sequence), collects the
// dump, and with a dataset stages the files created or rewritten by this run (normalized when
// asked), adds the tags to the staged definitions, and validates them (layout and definition
// checks), asking `python` what those steps need (it is not used otherwise). Never throws.
DumpResult run_trace_dump(const DumpOptions& options, PythonFrontend& python,
                          const DumpProgress& progress);

// What the caller maps to an exit status: every diagnostic of the run itself, plus the
// environment errors (I/O, Python) of staging, tagging and validation, whose findings are
// dump_found_problems instead.
DiagnosticCounts count_dump_diagnostics(const DumpResult& result);

// Whether something dumped, staged, tagged or validated is wrong: an invalid dump file, a staging
// conflict or rejection, a file whose tags could not be edited, a definition that does not
// validate.
bool dump_found_problems(const DumpResult& result);

} // namespace fib
