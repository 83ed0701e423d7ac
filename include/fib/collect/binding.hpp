#pragma once
// Binding a definition's inputs to the values of one dumped call (and the plan that set it up):
// which argument of which call each input is, what the call gave for it, and the index buffers
// cut to the part in use (docs/collect.md, "Binding inputs").

#include <fib/base/expected.hpp>
#include <fib/collect/arguments.hpp>
#include <fib/collect/level10.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fib {

// --- Interface ---

// The call an argument is looked up in: the workload call itself, or the `plan` paired with it
// (paired_plan, fib/collect/api_target.hpp), which is where a wrapper receives its index buffers.
enum class CallRole { run, plan };

// One place a definition input may be found: an argument (or a tuple member) of one of the calls.
struct InputSource {
  CallRole role = CallRole::run;
  std::string argument; // "q", "paged_kv_cache[0]", "indptr" (parse_argument_ref's syntax)
};

// The places `input` of `definition` is looked for, in order; the first that the calls hold
// wins. Family rules come first (by op_type: for `gqa_paged`, k_cache is `paged_kv_cache[0]` of
// the run and kv_indptr is `indptr`, `paged_kv_indptr` or `kv_indptr` of the plan; `rmsnorm`'s
// hidden_states is `input`; `gdn`'s a and b are `g` and `beta`; …), then the input's own name in
// the run and in the plan, then the same name in lower case (gemm's `A` is the API's `a`).
std::vector<InputSource> input_sources(const Definition& definition, std::string_view input);

// A tensor the calls gave a definition input.
struct BoundTensor {
  std::string input;
  CallRole role = CallRole::run;
  std::string argument;            // the InputSource that found it
  std::string key;                 // its key in the call's inputs file
  std::filesystem::path file;      // that inputs.safetensors
  SafetensorsEntry entry;          // its header entry (dtype as the file spells it)
  std::vector<std::int64_t> shape; // as the definition sees it: after `used_elements` and a
                                   // restored size-1 dimension
  // When set, only the first `used_elements` elements are the input (an index buffer that the
  // paired indptr says is used only up to its last value).
  std::optional<std::int64_t> used_elements;
};

// A value that is not a tensor, as FlashInfer recorded it (a number, a bool, null, or an object
// such as {"type": "torch.dtype", "value": "torch.bfloat16"}).
struct BoundValue {
  std::string input;
  CallRole role = CallRole::run;
  std::string argument;
  std::string key; // its input_metadata key
  Json value;
};

// What the calls gave a definition's inputs. An input in neither list was not passed to either
// call (its default applied) or is not in the dump.
struct CallBinding {
  std::vector<BoundTensor> tensors; // in definition input order
  std::vector<BoundValue> values;   // in definition input order
  const BoundTensor* tensor(std::string_view input) const;
  const BoundValue* value(std::string_view input) const;
};

// Largest index buffer (in elements) whose values binding reads to cut its partner.
inline constexpr std::size_t k_max_indptr_elements = 1u << 24;

// Binds every input of `definition` to `run` (and `plan`, which may be null), trying
// input_sources in order. A tensor's shape is its header's, with two adjustments:
// - an index buffer is cut to the part in use: when the definition has both `kv_indptr` and
//   `kv_indices` and both are bound, kv_indices keeps its first kv_indptr[-1] elements (SGLang
//   over-allocates the buffer it passes to plan);
// - a tensor one dimension short of its declared rank, where the declared shape has exactly one
//   const axis of value 1, gets that dimension back (SGLang passes the paged KV cache of page
//   size 1 as [slots, heads, dim]).
// Errors (the call is not a workload of the definition): `collect.binding-invalid` when the
// indptr cannot be read, is not monotonic from 0, or ends past the indices buffer, with the
// definition input's pointer. The tensors' values are not read otherwise.
Expected<CallBinding> bind_call(const Definition& definition, const DumpedCall& run,
                                const DumpedCall* plan);

} // namespace fib
