#pragma once
// The values a constraint expression computes with: Python's None, bool, int (64-bit), float,
// str, tuple and list, plus references to the workload's tensors; and their Python repr().
// Private to src/constraint.

#include <fib/constraint/constraint.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace fib::constraint_detail {

// --- Interface ---

// Echoed expression text and values are cut at this many bytes (house message style).
inline constexpr std::size_t k_echo_limit = 80;

struct Value;

enum class SequenceKind { tuple, list };

struct Sequence {
  SequenceKind kind = SequenceKind::tuple;
  std::vector<Value> items;
};

struct TensorRef {
  std::string_view name; // a key of ConstraintEnvironment::tensors, which outlives evaluation
  const TensorFacts* facts = nullptr;
};

// A 0-d tensor: element `index` of a 1-D tensor. torch gives a tensor here, not a number; it
// behaves as a number once its data is known.
struct ElementRef {
  TensorRef tensor;
  std::size_t index = 0;
};

struct Value {
  std::variant<std::monostate, bool, std::int64_t, double, std::string, Sequence, TensorRef,
               ElementRef>
      data;
};

Value make_int(std::int64_t v);
Value make_float(double v);
Value make_bool(bool v);

bool is_none(const Value& v);

// Python's type name: "NoneType", "bool", "int", "float", "str", "tuple", "list" or "Tensor".
std::string_view type_name(const Value& v);

// An int or a float, for arithmetic and comparisons.
struct Number {
  bool is_float = false;
  std::int64_t integer = 0;
  double floating = 0.0;
  double as_double() const { return is_float ? floating : static_cast<double>(integer); }
  // long double holds every int64 exactly on x86-64 and AArch64, so mixed int/float
  // comparisons through it are exact, as in Python.
  long double as_long_double() const {
    return is_float ? static_cast<long double>(floating) : static_cast<long double>(integer);
  }
};

// bool, int and float are numbers (bool is an int subclass in Python); nullopt for everything
// else. 0-d tensors must be resolved first.
std::optional<Number> as_number(const Value& v);

// `text` cut to at most `limit` bytes (never inside a UTF-8 sequence), with "..." when cut.
std::string cut(std::string text, std::size_t limit = k_echo_limit);

// Python's repr() of a float: shortest round-trip digits, fixed notation for exponents in
// [-4, 16), scientific with a two-digit exponent otherwise ("1e+16", "0.0001", "-0.0", "inf").
std::string python_float_repr(double d);

// The number of code points of UTF-8 `text`, which is what Python's len() counts.
std::size_t code_points(std::string_view text);

// Python's repr() of a str.
std::string python_str_repr(std::string_view text);

// A shape as a Python tuple: "(4, 8)", "(4,)", "()".
std::string shape_repr(const std::vector<std::int64_t>& shape);

// The product of `shape`, or nullopt for a negative dimension or a product over 64 bits.
std::optional<std::int64_t> checked_numel(const std::vector<std::int64_t>& shape);

// Element `index` of the tensor's data as a Python number (a float for a non-integral dtype);
// nullopt when the data is missing, does not match the shape, or an integral element is not a
// 64-bit integer.
std::optional<Value> known_element(const TensorRef& tensor, std::size_t index);

// Python's repr() of the value; tensors read "<tensor of shape (4,)>", a 0-d tensor "tensor(3)"
// (or "<0-d tensor>" when its data is unknown).
std::string repr(const Value& v);

} // namespace fib::constraint_detail
