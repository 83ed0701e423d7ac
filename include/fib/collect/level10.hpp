#pragma once
// Reading FlashInfer's Level-10 API dumps: what FlashInfer writes with FLASHINFER_LOGLEVEL=10 and
// FLASHINFER_DUMP_SAFETENSORS=1, one directory per API call, from which `fib collect` makes
// workloads (docs/collect.md describes the format and the states below).
//
// A dump root holds `<timestamp>_pid<pid>_<function>_call<NNNN>/` directories (and a
// session.jsonl, which the reader does not need: every record in it is also in a call's own
// metadata.jsonl). Each call directory has a metadata.jsonl whose last record is the call's
// state, an inputs.safetensors when the call had tensor arguments and an outputs.safetensors when
// its result held tensors. A call made during CUDA-graph capture has its tensors written at each
// replay into graph_flushes/flush_<k>/, which the reader returns as one call per flush.
//
// The reader never trusts the dump: every problem of a call is a Diagnostic about that call (with
// the file it is about), and the call is left out; nothing in a dump can make it fail as a whole
// except a root that is not a readable directory.

#include <fib/base/diagnostic.hpp>
#include <fib/io/json_io.hpp>
#include <fib/io/safetensors.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

// Largest metadata.jsonl read (a record's non-tensor arguments are cut at 1,000 characters each
// by FlashInfer, so a real one is a few kilobytes).
inline constexpr std::uintmax_t k_max_call_metadata_bytes = 16u << 20;

// A tensor file of a call: where it is and its checked header (read_safetensors_header).
struct DumpedTensorFile {
  std::filesystem::path path;
  SafetensorsHeader header;
};

// One completed, readable call.
struct DumpedCall {
  std::filesystem::path dir; // the directory its tensors are in (a flush's snapshot for graphs)
  std::string name;          // dir relative to the dump root, generic form
  std::string function_name; // "rmsnorm", "BatchDecodeWithPagedKVCacheWrapper.run", "run", …
  std::string module;        // "flashinfer.norm", … ("" when the record has none)
  // str(inspect.signature(f)) of the undecorated function ("" when the record has none); the
  // positions of `arg_<i>` keys are read from it (parse_function_signature).
  std::string function_signature;
  std::int64_t call_sequence = 0;
  std::string timestamp; // "20260101_120000_001" ("" for graph-flush records, which have none)
  std::int64_t process_id = 0;
  std::optional<std::string> self_id;    // decimal id(self), only for methods of *Wrapper* classes
  std::optional<int> graph_flush_index;  // k of graph_flushes/flush_<k>, for a captured call
  Json input_metadata = Json::object();  // the non-tensor arguments, by `arg_<i>` / `kwarg_<name>`
  Json output_metadata = Json::object(); // the non-tensor parts of the result
  std::vector<std::string> input_tensor_keys; // in the order FlashInfer saved them
  std::vector<std::string> output_tensor_keys;
  std::optional<DumpedTensorFile> inputs;  // present when input_tensor_keys is not empty
  std::optional<DumpedTensorFile> outputs; // present when output_tensor_keys is not empty
};

// A call left out, with why (its Diagnostic's code is one of the collect.* codes, its file the
// metadata.jsonl or tensor file concerned).
struct RejectedCall {
  std::string name;          // as DumpedCall::name
  std::string function_name; // "" when the metadata could not be read
  Diagnostic reason;
};

struct Level10Dump {
  std::vector<DumpedCall> calls;      // by name: time order at millisecond resolution
  std::vector<RejectedCall> rejected; // by name
};

// Reads the dump at `root`: one call when root/metadata.jsonl exists, else every directory
// directly below it, by name. Symbolic links are never followed (a linked entry, or a linked
// metadata or tensor file, is rejected with `collect.link-not-followed`). Each call's last metadata
// record decides its state:
// - `completed`: a call, once its tensor files hold every key the record lists;
// - `inputs_saved`: rejected, `collect.call-incomplete`;
// - `graph_capture_pending_flush` with no flush after it: rejected, `collect.graph-pending`;
// - a flushed capture: one call per graph_flushes/flush_<k>/ (each with its own record and
//   tensors; the root's files repeat the last flush and are not read);
// - `tensor_format` "torch": rejected, `collect.torch-format` (an error: fib reads only
//   safetensors dumps).
// A directory without metadata.jsonl gives `collect.no-metadata`; a cut last line
// `collect.metadata-cut` (an earlier record is not used instead: the call's last state is
// unknown); a record that is not JSON or lacks a required field `collect.metadata-invalid`; a
// tensor file that is missing, malformed or lacks a listed key `collect.tensor-file`.
// Errors: `collect.not-a-dump` when root does not exist, is not a directory or cannot be listed.
Expected<Level10Dump> read_level10_dump(const std::filesystem::path& root);

} // namespace fib
