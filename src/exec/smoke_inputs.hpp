#pragma once
// The index semantics of smoke-run inputs (docs/execution.md, "Synthesized inputs"), read off
// input names and the definition's axes: what an index tensor indexes, how long the array an
// index pointer spans is, and sensible values for scalars. Pure computation, used by smoke.cpp.

#include <fib/exec/smoke.hpp>
#include <fib/model/definition.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace fib::detail {

// --- Interface ---

using AxisValues = std::map<std::string, std::int64_t>;

// How an integer tensor is filled, from its name: `*indptr*`/`cu_seqlens*` index_pointer;
// `*indices*`, `*index*`, `*ids*`, `*table*` indices; `*len*`, `*count*` lengths; anything
// else (positions, offsets, masks) zeros.
InputFill integer_fill(const std::string& name);

// The exclusive upper bound of the values of index tensor `name`: the size of the axis it
// indexes, by the stem of its name (batch → batch_size/num_seqs, expert → num_experts,
// token/input ids → vocab_size, pos/position → max_seq_len, state → state_cache_size), else
// the page count (num_pages, max_num_pages, num_blocks, total_num_pages); 1 (all zeros, always
// in range) when the definition has none of them.
std::int64_t index_bound(const std::string& name, const AxisValues& axes);

// The last value of index pointer `name` when no constraint gives it: the length of the array
// it spans (its shape's first axis): `<p>_indptr` spans `<p>_indices`; `qo_indptr` spans q,
// `kv_indptr` k or v; otherwise the first floating-point input whose first axis is a var axis
// other than the pointer's own. nullopt when none is found.
std::optional<std::int64_t> spanned_length(const Definition& definition, const std::string& name,
                                           const AxisValues& axes);

// The value of a Python scalar input: an int named like an axis gets the axis value
// (`rotary_dim`, else head_dim for it); an int whose name is followed by digits in the
// definition's name gets them (`block_size` in gemm_..._block_size16 → 16); `*offset*` 0; other
// ints 1; bools false; floats: eps 1e-6, theta 10000, scale/factor/temperature 1, top_p 0.9,
// otherwise 0.5.
double scalar_value(const Definition& definition, const std::string& name, DType dtype,
                    const AxisValues& axes);

bool is_integer_dtype(DType dtype);

} // namespace fib::detail
