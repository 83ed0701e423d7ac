#pragma once
// What the dumped calls of a definition's API show about it: the dtype and shape of the tensor
// each call gave each input. `fib normalize --evidence DUMP` repairs raw definitions with it
// (rules R1, R2 and R3 of docs/normalize.md), where the dumper could not see or misread a value.

#include <fib/collect/level10.hpp>
#include <fib/io/json_io.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

struct CapturedTensor {
  std::string dtype; // fib's spelling ("bfloat16", "int32"), or the file's when fib has none
  std::vector<std::int64_t> shape;
};

// One call of the definition's API, with the tensors and the other values it bound to the
// definition's inputs (by the rules of bind_call, fib/collect/binding.hpp).
struct CapturedCall {
  std::string call; // DumpedCall::name
  std::map<std::string, CapturedTensor> inputs;
  // Inputs passed as a value and not as a tensor: a Python number or bool, or FlashInfer's
  // object for an enum or a dtype (BoundValue::value). An input passed as None is in neither map.
  std::map<std::string, Json> values;
};

// The calls of `dump` that belong to `definition`, a raw definition document (dtypes may be
// `unknown`, axes may lack values): a workload call of an API its `fi_api:` tags name (with the
// paired plan for a wrapper run), whose bound tensors have the declared ranks and agree with
// every const axis that has a value, except those in `unchecked_axes` (the ones a repair is
// about). Calls that cannot be bound are left out; an unreadable document gives none.
std::vector<CapturedCall> captured_calls(const Level10Dump& dump, const Json& definition,
                                         const std::set<std::string>& unchecked_axes);

} // namespace fib
