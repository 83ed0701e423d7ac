#pragma once
// A workload candidate made from one dumped call: its axes, and for each definition input how the
// workload holds it (a tensor from the call stored as a blob, `random`, or a scalar from the call),
// with a fingerprint of everything that makes two workloads the same (docs/collect.md, "What a
// workload holds").

#include <fib/base/expected.hpp>
#include <fib/collect/binding.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>
#include <fib/model/workload.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

// Largest tensor kept as a blob (bytes). A larger integer tensor (a packed KV cache, say) is
// generated at run time instead (`random`, with a `collect.blob-too-large` warning); index
// buffers are far below it.
inline constexpr std::uint64_t k_default_max_blob_tensor_bytes = 64ull << 20;

// A value the user gave for a scalar input that the dump does not hold (`--scalar NAME=VALUE`):
// for `definition` ("" for every definition), the input `input`.
struct ScalarAnswer {
  std::string definition;
  std::string input;
  Json value; // a number or a bool
};

// The answer of `--scalar TEXT`: "NAME=VALUE" or "DEFINITION:NAME=VALUE", VALUE a JSON number or
// true/false. Errors: `usage`, saying what is wrong and the form.
Expected<ScalarAnswer> parse_scalar_answer(const std::string& text);

struct CandidateOptions {
  std::vector<ScalarAnswer> scalars;
  std::uint64_t max_blob_tensor_bytes = k_default_max_blob_tensor_bytes;
};

// A tensor of the call that the workload keeps: which bytes of which file, and its shape.
struct BlobTensorSource {
  std::string input; // the definition input, which is also its key in the workload's blob
  std::filesystem::path file;
  std::string key;   // its key in `file`
  std::string dtype; // safetensors spelling
  std::vector<std::int64_t> shape;
  std::uint64_t bytes = 0; // the first `bytes` bytes of the tensor's data
  std::string sha256;      // of those bytes, when the candidate was built
};

struct Candidate {
  std::string call;              // the run's DumpedCall::name
  std::string plan;              // the paired plan's name, "" when none
  OrderedMap<std::int64_t> axes; // every var axis, in definition order
  OrderedMap<InputSpec> inputs;  // in definition order; a blob input's SafetensorsInput has its
                                 // tensor_key set and its path empty until it is written
  std::vector<BlobTensorSource> blobs; // in definition order
  std::vector<Diagnostic> notes;       // warnings that did not refuse it (collect.blob-too-large)
  std::string fingerprint; // workload_fingerprint of axes and inputs (blob contents by digest)
};

// What a workload input holds, for fingerprints: "random", "scalar:<JSON>" or
// "blob:<dtype>:<shape JSON>:<sha256 of the bytes>".
struct InputContent {
  std::string input;
  std::string text;
};

// The hex SHA-256 of the axes (in the given order) and the input contents: two workloads with the
// same fingerprint run the definition on the same data.
std::string workload_fingerprint(const OrderedMap<std::int64_t>& axes,
                                 const std::vector<InputContent>& inputs);

// The candidate `run` (with `plan`, may be null) makes for `definition`. Storage by the
// definition's dtype: a scalar input (shape null) is the call's value, or else the user's answer
// (ScalarAnswer); a float tensor (float32, float16, bfloat16, float8, float4) is `random` (its
// shape comes from the axes, its values are the benchmark's); any other tensor is a blob of the
// bound tensor (cut as the binding says), except that every tensor of a `sampling` definition is a
// blob (probabilities and per-row thresholds are data the kernel's result depends on). Refusals
// (the call is not a workload of the definition), each with the definition input's pointer:
// - `collect.axis-mismatch` / `collect.axis-unbound` from infer_axes;
// - `collect.binding-invalid` from bind_call;
// - `collect.dtype-mismatch`: a bound tensor's dtype is not the declared one;
// - `collect.input-missing`: a tensor that must be a blob is in neither call (for a wrapper,
//   usually because no plan of the same object was dumped before the run);
// - `collect.scalar-missing`: a scalar that neither call holds and the user did not answer; fib
//   never makes up a value, the message says how to give one;
// - `collect.scalar-invalid`: the recorded value is not a number or a bool;
// - `collect.tensor-file`: a blob tensor cannot be read.
Expected<Candidate> build_candidate(const Definition& definition, const DumpedCall& run,
                                    const DumpedCall* plan, const CandidateOptions& options);

} // namespace fib
