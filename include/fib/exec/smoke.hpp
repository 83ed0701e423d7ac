#pragma once
// The plan of a reference smoke run (docs/execution.md): tiny values for the var axes that honour
// the definition's constraints, and for every input how to fill it, so that the worker only has
// to materialize tensors. Pure computation: no torch, no Python.
//
// Axis values: every var axis starts at k_smoke_base_axis_value. Constraints of the form
// `axis == <expression over axes>` (either side) set that axis; inequalities between axes that
// fail are repaired by doubling the var axes they read (a bounded search); constraints that read
// tensor data (`kv_indptr[-1].item()`) decide how index tensors are filled: an `*indptr` input
// runs from 0 to the value of the axis it is compared with. What cannot be satisfied is a skip
// with the constraint named, never a guess.

#include <fib/base/enum_names.hpp>
#include <fib/base/expected.hpp>
#include <fib/io/dtype.hpp>
#include <fib/io/json_io.hpp>
#include <fib/model/definition.hpp>
#include <fib/model/workload.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fib {

// --- Interface ---

inline constexpr std::int64_t k_smoke_base_axis_value = 4;

enum class InputFill {
  random_normal, // floats: randn with the job's seed
  probabilities, // floats named like probabilities: softmax of randn over the last dimension
  random_bool,   // bools: random
  index_pointer, // 1-D, monotone from 0 to `total`, evenly spread (an indptr)
  indices,       // values in [0, bound)
  lengths,       // every value 1 (a valid length or count; at most any page size)
  zeros,         // other integer tensors
  scalar,        // a Python scalar: `scalar_value` as int, float or bool by dtype
  safetensors,   // read from `file` (tensor `key`) with fib's own safetensors reader
};

// The spellings of the worker protocol.
template <> struct EnumNames<InputFill> {
  static constexpr std::array k_table = std::to_array<EnumName<InputFill>>({
      {InputFill::random_normal, "random_normal"},
      {InputFill::probabilities, "probabilities"},
      {InputFill::random_bool, "random_bool"},
      {InputFill::index_pointer, "index_pointer"},
      {InputFill::indices, "indices"},
      {InputFill::lengths, "lengths"},
      {InputFill::zeros, "zeros"},
      {InputFill::scalar, "scalar"},
      {InputFill::safetensors, "safetensors"},
  });
};

// "random_normal", "probabilities", "random_bool", "index_pointer", "indices", "lengths",
// "zeros", "scalar", "safetensors".
inline std::string_view to_string(InputFill fill) {
  return enum_name(fill);
}

struct PlannedInput {
  std::string name;
  std::vector<std::int64_t> shape;     // empty for scalars (and 0-D tensors)
  std::vector<std::string> axis_names; // the definition's names of the dimensions
  bool scalar = false;
  DType dtype = DType::float32;
  InputFill fill = InputFill::zeros;
  std::int64_t total = 0; // index_pointer: the last value
  std::int64_t bound = 1; // indices: values are below this
  double scalar_value = 0;
  std::string file; // safetensors: the blob (absolute or relative to the working directory)
  std::string key;  // safetensors: the tensor's name in it
};

struct PlannedOutput {
  std::string name;
  // nullopt for an axis no input determines (an output-only var axis): any size is accepted,
  // consistently across outputs.
  std::vector<std::optional<std::int64_t>> shape;
  std::vector<std::string> axis_names; // the definition's names, for messages
  bool scalar = false;
  DType dtype = DType::float32;
};

struct SmokePlan {
  std::map<std::string, std::int64_t> axes; // every axis, const and var
  std::vector<PlannedInput> inputs;
  std::vector<PlannedOutput> outputs;
  std::uintmax_t input_bytes = 0;  // Σ elements × itemsize of the inputs
  std::uintmax_t output_bytes = 0; // the same for the outputs whose shape is known
  // Constraints the plan could not check (they read something it does not model).
  std::vector<std::string> unchecked_constraints;
};

// Bytes per element as torch stores it (float4_e2m1 packed two per byte counts as 1).
std::size_t dtype_size(DType dtype);

// Plans the smoke run. Error (`smoke.skipped`, a note): the constraints cannot be met by the
// search, naming the constraint and the values tried.
Expected<SmokePlan> plan_smoke_run(const Definition& definition);

// The plan of one workload of a definition (`fib run`): its var axis values, random inputs filled
// like the smoke run's (index tensors valid), scalars with the workload's value, safetensors
// inputs read from `dataset_root / path` (an absolute path as is). Errors: `shape.missing-axes`
// when the workload lacks a var axis, `call.duplicate-argument`-free: an input the workload does
// not give is `shape.missing-axis-value`.
Expected<SmokePlan> plan_workload_run(const Definition& definition, const Workload& workload,
                                      const std::filesystem::path& dataset_root);

// The plan as the worker request carries it, and back. from_json errors are `worker.protocol`.
Json to_json(const SmokePlan& plan);
Expected<SmokePlan> smoke_plan_from_json(const Json& json);

} // namespace fib
