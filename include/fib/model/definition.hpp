#pragma once
// Definition: the kernel specification (name, op_type, axes, inputs, outputs, reference,
// constraints, tags), its parser and derived helpers.

#include <fib/base/diagnostic.hpp>
#include <fib/base/expected.hpp>
#include <fib/io/dtype.hpp>
#include <fib/io/json_io.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fib {

// --- Interface ---

// Key order matters in a Definition (inputs are the kernel's positional arguments), so maps are
// ordered vectors of (key, value).
template <class T> using OrderedMap = std::vector<std::pair<std::string, T>>;

// Finds `key` in an OrderedMap; nullptr when absent.
template <class T> const T* find_entry(const OrderedMap<T>& map, std::string_view key) {
  for (const auto& [name, value] : map) {
    if (name == key) {
      return &value;
    }
  }
  return nullptr;
}

enum class AxisKind { const_axis, var_axis };

// AxisConst (`value` ≥ 0, zero allowed) or AxisVar. `value` is 0 for var axes.
struct Axis {
  AxisKind kind = AxisKind::var_axis;
  std::int64_t value = 0;
  std::optional<std::string> description;
};

// A tensor or scalar argument. `shape` nullopt is a Python scalar; an empty vector is a 0-D tensor.
struct TensorSpec {
  std::optional<std::vector<std::string>> shape;
  DType dtype = DType::float32;
  std::optional<std::string> description;

  bool is_scalar() const { return !shape.has_value(); }
};

struct Definition {
  std::string name;
  std::string op_type;
  OrderedMap<Axis> axes;
  OrderedMap<TensorSpec> inputs;
  OrderedMap<TensorSpec> outputs;
  std::string reference;
  std::vector<std::string> tags;
  std::optional<std::string> description;
  std::vector<std::string> constraints;

  // name → value of every const axis.
  std::map<std::string, std::int64_t> const_axes() const;
  // Names of var axes in declaration order.
  std::vector<std::string> var_axes() const;
  // Each var axis → (first input whose shape uses it, dimension index). Scalars are skipped.
  std::map<std::string, std::pair<std::string, std::size_t>> var_axes_bindings() const;
};

// A concrete shape, or nullopt for a Python scalar.
using ConcreteShape = std::optional<std::vector<std::int64_t>>;

// One entry per input (in order): const values, or the given var values. Error
// `shape.missing-axis-value` "Missing value for variable axis '{a}'".
Expected<std::vector<ConcreteShape>>
input_shapes(const Definition& definition, const std::map<std::string, std::int64_t>& var_values);
Expected<std::vector<ConcreteShape>>
output_shapes(const Definition& definition, const std::map<std::string, std::int64_t>& var_values);

// Var axis values read off actual input shapes (scalars, i.e. nullopt, are skipped). Errors:
// `shape.rank-mismatch`, `shape.axis-conflict`, `shape.missing-axes` with the old tool's wording.
Expected<std::map<std::string, std::int64_t>> axes_values(const Definition& definition,
                                                          const std::vector<ConcreteShape>& shapes);

// Fills missing positional arguments (inputs then outputs) from keyword arguments, stopping at
// the first parameter not given by keyword. Errors: `call.too-many-arguments`,
// `call.duplicate-argument`.
Expected<std::vector<Json>> merge_kwargs_to_args(const Definition& definition,
                                                 std::vector<Json> args,
                                                 const OrderedMap<Json>& kwargs);

// Builds a Definition from a parsed document, reporting every field problem to `sink` with its
// pointer. Checks done here are the old tool's schema checks that need no Python: required keys,
// types, lax coercions (warned), dtypes, axis unions, input/output overlap, undefined axes,
// expression shape entries, unknown keys (notes). The returned value holds what could be read; it
// is meaningful when `sink` got no error for this document.
Definition parse_definition(const JsonDocument& document, DiagnosticSink& sink);

// fib's own advisory checks on a definition that parsed: unbound var axes (warning), unused axes
// (note), tag syntax (note), two values of a single-valued tag namespace (tag.conflict, warning,
// at the later tag; tag_vocabulary.hpp) and the old tool's missing-description warnings.
void lint_definition(const Definition& definition, const JsonDocument& document,
                     DiagnosticSink& sink);

// The definition as JSON in the old tool's save order, omitting unset optional fields.
Json to_json(const Definition& definition);

} // namespace fib
